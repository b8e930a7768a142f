"""The command line: JSON contract, CSV of the whole space, exit code 2 on bad input (every command)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from nasrescale.cli.main import main

from pipeline_helpers import private_cache  # noqa: F401  (fixtures, used by name)

ROOT = Path(__file__).resolve().parents[2]
ALL_3X3 = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse refused an option's value
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def test_analyze_json_contract(capsys):
    code, out, err = run(capsys, "analyze", "--json", "3_33_333", "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 2
    keys = {"arch", "family", "degenerate", "num_paths", "path_depths", "sum_depth_cubed", "lr_scale", "in_degree"}
    for obj in lines:
        assert set(obj) == keys
    first, second = lines
    assert first["arch"] == ALL_3X3
    assert first["family"] == "nb201"
    assert first["num_paths"] == 4
    assert first["path_depths"] == [2, 3, 3, 4]
    assert first["sum_depth_cubed"] == 126
    assert first["lr_scale"] == pytest.approx(0.0890871, rel=1e-6)
    assert first["in_degree"] == {"1": 1, "2": 2, "3": 3}
    assert second["degenerate"] is True
    assert second["lr_scale"] is None
    assert second["path_depths"] == []


def test_analyze_text_and_paths(capsys):
    code, out, _ = run(capsys, "analyze", "--paths", "3_33_333")
    assert code == 0
    assert "lr scale 0.0890871" in out
    assert "0 -nor_conv_3x3-> 1 -nor_conv_3x3-> 2 -nor_conv_3x3-> 3" in out


def test_analyze_paths_with_json_lists_them(capsys):
    code, out, _ = run(capsys, "analyze", "--json", "--paths", "3_33_333")
    assert code == 0
    paths = json.loads(out)["paths"]
    assert len(paths) == 4
    assert {"nodes": [0, 1, 2, 3], "ops": ["nor_conv_3x3"] * 3} in paths
    assert sorted(len(p["ops"]) for p in paths) == [1, 2, 2, 3]


def test_analyze_stdin(capsys, monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("3_33_333\n# comment\n\n1_01_001\n"))
    code, out, _ = run(capsys, "analyze", "--json", "-")
    assert code == 0
    assert len(out.splitlines()) == 2


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["analyze", "|nor_conv_3x3~0|+|bogus~0|none~1|+|none~0|none~1|none~2|"], "unknown op 'bogus'"),
        (["analyze", "3_33_333", "--family", "nope"], "(the registered cell families), got 'nope'"),
        (["analyze"], "no architecture given"),
        (["analyze", "--all", "3_33_333"], "either ARCH arguments or --all"),
        (["analyze", "3_33_333", "--family-file", "/no/such/file.toml"], "does not exist"),
        (["analyze", "3_33_333", "--cells", "my.toml"], "the option is now --family-file my.toml"),
        (["analyze", "--all", "--out", "/no/such/dir/x.csv"], "does not exist"),
        (["train", "3_33_333", "--protocol", "rescaled"], "--base-lr"),
        (["train", "3_33_333", "--set", "epochz=3"], "protocol.epochz: unknown key"),
        (["train", "3_33_333", "--set", "batch_size=big"], "protocol.batch_size: expected int"),
        (["train", "3_33_333", "--protocol", "fancy"], "unknown protocol 'fancy'"),
        (["train", "3_99_333"], "digit '9'"),
        (["train", "3_33_333", "--dataset", "cifar10", "--data-path", "/nonexistent"], "--download"),
        (["train", "3_33_333", "--dataset", "mnist"], "mnist"),
        (["train", "3_33_333", "--width", "0"], "must be an integer >= 1"),
        (["train", "2_02_002_0002", "-f", "mlp_dag", "--cells", "3"], "cells"),
        (["summary", "3_33_333", "--family", "nope"], "registered cell families"),
        (["diagnose", "3_33_333", "--inits", "xavier"], "unknown rule xavier"),
    ],
)
def test_bad_input_exits_2_with_a_message(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert fragment in err
    assert "Traceback" not in err


def test_all_writes_every_cell(capsys, tmp_path):
    out_file = tmp_path / "nb201.csv"
    code, _, err = run(capsys, "analyze", "--all", "--family", "nb201", "--out", str(out_file))
    assert code == 0
    assert "15,625" in err
    with out_file.open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 15_625
    assert set(rows[0]) == {"arch", "family", "degenerate", "num_paths", "path_depths", "sum_depth_cubed",
                            "lr_scale", "in_degree_1", "in_degree_2", "in_degree_3"}
    row = next(r for r in rows if r["arch"] == ALL_3X3)
    assert row["path_depths"] == "2 3 3 4"
    assert row["sum_depth_cubed"] == "126"
    assert sum(r["degenerate"] == "True" for r in rows) == 341
    assert not [p for p in tmp_path.iterdir() if p.name != "nb201.csv"]  # no temp file left behind


def test_cells_lists_families(capsys):
    code, out, _ = run(capsys, "cells", "--json")
    fams = {json.loads(line)["name"]: json.loads(line) for line in out.splitlines()}
    assert code == 0
    assert {"nb201", "mlp_dag", "cnn_dag"} <= set(fams)
    ops = {op["name"]: op for op in fams["nb201"]["ops"]}
    assert ops["nor_conv_3x3"]["relu_depth"] == 1
    assert ops["nor_conv_3x3"]["kernel"] == 3
    assert ops["none"]["zero"]
    assert not ops["avg_pool_3x3"]["parametric"]
    code, out, _ = run(capsys, "cells")
    assert "nb201" in out
    assert "15,625 cells" in out


def test_readme_user_family_example(capsys):
    """docs/cells.md's user-defined family is the example file, and it works through the CLI."""
    example = ROOT / "examples" / "cells" / "nb201_conv5.toml"
    readme = (ROOT / "docs" / "cells.md").read_text()
    assert example.read_text().strip() in readme
    code, out, _ = run(capsys, "analyze", "--json", "--family-file", str(example),
                       "|nor_conv_5x5~0|+|skip_connect~0|nor_conv_5x5~1|+|skip_connect~0|none~1|skip_connect~2|")
    rec = json.loads(out)
    assert code == 0
    assert rec["family"] == "nb201_conv5"
    assert rec["path_depths"] == [1, 1, 3]  # 0-3, 0-2-3, 0-1-2-3 (two 5x5 convs)


def test_module_entry_point():
    proc = subprocess.run([sys.executable, "-m", "nasrescale", "analyze", "--json", "2_02_002_0002", "-f", "mlp_dag"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["path_depths"] == [7]
    bad = subprocess.run([sys.executable, "-m", "nasrescale", "analyze", "9_99_999"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "digit '9'" in bad.stderr
    assert "Traceback" not in bad.stderr
