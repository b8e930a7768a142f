"""The verdicts a report's claims draw from its numbers: the mean gain against none and against
the paper's figure, tau against the seed-noise floor, and each 2x2 effect in words; below
:data:`MIN_TOPK_ROWS` cells the figures are given without a verdict.

>>> pair = {"mean_diff": -1.39, "ci": {"mean_diff": [-1.94, -0.96]}, "kendall_tau": 0.5, "n": 40}
>>> text = gain_claim(pair, "cifar10")
>>> "cannot tell" in text, "excludes both 0 and the paper's +0.44" in text
(False, True)
"""

from __future__ import annotations

from typing import Any, Mapping

from ...ranking.bands import MIN_TOPK_ROWS
from ...ranking.text import fmt
from .seed_floor import floor_clause
from .robust import companions, robust_sentence, verdict_words

__all__ = ["PAPER_GAIN", "paper_gain", "pair_ci", "too_few", "cells_text", "noise_floor", "tau_level", "gain_claim",
           "ranking_claim", "effect_claim"]


#: the paper's mean gain in accuracy points over NAS-Bench-201's published accuracies (§4.3)
PAPER_GAIN = {"cifar10": 0.44, "cifar100": 1.24, "imagenet16-120": 2.09}


def paper_gain(dataset: str | None) -> float | None:
    """The paper's gain on a benchmark dataset, named as a pipeline's ``data.name`` names it.

    >>> paper_gain("imagenet16-120"), paper_gain("imagenet16_120"), paper_gain("cifar10"), paper_gain("cifar10-subset")
    (2.09, 2.09, 0.44, None)
    """
    return PAPER_GAIN.get(str(dataset).replace("imagenet16_120", "imagenet16-120"))


def pair_ci(pair: Mapping[str, Any], key: str) -> tuple[float, float] | None:
    ci = (pair.get("ci") or {}).get(key)
    return (float(ci[0]), float(ci[1])) if ci and None not in ci else None


def too_few(pair: Mapping[str, Any]) -> bool:
    """Fewer than :data:`MIN_TOPK_ROWS` cells compared: a bootstrap over them carries no verdict."""
    return (pair.get("n") or 0) < MIN_TOPK_ROWS


def cells_text(pair: Mapping[str, Any]) -> str:
    """How many cells a claim rests on, and that they are too few.

    >>> cells_text({"n": 1}), cells_text({"n": 6})
    ('1 cell: fewer than 10, too few for a verdict', '6 cells: fewer than 10, too few for a verdict')
    """
    n = pair.get("n") or 0
    return f"{n} cell{'' if n == 1 else 's'}: fewer than {MIN_TOPK_ROWS}, too few for a verdict"


def _paper_words(ci: tuple[float, float], paper: float | None, word: str) -> str:
    """Where the paper's figure lies against the CI, after the verdict ``word``."""
    if paper is None:
        return ""
    has_paper = ci[0] <= paper <= ci[1]
    if word == "none":
        return ""
    both = "both 0 and " if word in ("better", "worse") else ""
    return (f"; the CI is consistent with the paper's +{paper:.2f}" if has_paper else
            f"; the CI excludes {both}the paper's +{paper:.2f}")


def gain_claim(pair: Mapping[str, Any], dataset: str | None, names: Mapping[str, str] | None = None) -> str:
    """Claim (1): the mean gain (B - A) with its CI, beside the paper's figure, which is against
    the benchmark's published accuracies with networks trained "till converge" (§4.3). Where the
    pair carries its robust companions (``paired``), the CI and the verdict are theirs."""
    robust = pair.get("paired") or {}
    gain = pair.get("mean_diff")
    ci = tuple(robust["ci"]) if robust.get("ci") else pair_ci(pair, "mean_diff")
    paper = paper_gain(dataset)
    if gain is None or ci is None:
        return "Mean gain: not enough finished cells for a confidence interval."
    if too_few(pair):
        return f"Mean gain of B over A: {gain:+.2f} points so far, on {cells_text(pair)}."
    text = f"Mean gain of B over A: {gain:+.2f} points, 95% CI [{ci[0]:+.2f}, {ci[1]:+.2f}] over {pair.get('n')} cells"
    if robust.get("ci"):
        text += f" ({robust['n_boot']:,} resamples), {companions(robust, names)}"
    if paper is not None:
        text += (f"; the paper reports +{paper:.2f} against NAS-Bench-201's published accuracies, with networks "
                 "trained \"till converge\" (§4.3), a budget far beyond this one")
    word = robust.get("verdict") if robust.get("ci") else (
        "none" if ci[0] <= 0 <= ci[1] else "better" if ci[0] > 0 else "worse")
    if word == "none":
        verdict = (f"the CI holds both 0 and +{paper:.2f}: this budget cannot tell the paper's gain from none"
                   if paper is not None and ci[0] <= paper <= ci[1] else "this budget cannot tell a gain from none")
    elif word in ("better", "worse"):
        verdict = f"B trains these cells {word} at this budget"
    else:
        verdict = verdict_words(robust, "B", names)
    return f"{text}: {verdict}{_paper_words(ci, paper, word)}."


def noise_floor(pair: Mapping[str, Any]) -> list[float]:
    noise = [((pair.get("seed_noise") or {}).get(side) or {}).get("kendall_tau") for side in ("a", "b")]
    return [n for n in noise if n is not None]


