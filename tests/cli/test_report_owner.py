"""``report`` on a folder whose store another pipeline wrote says whose store it is (one notice),
as ``run --dry-run`` refuses to add to it; the report of the stored results is written either way."""

from __future__ import annotations

import shutil

from pipeline_helpers import TINY, cli, one_thread, private_cache, tiny_pipeline  # noqa: F401  (fixtures, used by name)


def test_report_names_whose_store_it_reports(capsys, tmp_path):
    results = tmp_path / "res"
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    assert cli(capsys, "run", str(spec), "--results", str(results), "--quiet")[0] == 0

    code, _, err = cli(capsys, "report", str(spec), "--results", str(results), "--bootstrap", "0")
    assert code == 0 and "note:" not in err, err  # its own pipeline: nothing to say

    spec.write_text(tiny_pipeline(seeds=(0, 1)))  # the file changed since the run
    code, _, err = cli(capsys, "run", str(spec), "--results", str(results), "--dry-run")
    assert code == 2 and "made with a different pipeline (differs in: pipeline.seeds" in err, err
    code, out, err = cli(capsys, "report", str(spec), "--results", str(results), "--bootstrap", "0")
    assert code == 0 and "report.md" in out
    assert err.count("nasrescale: note: ") == 1, err
    assert (f"{results / 'tiny' / 'store.sqlite'} holds the results of another pipeline 'tiny' than {spec} as it is "
            "now (differs in: pipeline.seeds") in err

    shutil.copytree(results / "tiny", results / "toy")  # a store under another pipeline's name
    code, _, err = cli(capsys, "report", "toy", "--results", str(results), "--bootstrap", "0")
    assert code == 0
    assert (f"nasrescale: note: {results / 'toy' / 'store.sqlite'} is the store of pipeline 'tiny', not of a "
            "pipeline named 'toy' (the folder's name): this report is of 'tiny''s results") in err
