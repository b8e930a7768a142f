"""README's Results table, generated from a study's ``report.json``: per effect of the 2x2 (the
paper's comparison among them), the gain with its CI, the median, the cells that gain, the cell
set and the verdict (:mod:`nasrescale.report.common.robust`), and per budget of a linked trend
the same for its pairs; under it, a legend that defines every word and arm the table uses.

``python tools/readme_results.py`` writes both between the README's markers; a test checks that
README and the committed reports agree.

The verdict word of a comparison whose CI bound lies within :data:`~nasrescale.ranking.paired.EDGE`
of the CI's width of 0 (the reports' "at the edge") is written here as what the CI shows: "CI
barely holds 0" or "CI barely excludes 0", a bound too close to 0 to call a difference either way.

>>> _word({"verdict": "edge", "ci": [-0.86, 0.03]}, "principled"), _word({"verdict": "edge", "ci": [0.01, 0.45]}, "flat")
('CI barely holds 0', 'CI barely excludes 0')
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ..ranking.bands import MIN_TOPK_ROWS
from ..ranking.boot_counts import DEFAULT_BOOT, VERDICT_BOOT
from ..ranking.paired import EDGE, MAX_DROPPED
from .common.markdown import md_table
from .common.robust import ci_text, detectable, robust_cells

__all__ = ["START", "END", "ARMS", "results_rows", "results_table", "legend", "replace_table"]

START, END = "<!-- results-table:start -->", "<!-- results-table:end -->"

#: every arm the table may name: (init, LR rule and where its LR comes from), as
#: docs/protocols.md and the study's and trend's pipeline files define them (a test reads those)
_IN_DEGREE = "in-degree init (`in_degree_source`, the released code's)"
ARMS: dict[str, tuple[str, str]] = {
    "default": ("PyTorch init", "one global LR, the benchmark's 0.1 (NB201's recipe: SGD, Nesterov, weight decay 5e-4)"),
    "rescaled": (_IN_DEGREE, "base LR x path-depth scale, at the paper's base LR 0.46 (tuned for 200 epochs at "
                                   "full size; the paper's released implementation)"),
    "flat": (_IN_DEGREE, "one global LR: 0.1 x the multiplier tuned at this budget"),
    "principled": (_IN_DEGREE, "base LR x path-depth scale: the paper's one-epoch base-LR search x the "
                                     "multiplier tuned at the study's budget (the paper's method, its LR tuned; the "
                                     "trend keeps that LR at every budget)"),
    "tuned": ("PyTorch init", "one global LR: 0.1 x the multiplier tuned at this budget (default, its LR tuned)"),
    "scaled": ("PyTorch init", "base LR x path-depth scale: the same search x the multiplier tuned at this budget"),
    "principled_x1": (_IN_DEGREE, "base LR x path-depth scale: the one-epoch search's base LR untuned (x1), "
                                        "the paper as it runs it"),
}


def _word(robust: Mapping[str, Any], b: str) -> str:
    """The verdict cell: the reports' word, but "at the edge" said as the side of 0 the CI is on."""
    if robust.get("verdict") == "edge" and robust.get("ci"):
        low, high = robust["ci"]
        return "CI barely holds 0" if low <= 0 <= high else "CI barely excludes 0"
    if robust.get("verdict") == "none":
        return "CI holds 0"  # its margin is the table's own *detectable* column
    return robust_cells({"b": b, "robust": robust}, False)[3]


def _row(effect: str, pair: str, cells: str, robust: Mapping[str, Any] | None, b: str) -> list[str]:
    if not robust or robust.get("mean") is None:
        return [effect, pair, cells, "-", "-", "-", "-", "-"]
    few = (robust.get("n") or 0) < MIN_TOPK_ROWS
    median, _, gains, word = robust_cells({"b": b, "robust": robust}, few)
    gain = f"{robust['mean']:+.2f}" + ("" if few else f" {ci_text(robust.get('ci'))}")
    mde = None if few else detectable(robust.get("ci"))
    return [effect, pair, f"{robust.get('n')} cells, {cells}", gain, "-" if mde is None else f"±{mde:.2f}", median,
            gains, word if few else _word(robust, b)]


def results_rows(study: Mapping[str, Any], trend: Mapping[str, Any] | None = None) -> list[list[str]]:
    """The table's rows: the study's 2x2 effects, then each trend pair at each budget."""
    epochs = (study.get("budget") or {}).get("epochs")
    at = f" ({epochs} epochs)" if epochs else ""
    rows = [_row(r["effect"] + at, f"{r['b']} - {r['a']}", "2×2", r.get("robust"), r["b"])
            for r in (study.get("two_by_two") or {}).get("effects", [])]
    for r in (trend or {}).get("pairs", []):
        rows.append(_row(f"trend, {r['epochs']} epochs", f"{r['b']} - {r['a']}", "trend", r.get("robust"), r["b"]))
    return rows


def _arms_used(rows: list[list[str]]) -> list[str]:
    """The arms of the table's ``B - A`` column, in :data:`ARMS`' order.

    Raises:
        ValueError: an arm :data:`ARMS` does not define (add it there, with its docs/protocols.md entry).
    """
    named = {arm for row in rows for arm in row[1].split(" - ")}
    unknown = sorted(named - set(ARMS))
    if unknown:
        raise ValueError(f"README's Results table names arm(s) {', '.join(unknown)} that "
                         "nasrescale.report.readme_table.ARMS does not define; add each, as docs/protocols.md does")
    return [arm for arm in ARMS if arm in named]


