"""``pipeline.reference = "none"`` means no reference everywhere: the stored pipeline, the run's
printout, the report and the results index (an absent key still means the benchmark's)."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3

from nasrescale.pipeline.spec import load_pipeline
from nasrescale.report.results_index import index_text

from pipeline_helpers import cli, one_thread, private_cache, tiny_pipeline  # noqa: F401  (fixtures, used by name)


def test_reference_none_is_kept_and_nothing_compares_with_the_benchmark(capsys, tmp_path):
    text = tiny_pipeline("noref", archs=["3_11_111", "3_13_111"]).replace("seeds = [0]", 'seeds = [0]\nreference = "none"')
    (tmp_path / "noref.toml").write_text(text)
    results = tmp_path / "res"
    code, out, err = cli(capsys, "run", str(tmp_path / "noref.toml"), "--results", str(results), "--quiet")
    assert code == 0, err
    run = results / "noref"
    with sqlite3.connect(run / "store.sqlite") as db:
        stored = json.loads(db.execute("SELECT value FROM meta WHERE key = 'pipeline'").fetchone()[0])
    assert stored["pipeline"]["reference"] == "none"
    assert "rescaled vs default" in out or "B = rescaled" in out  # the protocols are still compared
    report = (run / "report.md").read_text()
    for text in (out, err, report):
        assert "nb201:" not in text
    assert "## Against the benchmark (" not in report and "names no reference" in report
    with open(run / "store.sqlite", "rb") as src, gzip.open(run / "store.sqlite.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)  # a committed run: the index lists it
    index = index_text(results)
    assert "| rescaled | no reference |" in index and "nb201:" not in index


def test_an_absent_reference_is_still_the_benchmarks(tmp_path):
    (tmp_path / "p.toml").write_text(tiny_pipeline("p"))
    resolved = load_pipeline(tmp_path / "p.toml").resolved([])
    assert "reference" not in resolved["pipeline"]
    assert load_pipeline(tmp_path / "p.toml", {"pipeline.reference": "none"}).pipeline.reference == "none"
