"""Every report kind is an ordered list of sections over one typed summary: a new section is one
class plus one entry in the kind's list, and it shows on the page and in ``report.json``;
replacing a section replaces its lines. Run on committed stores of the calibration, LR
validation and landscape kinds (copied: only their packed store)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from nasrescale.kinds.calibration.sections import CALIBRATION_SECTIONS
from nasrescale.kinds.calibration.write import write_calibration_report
from nasrescale.report.common.page import Computed
from nasrescale.kinds.landscape.sections import LANDSCAPE_SECTIONS
from nasrescale.kinds.landscape.write import write_landscape_report
from nasrescale.kinds.lr_validation.sections import VALIDATION_SECTIONS
from nasrescale.kinds.lr_validation.write import write_validation_report

ROOT = Path(__file__).resolve().parents[2]

KINDS: dict[str, tuple[str, tuple[Any, ...], Callable[..., Path]]] = {
    "calibration": ("nb201_cifar10_calibration_cpu", CALIBRATION_SECTIONS, write_calibration_report),
    "lr_validation": ("lr_validation_mlp", VALIDATION_SECTIONS, write_validation_report),
    "landscape": ("landscape_nb201_24ep_cpu", LANDSCAPE_SECTIONS, write_landscape_report),
}


class CellCount:
    """A new section: one class (its own module in the product), one entry in the list."""

    key = "cell_count"

    def compute(self, run: Any) -> Computed:
        return Computed({"summary": type(run).__name__})

    def render(self, run: Any, computed: Computed) -> list[str]:
        return ["## Added section", "", f"summary: {computed.numbers['summary']}", ""]


class Heading:
    key = None

    def compute(self, run: Any) -> Computed:
        return Computed(None)

    def render(self, run: Any, computed: Computed) -> list[str]:
        return ["# Replaced title", ""]


def _run(tmp_path: Path, folder: str) -> Path:
    run_dir = tmp_path / folder
    run_dir.mkdir()
    shutil.copy(ROOT / "results" / folder / "store.sqlite.gz", run_dir / "store.sqlite.gz")
    return run_dir


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_section_is_added_or_replaced_by_one_entry(tmp_path, kind):
    folder, sections, write = KINDS[kind]
    run_dir = _run(tmp_path, folder)
    default = write(run_dir, sections=sections).read_text()
    numbers = json.loads((run_dir / "report.json").read_text())
    assert "## Added section" not in default and "cell_count" not in numbers

    text = write(run_dir, sections=(*sections, CellCount())).read_text()
    added = json.loads((run_dir / "report.json").read_text())
    assert text.startswith(default.rstrip("\n")) and "## Added section" in text
    assert "summary: " in text and "Summary" in added["cell_count"]["summary"]
    assert {k: v for k, v in added.items() if k != "cell_count"} == numbers  # the rest as it was

    text = write(run_dir, sections=(Heading(), *sections[1:])).read_text()
    assert text.startswith("# Replaced title\n") and default.splitlines()[0] not in text
    assert text.endswith(default[-200:])  # the sections after it as they were
