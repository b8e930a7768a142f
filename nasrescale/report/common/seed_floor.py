"""The seed-noise floor, like for like: tau between single runs across two protocols against tau
between single runs of one protocol's seeds.

The seed-noise tau compares two single runs (seed 0 against seed 1); tau(A, B) of the two
protocols' means over seeds averages the noise away and so sits higher than any single-run tau.
:func:`floor_clause` therefore sets the single-run tau across the protocols (the mean over every
pairing of a seed of A with a seed of B, :func:`~nasrescale.ranking.compare.compare`'s
``per_run_kendall_tau``) beside the seed-vs-seed taus; tau of the means is given, never compared
with them.

>>> print(floor_clause({"kendall_tau": 0.77, "min": 0.75, "max": 0.79, "pairs": 4}, [0.8, 0.73]))
single runs across the protocols 0.770 (mean of 4 seed pairings, 0.750 to 0.790) against single runs between one protocol's seeds 0.800, 0.730: about as well as two seeds agree
>>> floor_clause({"kendall_tau": 0.5, "min": 0.45, "max": 0.55, "pairs": 4}, [0.8, 0.73], [0.4, 0.6]).endswith(
...     "stays below them: a ranking change beyond seed noise")
True
>>> floor_clause({"kendall_tau": 0.5, "min": 0.45, "max": 0.55, "pairs": 4}, [0.8, 0.73], [0.4, 0.75]).endswith(
...     "reaches the seed level: not clearly beyond seed noise")
True
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...ranking.text import fmt

__all__ = ["floor_level", "floor_clause"]


def floor_level(per_run: Mapping[str, Any], noise: Sequence[float], tau_ci: Sequence[float] | None = None) -> str:
    """``beyond`` (every single-run pairing below the lowest seed tau, and the CI of tau between the
    means too), ``all_below`` (every pairing below it, the CI reaching it), ``below`` (their mean
    below it) or ``seed`` (at or above it)."""
    floor = min(noise)
    if per_run.get("max") is not None and per_run["max"] < floor:
        return "beyond" if tau_ci is not None and tau_ci[1] < floor else "all_below"
    return "below" if per_run["kendall_tau"] < floor else "seed"


def floor_clause(per_run: Mapping[str, Any] | None, noise: Sequence[float],
                 tau_ci: Sequence[float] | None = None) -> str:
    """Single-run tau across the protocols against the seed-vs-seed taus, in words (``tau_ci``: the
    CI of tau between the means over seeds, which a verdict "beyond seed noise" also needs below
    the seed level); empty without both."""
    if not per_run or per_run.get("kendall_tau") is None or not noise:
        return ""
    spread = (f", {fmt(per_run['min'])} to {fmt(per_run['max'])}"
              if per_run.get("min") is not None and per_run.get("max") is not None else "")
    text = (f"single runs across the protocols {fmt(per_run['kendall_tau'])} (mean of {per_run.get('pairs')} seed "
            f"pairings{spread}) against single runs between one protocol's seeds {', '.join(fmt(n) for n in noise)}")
    return text + ": " + {
        "beyond": "every single-run pairing across the protocols agrees less than the seeds do, and the CI of tau "
                  "between the means stays below them: a ranking change beyond seed noise",
        "all_below": "every single-run pairing across the protocols agrees less than the seeds do, but the CI of "
                     "tau between the means reaches the seed level: not clearly beyond seed noise",
        "below": "below the seed-vs-seed tau, though some pairings reach it: not clearly beyond seed noise",
        "seed": "about as well as two seeds agree"}[floor_level(per_run, noise, tau_ci)]
