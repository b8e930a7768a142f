"""A paired comparison's robust companions in words (:func:`~nasrescale.ranking.paired.paired_robust`).

Every paired comparison of a report (the 2x2's effects, each pair's section, the trend) gives,
beside its mean gain and CI, the median difference, the Wilcoxon signed-rank p, the share of
cells that gain and an influence line; its verdict word comes from :func:`verdict_words`.

>>> r = {"n": 54, "mean": -0.29, "median": 0.0, "wilcoxon_p": 0.73, "gains": 27, "share": 0.5,
...      "ci": [-0.82, 0.0], "n_boot": 9999, "verdict": "edge", "driven_by": [],
...      "influence": {"cells": ["x", "y", "z"], "mean_without": 0.01, "ci_without": [-0.2, 0.2], "survives": None}}
>>> verdict_words(r, "principled")
'at the edge: a bound of its CI lies at 0'
>>> companions(r, {})
'median +0.00, Wilcoxon p 0.73, 27 of 54 cells gain; without the 3 cells that move the mean most (x, y, z): +0.01 [-0.20, +0.20]'
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["ci_text", "detectable", "verdict_words", "verdict_cell", "companions", "robust_sentence", "robust_cells"]


def ci_text(ci: Any) -> str:
    """``[lo, hi]`` with signs, two decimals; empty without a CI.

    >>> ci_text([-0.5, 0.25]), ci_text(None)
    ('[-0.50, +0.25]', '')
    """
    return f"[{ci[0]:+.2f}, {ci[1]:+.2f}]" if isinstance(ci, (list, tuple)) and None not in ci else ""


def _cells(cells: list[str], names: Mapping[str, str]) -> str:
    return ", ".join(names.get(c, c) for c in cells)


def verdict_words(robust: Mapping[str, Any], b: str, names: Mapping[str, str] | None = None) -> str:
    """The verdict: ``B better``/``B worse`` only where it survives dropping the most influential
    cells, else at the edge, driven by the cells it names, or no difference."""
    word, names = robust.get("verdict"), names or {}
    if word in ("better", "worse"):
        return f"{b} {word}"
    if word == "edge":
        return "at the edge: a bound of its CI lies at 0"
    if word == "driven":
        cells = robust.get("driven_by") or []
        return (f"driven by {len(cells)} cell{'' if len(cells) == 1 else 's'} ({_cells(cells, names)}): "
                "without them the CI reaches 0")
    mde = detectable(robust.get("ci"))
    return "no difference this budget can tell from zero" + (
        f" (it would detect a true gain of ±{mde:.2f} at 80% power)" if mde is not None else "")


#: normal quantiles of a two-sided 5% test and of 80% power
_Z975, _Z80 = 1.959963984540054, 0.8416212335729143


def detectable(ci: Any) -> float | None:
    """The smallest true mean gain a comparison detects at 80% power (two-sided 5%), from its 95% CI's
    width (normal approximation: (z_0.975 + z_0.8) x the CI's half-width / z_0.975).

    >>> round(detectable([-1.96, 1.96]), 4), detectable(None)
    (2.8016, None)
    """
    if not isinstance(ci, (list, tuple)) or None in ci:
        return None
    return (_Z975 + _Z80) * (ci[1] - ci[0]) / (2 * _Z975)


def companions(robust: Mapping[str, Any], names: Mapping[str, str] | None = None) -> str:
    """The median, the Wilcoxon p, the share of cells that gain and the influence line."""
    names = names or {}
    parts = []
    if robust.get("median") is not None:
        parts.append(f"median {robust['median']:+.2f}")
    if robust.get("wilcoxon_p") is not None:
        parts.append(f"Wilcoxon p {robust['wilcoxon_p']:.2g}" if robust["wilcoxon_p"] < 0.01
                     else f"Wilcoxon p {robust['wilcoxon_p']:.2f}")
    parts.append(f"{robust.get('gains')} of {robust.get('n')} cells gain")
    text = ", ".join(parts)
    influence = robust.get("influence") or {}
    cells = influence.get("cells") or []
    if cells and influence.get("mean_without") is not None:
        one = len(cells) == 1
        text += (f"; without the {len(cells)} cell{'' if one else 's'} that move{'s' if one else ''} the mean most "
                 f"({_cells(cells, names)}): {influence['mean_without']:+.2f}")
        if influence.get("ci_without"):
            text += f" {ci_text(influence['ci_without'])}"
    return text


def robust_sentence(robust: Mapping[str, Any], b: str, names: Mapping[str, str] | None = None) -> str:
    """Mean, CI (with its resamples), the companions and the verdict, as one clause.

    >>> r = {"n": 12, "mean": 0.5, "median": 0.4, "wilcoxon_p": 0.001, "gains": 11, "share": 0.9,
    ...      "ci": [0.3, 0.7], "n_boot": 9999, "verdict": "better", "driven_by": [],
    ...      "influence": {"cells": ["a"], "mean_without": 0.45, "ci_without": [0.25, 0.6], "survives": True}}
    >>> robust_sentence(r, "B")
    'gain +0.50 [+0.30, +0.70] (9,999 resamples), median +0.40, Wilcoxon p 0.001, 11 of 12 cells gain; without the 1 cell that moves the mean most (a): +0.45 [+0.25, +0.60]: B better'
    """
    ci = ci_text(robust.get("ci"))
    head = f"gain {robust['mean']:+.2f}" + (f" {ci} ({robust.get('n_boot'):,} resamples)" if ci else "")
    return f"{head}, {companions(robust, names)}: {verdict_words(robust, b, names)}"


def verdict_cell(robust: Mapping[str, Any], b: str, few: bool) -> str:
    """The verdict as a table cell (``-`` on too few cells for one).

    >>> verdict_cell({"verdict": "driven", "driven_by": ["x"]}, "p", False), verdict_cell({"verdict": "better"}, "p", True)
    ('driven by 1 cell(s)', '-')
    """
    if few or not robust:
        return "-"
    mde = detectable(robust.get("ci"))
    none = "CI holds 0" + (f" (detects ±{mde:.2f})" if mde is not None else "")
    return {"better": f"{b} better", "worse": f"{b} worse", "edge": "at the edge", "none": none,
            "driven": f"driven by {len(robust.get('driven_by') or [])} cell(s)"}.get(robust.get("verdict"), "-")


def robust_cells(row: Mapping[str, Any], few: bool) -> list[str]:
    """The median, the Wilcoxon p, the cells that gain and the verdict of a row's ``robust``.

    >>> robust_cells({"b": "p", "robust": {"median": 0.4, "wilcoxon_p": 0.01, "gains": 9, "n": 12,
    ...                                    "verdict": "better", "driven_by": []}}, False)
    ['+0.40', '0.010', '9 of 12', 'p better']
    """
    robust = row.get("robust")
    if not robust:
        return ["-", "-", "-", "-"]
    p = robust.get("wilcoxon_p")
    return [f"{robust['median']:+.2f}" if robust.get("median") is not None else "-",
            "-" if p is None else f"{p:.3f}" if p >= 0.001 else f"{p:.1e}",
            f"{robust['gains']} of {robust['n']}", verdict_cell(robust, str(row.get("b")), few)]
