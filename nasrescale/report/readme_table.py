"""README's Results table, generated from a study's ``report.json``: per effect of the 2x2 (the
paper's comparison among them), the gain with its CI, the median, the cells that gain and the
verdict (:mod:`nasrescale.report.common.robust`), and per budget of a linked trend the same for its pairs.

``python tools/readme_results.py`` writes it between the README's markers; a test checks that
README and the committed reports agree.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ..ranking.bands import MIN_TOPK_ROWS
from .common.markdown import md_table
from .common.robust import ci_text, robust_cells

__all__ = ["START", "END", "results_rows", "results_table", "replace_table"]

START, END = "<!-- results-table:start -->", "<!-- results-table:end -->"


def _row(effect: str, pair: str, robust: Mapping[str, Any] | None, b: str) -> list[str]:
    if not robust or robust.get("mean") is None:
        return [effect, pair, "-", "-", "-", "-"]
    few = (robust.get("n") or 0) < MIN_TOPK_ROWS
    median, _, gains, word = robust_cells({"b": b, "robust": robust}, few)
    gain = f"{robust['mean']:+.2f}" + ("" if few else f" {ci_text(robust.get('ci'))}")
    return [effect, pair, gain, median, gains, word]


def results_rows(study: Mapping[str, Any], trend: Mapping[str, Any] | None = None) -> list[list[str]]:
    """The table's rows: the study's 2x2 effects, then each trend pair at each budget."""
    epochs = (study.get("budget") or {}).get("epochs")
    at = f" ({epochs} epochs)" if epochs else ""
    rows = [_row(r["effect"] + at, f"{r['b']} - {r['a']}", r.get("robust"), r["b"])
            for r in (study.get("two_by_two") or {}).get("effects", [])]
    for r in (trend or {}).get("pairs", []):
        rows.append(_row(f"trend, {r['epochs']} epochs", f"{r['b']} - {r['a']}", r.get("robust"), r["b"]))
    return rows


def results_table(study: Mapping[str, Any], trend: Mapping[str, Any] | None = None) -> list[str]:
    """The Markdown table of :func:`results_rows`."""
    return md_table(["effect", "B - A", "gain [95% CI]", "median", "cells that gain", "verdict"],
                    results_rows(study, trend))


def replace_table(readme: str, table: list[str]) -> str:
    """``readme`` with the text between :data:`START` and :data:`END` replaced by ``table``.

    >>> replace_table(f"a\\n{START}\\nold\\n{END}\\nb", ["| x |"])
    'a\\n<!-- results-table:start -->\\n| x |\\n<!-- results-table:end -->\\nb'
    """
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    if not pattern.search(readme):
        raise ValueError(f"no {START} ... {END} in the README")
    return pattern.sub(lambda _: "\n".join([START, *table, END]), readme)
