"""README's Results table is the committed reports' (issue 52): every row of it is generated from
results/nb201_cifar10_cpu/report.json and results/nb201_trend_cpu/report.json."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from nasrescale.report.readme_table import END, START

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("readme_results", ROOT / "tools" / "readme_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_results_table_agrees_with_the_reports():
    text = (ROOT / "README.md").read_text()
    assert START in text and END in text, "README.md has no generated Results table"
    shown = text.split(START, 1)[1].split(END, 1)[0].strip().splitlines()
    expected = _tool().table()
    assert shown == expected, "README.md's Results table is not the reports'; run python tools/readme_results.py"
    assert any("the paper's comparison" in line for line in shown)
    assert any("trend, 24 epochs" in line for line in shown)
