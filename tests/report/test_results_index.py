"""results/README.md indexes the committed runs, whose stores ship gzipped."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from nasrescale.report.results_index import index_text, run_folders

ROOT = Path(__file__).resolve().parents[2]


def test_committed_index_is_what_the_stores_give() -> None:
    results = ROOT / "results"
    assert (results / "README.md").read_text(encoding="utf-8") == index_text(results), \
        "results/README.md is stale: run `nasrescale report --index --results results`"


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
    with gzip.open(run / "store.sqlite.gz", "rb") as f_in, open(run / "store.sqlite", "wb") as f_out:
        shutil.copyfileobj(f_in, f_out)
    assert run_folders(tmp_path) == [run]  # one folder, whichever form its store has
