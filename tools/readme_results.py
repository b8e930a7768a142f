"""Rewrite README.md's Results table from the committed reports' report.json
(nasrescale.report.readme_table).

Run after regenerating ``results/nb201_cifar10_cpu`` or ``results/nb201_trend_cpu``:
``python tools/readme_results.py``; tests/report/test_readme_results.py fails while README.md and
the reports disagree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nasrescale.report.readme_table import replace_table, results_table  # noqa: E402

STUDY, TREND = ROOT / "results" / "nb201_cifar10_cpu", ROOT / "results" / "nb201_trend_cpu"


def table() -> list[str]:
    """The table the committed reports give."""
    study = json.loads((STUDY / "report.json").read_text())
    trend = json.loads((TREND / "report.json").read_text()) if (TREND / "report.json").exists() else None
    return results_table(study, trend)


if __name__ == "__main__":
    readme = ROOT / "README.md"
    text = readme.read_text()
    new = replace_table(text, table())
    if new != text:
        readme.write_text(new)
    print("README.md updated" if new != text else "README.md already matches the reports")
