"""Text rendering of a ranking comparison (what ``nasrescale rank`` prints without ``--json``)."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["format_table", "fmt", "to_json", "degenerate_note"]


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
    cells = f"{count} degenerate cell{'s' if count > 1 else ''}"
    if excluded:
        return (f"Statistics leave out {cells} (no input-output path: recorded at chance accuracy, so any two sources "
                f"rank {'them' if count > 1 else 'it'} last together); n = {result['n']} without "
                f"{'them' if count > 1 else 'it'}; {switch} counts {'them' if count > 1 else 'it'}.")
    return f"Statistics count {cells} (at chance accuracy by construction), as asked; n = {result['n']}."


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
    if result["n"] < 3:
        lines.append("fewer than 3 architectures to rank: rank statistics are undefined")
    lines += ["", f"{'statistic':<22}{'value':>10}  95% CI ({s['bootstrap']} bootstrap resamples)"]
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
    head = f"{'top-K%':>7}{'n':>6}{'tau A,B':>10}{'seed tau A':>12}{'seed tau B':>12}{'prec@K':>9}"
    lines += ["", f"top-K% curve (subset by {s['topk_by']} source; tau null below 3 rows)", head]
    band = {side: {e["k_percent"]: e["kendall_tau"] for e in (noise.get(side) or {}).get("topk", [])}
            for side in ("a", "b")}
    precision = {e["k_percent"]: e["precision"] for e in result["precision_at_k"]}
    for entry in result["topk"]:
        k = entry["k_percent"]
        lines.append(f"{k:>7}{entry['n']:>6}{fmt(entry['kendall_tau']):>10}{fmt(band['a'].get(k)):>12}"
                     f"{fmt(band['b'].get(k)):>12}{fmt(precision.get(k), 2):>9}")
    return "\n".join(lines)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None  # strict JSON has no NaN/inf
    return value


def to_json(result: dict, indent: int | None = None) -> str:
    """Strict JSON of a comparison result (numpy scalars as numbers, NaN/inf as null).

    >>> to_json({"tau": float("nan"), "n": 3})
    '{"tau": null, "n": 3}'
    """
    return json.dumps(_plain(result), indent=indent, allow_nan=False)
