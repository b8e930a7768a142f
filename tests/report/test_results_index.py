"""results/README.md indexes the committed runs, whose stores ship gzipped."""

from __future__ import annotations

import gzip
import shutil
from collections import Counter
from pathlib import Path

from nasrescale.cli.main import main
from nasrescale.report.results_index import VERDICT_PREFIXES, index_text, run_folders
from nasrescale.store.read import reading, store_path
from nasrescale.store.sqlite_store import Store

ROOT = Path(__file__).resolve().parents[2]
#: a retrain report's caveat on its budget, in bold like a headline but none
CAVEAT = "**What this budget cannot show.**"


def _protocols(run: Path) -> set[str]:
    """The protocol labels of a committed run's jobs."""
    with reading(run) as store:
        return {str(r["protocol"]) for r in store.rows()}


def test_the_index_lists_every_committed_run_with_its_headline() -> None:
    # (not an equality with index_text: a run being resumed reads its newer store.sqlite beside the .gz)
    results = ROOT / "results"
    index = (results / "README.md").read_text(encoding="utf-8")
    committed = sorted(p.parent for p in results.glob("*/store.sqlite.gz"))
    assert committed, "no committed run under results/"
    for run in committed:
        assert f"| [{run.name}]({run.name}/) |" in index, f"{run.name} missing: run `nasrescale report --index --results results`"
        # the first bold line or verdict bullet, but not the budget's caveat (a run of one protocol,
        # e.g. a recipe arm's runs, has no comparison to head it: its index entry is its table)
        heads = [ln for ln in (run / "report.md").read_text(encoding="utf-8").splitlines()
                 if ln.startswith(("**", *VERDICT_PREFIXES)) and not ln.startswith(CAVEAT)]
        assert heads or len(_protocols(run)) == 1, f"{run.name}: its report has no headline"
        assert not heads or heads[0] in index, f"{run.name}: the index's headline is stale"


def test_a_gzipped_validation_store_is_indexed_with_its_headline(tmp_path: Path) -> None:
    src = ROOT / "results" / "lr_validation_cnn_cpu"
    run = tmp_path / "cnn"
    run.mkdir()
    shutil.copy(src / "store.sqlite.gz", run)
    assert run_folders(tmp_path) == [run]
    text = index_text(tmp_path)
    assert "| [cnn](cnn/) | cifar10 |" in text
    assert "LR validation (no report yet" in text  # no report.md copied: the index says so
    shutil.copy(src / "report.md", run)
    assert "**CNN topologies and kernel sizes (Fig. 3)**: r (log LR) = " in index_text(tmp_path)
    assert (run / "store.sqlite").is_file()  # read from the copy unpacked beside the .gz
    assert run_folders(tmp_path) == [run]  # one folder, whichever form its store has


def test_any_store_reader_and_a_rerun_unpack_a_gzipped_store(tmp_path: Path) -> None:
    run = tmp_path / "results" / "lr_validation_cnn_cpu"
    run.mkdir(parents=True)
    shutil.copy(ROOT / "results" / "lr_validation_cnn_cpu" / "store.sqlite.gz", run)
    assert store_path("lr_validation_cnn_cpu", tmp_path / "results") == run / "store.sqlite"
    with reading(run) as store:
        statuses = Counter(r["status"] for r in store.rows())
    assert statuses == {"done": 241, "diverged": 7}  # the committed run: RUN.md
    with gzip.open(run / "store.sqlite.gz", "rb") as f:
        packed = f.read()
    assert (run / "store.sqlite").read_bytes() == packed  # unpacked as is, the .gz left beside it
    writable = Store(run / "store.sqlite")  # a rerun resumes the committed rows, not a new store
    assert len(writable.rows()) == 248
    writable.close()


def test_a_local_run_and_its_report_leave_the_committed_index_as_it_is(tmp_path: Path, capsys) -> None:
    results = tmp_path / "results"
    shutil.copytree(ROOT / "results" / "lr_validation_cnn_cpu", results / "lr_validation_cnn_cpu",
                    ignore=shutil.ignore_patterns("store.sqlite", "*.png"))
    from rank_store_builder import build_store

    build_store(results / "quickstart", n_archs=6, seeds=(0,))  # a local run: store.sqlite alone
    assert main(["report", "--index", "--results", str(results)]) == 0
    committed = (results / "README.md").read_bytes()
    assert b"lr_validation_cnn_cpu" in committed and b"quickstart" not in committed
    assert run_folders(results) == [results / "lr_validation_cnn_cpu"]
    capsys.readouterr()
    assert main(["report", "quickstart", "--results", str(results), "--bootstrap", "0"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"wrote {results / 'quickstart' / 'report.md'}"]
    assert (results / "README.md").read_bytes() == committed
    (results / "README.md").write_text("stale")
    assert main(["report", "lr_validation_cnn_cpu", "--results", str(results), "--bootstrap", "0"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {results / 'README.md'}"  # a committed run: refreshed
    assert (results / "README.md").read_bytes() == committed
