"""A new section of the retrain report is one module and one entry of
:data:`~nasrescale.kinds.retrain.sections.RETRAIN_SECTIONS` (docs/architecture.md, "A new report
section"): a section added to the ordered entries shows on the page, at its place, and its
numbers land in ``report.json`` under its key."""

from __future__ import annotations

import json

from nasrescale.report.common.page import Computed
from nasrescale.kinds.retrain.sections import RETRAIN_SECTIONS
from nasrescale.kinds.retrain.summary import RunSummary
from nasrescale.kinds.retrain.write import write_report

from rank_store_builder import build_store


class CellCount:
    """What a new module of ``kinds/retrain/`` would hold: one section."""

    key = "cell_count"

    def compute(self, run: RunSummary) -> Computed:
        return Computed({label: int(src.runs["arch"].nunique()) for label, src in run.sources.items()})

    def render(self, run: RunSummary, computed: Computed) -> list[str]:
        return ["## Cells per protocol", "", ", ".join(f"{k}: {v}" for k, v in computed.numbers.items()), ""]


def test_a_registered_section_is_on_the_page_and_in_the_json(tmp_path):
    run, _ = build_store(tmp_path / "syn", n_archs=12, seeds=(0,))
    entries = list(RETRAIN_SECTIONS)
    entries.insert(1, CellCount())  # the entry: right after the title
    text = write_report(run.parent, n_boot=20, sections=tuple(entries)).read_text()
    counts = json.loads((run.parent / "report.json").read_text())["cell_count"]
    assert set(counts) == {"default", "rescaled"} and all(0 < n <= 12 for n in counts.values())
    assert f"## Cells per protocol\n\ndefault: {counts['default']}, rescaled: {counts['rescaled']}" in text
    assert text.index("# Report:") < text.index("## Cells per protocol") < text.index("## Method")


def test_the_default_page_has_no_such_section(tmp_path):
    run, _ = build_store(tmp_path / "syn", n_archs=6, seeds=(0,))
    assert "## Cells per protocol" not in write_report(run.parent, n_boot=20).read_text()
