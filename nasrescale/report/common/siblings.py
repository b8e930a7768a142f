"""The reports beside a run: every ``report.json`` in the same results folder, for the links
between kinds (a study quotes the trends and landscapes built on it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

__all__ = ["sibling_reports"]


def sibling_reports(run_dir: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(folder name, report.json)`` of every other run in ``run_dir``'s results folder, in name
    order; a report that does not parse (being rewritten, or not a report) is passed over.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for name, text in [("a", '{"x": 1}'), ("b", "{not json"), ("me", "{}")]:
    ...     (root / name).mkdir(); _ = (root / name / "report.json").write_text(text)
    >>> list(sibling_reports(root / "me"))
    [('a', {'x': 1})]
    """
    for report in sorted(Path(run_dir).parent.glob("*/report.json")):
        if report.parent == Path(run_dir):
            continue
        try:
            numbers = json.loads(report.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(numbers, dict):
            yield report.parent.name, numbers