def tau_level(tau: float, ci: tuple[float, float] | None, noise: list[float]) -> str:
    """Where tau sits against the seed-noise floor: ``beyond`` (CI below it), ``unclear`` (tau
    below it, CI reaching it) or ``seed`` (at or above it)."""
    floor = min(noise)
    if ci is not None and ci[1] < floor:
        return "beyond"
    return "unclear" if tau < floor else "seed"


def ranking_claim(pair: Mapping[str, Any], setting: str = "") -> str:
    """Claim (2): tau between the protocols against tau between each protocol's seeds, a
    statement about the protocols as run here (``setting``: e.g. B's base LR and its range)."""
    tau, ci = pair.get("kendall_tau"), pair_ci(pair, "kendall_tau")
    noise = noise_floor(pair)
    if tau is None:
        return "Ranking: not enough finished cells."
    if too_few(pair):
        return f"Kendall tau between A and B: {fmt(tau)} so far, on {cells_text(pair)}."
    text = f"Kendall tau between A and B: {fmt(tau)}" + (f" [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else "")
    if not noise:
        return text + "; with one seed there is no noise floor to compare it with."
    floor = floor_clause(pair.get("per_run_kendall_tau"), noise, ci)
    if floor:  # like for like: single runs across the protocols against single runs across seeds
        return (f"Kendall tau between A's and B's means over seeds: {text.split(': ', 1)[1]}; like for like, "
                f"{floor}" + (f" (at this LR setting: {setting})" if setting else "") + ".")
    where = f" at this LR setting ({setting})" if setting else " as run here"
    text += f"; between one protocol's seeds: {', '.join(fmt(n) for n in noise)}"
    return text + {
        "beyond": f": over all cells, the protocols{where} rank them differently by more than seed noise does.",
        "unclear": ": below the seed-vs-seed tau, but its CI reaches it; not clearly beyond seed noise.",
        "seed": ": the protocols agree about as well as two seeds do; no ranking change beyond noise."}[
        tau_level(tau, ci, noise)]


def effect_claim(row: Mapping[str, Any], names: Mapping[str, str] | None = None) -> str:
    """One effect of the 2x2 (a row of :func:`~nasrescale.kinds.retrain.effects.effect_rows`) in words:
    its gain against none, its tau against the seed-noise tau of both arms on the same cells.

    >>> effect_claim({"effect": "path-depth vs global LR, in-degree init", "a": "flat", "b": "principled",
    ...               "n": 51, "gain": 0.1, "gain_ci": [-0.3, 0.5], "kendall_tau": 0.8,
    ...               "kendall_tau_ci": [0.7, 0.87], "seed_tau_a": 0.8, "seed_tau_b": 0.77})
    'path-depth vs global LR, in-degree init (principled - flat, 51 cells): gain +0.10 [-0.30, +0.50], no difference this budget can tell from zero; tau 0.800 [0.700, 0.870] against seed-vs-seed 0.800, 0.770, about as well as two seeds agree.'

    Below :data:`MIN_TOPK_ROWS` cells a bootstrap CI over cells says little, so no verdict is drawn:

    >>> effect_claim({"effect": "tuning alone", "a": "default", "b": "tuned", "n": 4, "gain": 0.04,
    ...               "gain_ci": [-0.47, 0.85], "kendall_tau": 0.333, "kendall_tau_ci": [-1.0, 1.0]})
    'tuning alone (tuned - default, 4 cells): gain +0.04, tau 0.333 so far; fewer than 10 cells, too few for a verdict.'
    """
    gain, ci = row.get("gain"), row.get("gain_ci")
    text = f"{row['effect']} ({row['b']} - {row['a']}, {row['n']} cell{'' if row['n'] == 1 else 's'}): "
    if (row.get("n") or 0) < MIN_TOPK_ROWS:
        figures = [f"gain {gain:+.2f}" if gain is not None else "",
                   f"tau {fmt(row['kendall_tau'])}" if row.get("kendall_tau") is not None else ""]
        shown = ", ".join(f for f in figures if f)
        return text + (f"{shown} so far; " if shown else "") + f"fewer than {MIN_TOPK_ROWS} cells, too few for a verdict."
    if row.get("robust") and row["robust"].get("ci"):
        text += robust_sentence(row["robust"], row["b"], names)
    elif gain is None or not ci or None in ci:
        text += "too few cells for a gain with a CI"
    else:
        verdict = (f"{row['b']} better" if ci[0] > 0 else f"{row['b']} worse" if ci[1] < 0
                   else "no difference this budget can tell from zero")
        text += f"gain {gain:+.2f} [{ci[0]:+.2f}, {ci[1]:+.2f}], {verdict}"
    tau, tau_ci = row.get("kendall_tau"), row.get("kendall_tau_ci")
    tau_ci = (float(tau_ci[0]), float(tau_ci[1])) if tau_ci and None not in tau_ci else None
    noise = [n for n in (row.get("seed_tau_a"), row.get("seed_tau_b")) if n is not None]
    if tau is None:
        return text + "."
    text += f"; tau {fmt(tau)}" + (f" [{fmt(tau_ci[0])}, {fmt(tau_ci[1])}]" if tau_ci else "")
    if not noise:
        return text + " (one seed: no noise floor)."
    floor = floor_clause(row.get("per_run_tau"), noise, tau_ci)
    if floor:
        return text + f" (means over seeds); like for like, {floor}."
    return text + f" against seed-vs-seed {', '.join(fmt(n) for n in noise)}, " + {
        "beyond": "a ranking change beyond seed noise.", "unclear": "below seed noise but its CI reaches it.",
        "seed": "about as well as two seeds agree."}[tau_level(tau, tau_ci, noise)]