def legend(rows: list[list[str]], study: Mapping[str, Any], trend: Mapping[str, Any] | None = None) -> list[str]:
    """The lines under the table: what each column, verdict word, cell set and arm means."""
    edge = f"{EDGE:.0%}"
    lines = [
        "**Reading the table.** *gain*: B − A in accuracy points, the mean over the row's cells; its 95% CI is a "
        f"paired BCa bootstrap over those cells at {VERDICT_BOOT:,} resamples (every report's verdicts take this "
        f"count; `nasrescale report --bootstrap`, default {DEFAULT_BOOT:,}, sets only the CIs of τ and the "
        "correlations). *detectable*: the smallest true mean gain the row detects at 80% power (two-sided 5%), "
        "from its CI's width (normal approximation): a row whose CI holds 0 rules out only gains larger than that. "
        "*median*: the median per-cell B − A. *cells that gain*: cells where B − A > 0.",
        "",
        "*Verdicts* ([docs/reports.md](docs/reports.md)):",
        f"- *B better* / *B worse*: the CI excludes 0 by more than {edge} of its width, and still does with the 1 "
        f"to {MAX_DROPPED} cells that carry the mean most dropped;",
        "- *driven by N cell(s)*: the CI excludes 0, but no longer once those N cells are dropped (the report names "
        "them);",
        f"- *CI barely excludes 0* / *CI barely holds 0*: a CI bound lies within {edge} of the CI's width of 0, on the "
        "side said: too close to 0 to call a difference either way (the reports' \"at the edge\");",
        "- *CI holds 0*: no difference these cells can tell from zero; gains up to the *detectable* one are not "
        "ruled out;",
        f"- *-*: fewer than {MIN_TOPK_ROWS} cells, no CI and no verdict.",
        "",
        _cell_sets(study, trend),
        "",
        "*Arms* ([docs/protocols.md](docs/protocols.md)):",
    ]
    lrs = (study.get("budget") or {}).get("lrs") or {}
    lines += [f"- `{arm}`: {ARMS[arm][0]}, {ARMS[arm][1]}{_study_lr(lrs.get(arm))};" for arm in _arms_used(rows)]
    lines[-1] = lines[-1].rstrip(";") + "."
    return lines


def _study_lr(text: str | None) -> str:
    """The LR a tuned arm trained at, as the study's report says it, its rule's tag dropped (empty
    for an arm whose LR the definition gives).

    >>> _study_lr("base LR 1.42544 = 0.35636 x 4, tuned (path_depth)"), _study_lr("LR 0.1 (fixed)"), _study_lr(None)
    ('; in the study, base LR 1.42544 = 0.35636 x 4', '', '')
    """
    if not text or ", tuned" not in text:
        return ""
    return "; in the study, " + re.sub(r", tuned \([a-z_]+\)$", "", text)


def _cell_sets(study: Mapping[str, Any], trend: Mapping[str, Any] | None) -> str:
    """The sentence on the rows' cell sets (the ``cells`` column)."""
    text = (f"*cells*: the cells both arms of the row finished, each isomorphism class once and degenerate cells left "
            f"out; *2×2* rows are the study's ([{study.get('name')}](results/{study.get('name')}/report.md)), the LR "
            "tuning's cells and the cells isomorphic to them left out too" + _interim(study))
    if trend:
        text += (f"; *trend* rows are the trend's {trend.get('cells')} cells "
                 f"([{trend.get('name')}](results/{trend.get('name')}/report.md)), at each of its budgets: another "
                 "cell set, so a pair's 2×2 row and its trend row at the same epochs need not agree")
    return text + "."


def _interim(study: Mapping[str, Any]) -> str:
    """The study's progress where it has not finished every declared cell (its 2x2 rows are interim).

    >>> _interim({"cells": {"finished": 58, "declared": 100}}), _interim({"cells": {"finished": 9, "declared": 9}})
    ('; interim: the study has finished 58 of its 100 cells', '')
    """
    cells = study.get("cells") or {}
    done, declared = cells.get("finished"), cells.get("declared")
    if done is None or declared is None or done >= declared:
        return ""
    return f"; interim: the study has finished {done} of its {declared} cells"


def results_table(study: Mapping[str, Any], trend: Mapping[str, Any] | None = None) -> list[str]:
    """The Markdown table of :func:`results_rows`, then a blank line and its :func:`legend`."""
    rows = results_rows(study, trend)
    table = md_table(["effect", "B - A", "cells", "gain [95% CI]", "detectable", "median", "cells that gain", "verdict"],
                     rows)
    return [*table, "", *legend(rows, study, trend)]


def replace_table(readme: str, table: list[str]) -> str:
    """``readme`` with the text between :data:`START` and :data:`END` replaced by ``table``.

    >>> replace_table(f"a\\n{START}\\nold\\n{END}\\nb", ["| x |"])
    'a\\n<!-- results-table:start -->\\n| x |\\n<!-- results-table:end -->\\nb'
    """
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    if not pattern.search(readme):
        raise ValueError(f"no {START} ... {END} in the README")
    return pattern.sub(lambda _: "\n".join([START, *table, END]), readme)
