"""Text rendering of a ranking comparison (what ``nasrescale rank`` prints without ``--json``)."""

from __future__ import annotations

import json
import math
from typing import Any

from .bands import MIN_TOPK_ROWS, null_tau_sd

__all__ = ["format_table", "interval_note", "fmt", "to_json", "JSON_DIGITS", "degenerate_note", "isomorphic_note", "few_rows_note"]


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _ci(ci: list | None, digits: int = 3) -> str:
    return "" if not ci else f"[{fmt(ci[0], digits)}, {fmt(ci[1], digits)}]"


def _skips(skipped: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())) or "none"


def degenerate_note(result: dict, switch: str = "`nasrescale rank --include-degenerate`") -> str:
    """One sentence: how many degenerate cells the statistics of a comparison left out (or
    counted), and the ``switch`` that changes it; empty when the matched rows have none.

    >>> degenerate_note({"n": 11, "counts": {"degenerate": 1, "degenerate_excluded": 1}}, "--x")
    'Statistics leave out 1 degenerate cell (no input-output path: recorded at chance accuracy, so any two sources rank it last together); n = 11 without it; --x counts it.'
    """
    c = result["counts"]
    count, excluded = c.get("degenerate", 0), c.get("degenerate_excluded", 0)
    if not count:
        return ""
    n = result["n"] + len(c.get("isomorphic_dropped") or {})  # before isomorphic duplicates are dropped
    cells = f"{count} degenerate cell{'s' if count > 1 else ''}"
    if excluded:
        return (f"Statistics leave out {cells} (no input-output path: recorded at chance accuracy, so any two sources "
                f"rank {'them' if count > 1 else 'it'} last together); n = {n} without "
                f"{'them' if count > 1 else 'it'}; {switch} counts {'them' if count > 1 else 'it'}.")
    return f"Statistics count {cells} (at chance accuracy by construction), as asked; n = {result['n']}."


_LISTED = 4  # duplicates named in a note; the JSON's counts.isomorphic_dropped has them all


def isomorphic_note(result: dict, switch: str = "`nasrescale rank --include-isomorphic`",
                    names: dict[str, str] | None = None) -> str:
    """One sentence: how many isomorphic duplicates the statistics dropped (each named as
    ``names`` writes it, if given) and the ``switch`` that counts them; empty for none.

    >>> isomorphic_note({"n": 9, "counts": {"isomorphic_dropped": {"0_10_211": "1_10_021"}}}, "--x")
    'Statistics count each isomorphism class once (cells that compute the same function): 1 duplicate dropped (0_10_211 = 1_10_021), n = 9 classes; --x counts every cell.'
    """
    dropped = result["counts"].get("isomorphic_dropped") or {}
    if not dropped:
        return ""
    short = names or {}
    pairs = [f"{short.get(d, d)} = {short.get(k, k)}" for d, k in sorted(dropped.items())]
    listed = ", ".join(pairs[:_LISTED]) + (f", and {len(pairs) - _LISTED} more" if len(pairs) > _LISTED else "")
    return (f"Statistics count each isomorphism class once (cells that compute the same function): "
            f"{len(dropped)} duplicate{'s' if len(dropped) > 1 else ''} dropped ({listed}), n = {result['n']} "
            f"classes; {switch} counts every cell.")


def few_rows_note(topk: list[dict]) -> str:
    """The sentence under a top-K% table whose small subsets are not read as figures.

    >>> few_rows_note([{"k_percent": 10, "n": 6}, {"k_percent": 5, "n": 3}, {"k_percent": 50, "n": 28}])
    'Top 10%, 5% (n = 6, 3): fewer than 10 cells, where tau between two unrelated rankings has a standard deviation of 0.35 or more; not read as figures.'
    """
    few = [e for e in topk if e["n"] < MIN_TOPK_ROWS]
    if not few:
        return ""
    ks = ", ".join(f"{e['k_percent']:g}%" for e in few)
    ns = ", ".join(str(e["n"]) for e in few)
    sd = null_tau_sd(max(2, max(e["n"] for e in few)))
    return (f"Top {ks} (n = {ns}): fewer than {MIN_TOPK_ROWS} cells, where tau between two unrelated rankings has "
            f"a standard deviation of {sd:.2f} or more; not read as figures.")


def format_table(result: dict) -> str:
    """The text form of a :func:`nasrescale.ranking.compare.compare` result."""
    c, s, ci = result["counts"], result["settings"], result["ci"]
    lines = [f"A = {result['a']}    B = {result['b']}    (differences are B - A, accuracy in %)"]
    chance = f" at chance ({fmt(s['chance_a'], 2)}% / {fmt(s['chance_b'], 2)}%)" if s["diverged"] == "chance" \
        else " dropped"
    lines.append(f"matched {c['matched']} | only in A {c['only_a']} | only in B {c['only_b']} | "
                 f"diverged A {c['diverged_a']}, B {c['diverged_b']}{chance} | degenerate {c['degenerate']}")
    lines.append(f"runs not used: A {_skips(c['skipped_a'])}; B {_skips(c['skipped_b'])}")
    if degenerate_note(result):
        lines.append(degenerate_note(result))
    if isomorphic_note(result):
        lines.append(isomorphic_note(result))
    if result["n"] < 3:
        lines.append("fewer than 3 architectures to rank: rank statistics are undefined")
    lines += ["", f"{'statistic':<22}{'value':>10}  95% CI (BCa, {s['bootstrap']} bootstrap resamples)"]
    rows = [("Kendall tau-b", "kendall_tau", 3), ("Spearman rho", "spearman", 3), ("Pearson r", "pearson", 3),
            ("mean diff (B - A)", "mean_diff", 2), ("median diff (B - A)", "median_diff", 2)]
    for name, key, digits in rows:
        lines.append(f"{name:<22}{fmt(result[key], digits):>10}  {_ci(ci.get(key), digits)}")
    lines.append(f"{'mean A / mean B':<22}{fmt(result['mean_a'], 2):>10}  / {fmt(result['mean_b'], 2)}")
    noise = result["seed_noise"]
    for side in ("a", "b"):
        sn = noise.get(side)
        if sn:
            lines.append(f"seed noise {side.upper()}: tau {fmt(sn['kendall_tau'])} between its seeds "
                         f"({', '.join(map(str, sn['seeds']))}; range {fmt(sn['kendall_tau_min'])}.."
                         f"{fmt(sn['kendall_tau_max'])})")
    per_run = result.get("per_run_kendall_tau")
    if per_run:
        lines.append(f"single runs A vs B: tau {fmt(per_run['kendall_tau'])} (mean of {per_run['pairs']} seed pairs; "
                     "compare with the seed noise)")
    head = (f"{'top-K%':>7}{'n':>6}{'tau A,B':>10}{'95% band':>18}{'seed tau A':>12}{'seed tau B':>12}"
            f"{'prec@K':>9}{'seed prec A':>13}{'seed prec B':>13}")
    lines += ["", f"top-K% curve (subset by {s['topk_by']} source, the same cells for every column; tau null below "
              f"3 rows, in parentheses below {MIN_TOPK_ROWS})", head]
    band = {side: {e["k_percent"]: e for e in (noise.get(side) or {}).get("topk", [])} for side in ("a", "b")}
    precision = {e["k_percent"]: e["precision"] for e in result["precision_at_k"]}
    for entry in result["topk"]:
        k = entry["k_percent"]
        few = entry["n"] < MIN_TOPK_ROWS
        tau = [fmt(v) if not few or v is None else f"({fmt(v)})" for v in
               (entry["kendall_tau"], band["a"].get(k, {}).get("kendall_tau"), band["b"].get(k, {}).get("kendall_tau"))]
        seed_prec = [fmt(band[side].get(k, {}).get("precision"), 2) for side in ("a", "b")]
        lines.append(f"{k:>7}{entry['n']:>6}{tau[0]:>10}{_ci(entry.get('ci')):>18}{tau[1]:>12}{tau[2]:>12}"
                     f"{fmt(precision.get(k), 2):>9}{seed_prec[0]:>13}{seed_prec[1]:>13}")
    note = few_rows_note(result["topk"])
    if note:
        lines.append(note)
    if s["bootstrap"]:
        lines.append(interval_note(result["n"]))
    return "\n".join(lines)


def interval_note(n: int) -> str:
    """What ``rank``'s two kinds of interval are: a statistic's CI and a top-K% row's band.

    >>> interval_note(49).split(";")[0]
    'CI: the 95% BCa bootstrap interval of a statistic over all 49 architectures (percentile where BCa degenerates or above 2,000 architectures)'
    """
    return (f"CI: the 95% BCa bootstrap interval of a statistic over all {n} architectures (percentile where BCa "
            "degenerates or above 2,000 architectures); band: the 95% percentile bootstrap interval of tau within "
            "a top-K% subset, its architectures resampled. At K = 100 the row's tau is Kendall tau-b above: its band "
            "and its CI differ only by the interval's method (BCa corrects the bootstrap distribution's bias and "
            "skew, the percentile band does not).")


#: significant digits of a float in JSON output (reports, ``--json``): far below any figure's
#: uncertainty, far above its last bits
JSON_DIGITS = 12


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float):  # strict JSON has no NaN/inf; 12 significant digits, so the last
        # bits of a sum (which SIMD width and memory alignment may change) never move a stored byte
        return float(f"{value:.{JSON_DIGITS}g}") if math.isfinite(value) else None
    return value


def to_json(result: dict, indent: int | None = None) -> str:
    """Strict JSON of a comparison result (numpy scalars as numbers, NaN/inf as null, floats to
    :data:`JSON_DIGITS` significant digits).

    >>> to_json({"tau": float("nan"), "n": 3, "r": 0.7424321100806416, "s": 0.7424321100806415})
    '{"tau": null, "n": 3, "r": 0.742432110081, "s": 0.742432110081}'
    """
    return json.dumps(_plain(result), indent=indent, allow_nan=False, default=str)
