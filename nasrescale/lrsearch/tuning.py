"""Tuning a protocol's global LR multiplier at the run's own budget (``[tuning]``, ``tune = true``).

A tuned protocol is trained on a few *tuning cells* at its anchor LR (the base LR it names, or
the one the LR search chose) times each multiplier of a grid, and keeps the multiplier of the
best **mean test accuracy** over those cells and seeds (the figure the benchmark reports). A
run that diverged counts at chance accuracy. On an exact tie the multiplier nearer x1 wins
(then the smaller). When the best multiplier is the grid's smallest or largest, the optimum may
lie beyond it: :func:`extend_multipliers` adds the next one past that edge (the grid's own ratio).

>>> c = choose_multiplier({0.5: [80.0, 70.0], 1.0: [82.0, 74.0], 2.0: [60.0, None]}, chance=10.0)
>>> c.chosen, c.edge, c.means[2.0]
(1.0, None, 35.0)
>>> choose_multiplier({0.5: [70.0], 1.0: [75.0]}).edge
'high'
>>> extend_multipliers([0.5, 1.0], "high")
[0.5, 1.0, 2.0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Sequence

from ..errors import ConfigError
from ..space.benchmark import dataset_classes

__all__ = ["TUNE_PREFIX", "TuningChoice", "chance_accuracy", "choose_multiplier", "extend_multipliers", "tune_label", "tuning_of", "is_stage_label"]

#: the store's ``protocol`` column of a tuning job: ``tune:<protocol label>@x<multiplier>``
TUNE_PREFIX = "tune:"

#: labels of jobs that choose an LR (the LR search, the tuning), not a protocol's results
_STAGE_PREFIXES = ("lr-search:", TUNE_PREFIX)


def tune_label(label: str, multiplier: float) -> str:
    """The stored label of protocol ``label``'s tuning job at ``multiplier``.

    >>> tune_label("flat", 0.25)
    'tune:flat@x0.25'
    """
    return f"{TUNE_PREFIX}{label}@x{multiplier:g}"


def tuning_of(label: str) -> tuple[str, str] | None:
    """``(protocol, "x<multiplier>")`` of a tuning job's stored label (:func:`tune_label`);
    ``None`` for any other label.

    >>> tuning_of("tune:flat@x0.25"), tuning_of("flat")
    (('flat', 'x0.25'), None)
    """
    if not label.startswith(TUNE_PREFIX) or "@" not in label:
        return None
    protocol, _, multiplier = label[len(TUNE_PREFIX):].rpartition("@")
    return protocol, multiplier


def is_stage_label(label: str) -> bool:
    """Whether a stored label belongs to an LR search or a tuning job (no protocol's result).

    >>> is_stage_label("lr-search:rescaled"), is_stage_label("tune:flat@x2"), is_stage_label("flat")
    (True, True, False)
    """
    return label.startswith(_STAGE_PREFIXES)


@dataclass(frozen=True)
class TuningChoice:
    """The best multiplier of a tuned protocol.

    Attributes:
        chosen: the multiplier of the best mean accuracy.
        means: multiplier -> mean test accuracy over the tuning cells and seeds (diverged at chance).
        edge: ``"low"``/``"high"`` when ``chosen`` is the grid's smallest/largest multiplier.
        diverged: multiplier -> how many of its runs diverged.
    """

    chosen: float
    means: dict[float, float]
    edge: Literal["low", "high"] | None = None
    diverged: dict[float, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready (multipliers as strings, as JSON keys must be)."""
        return {"chosen": self.chosen, "edge": self.edge, "means": {f"{m:g}": v for m, v in self.means.items()},
                "diverged": {f"{m:g}": n for m, n in self.diverged.items()}}


def chance_accuracy(dataset: str) -> float:
    """The accuracy (percent) a diverged tuning run counts as: 100 / the dataset's classes
    (10 classes for a dataset the benchmark does not have).

    >>> chance_accuracy("cifar10"), chance_accuracy("cifar100"), chance_accuracy("imagenet16-120")
    (10.0, 1.0, 0.8333333333333334)
    """
    return 100.0 / (dataset_classes(dataset) or 10)


def choose_multiplier(accuracies: Mapping[float, Sequence[float | None]], chance: float = 10.0) -> TuningChoice:
    """The multiplier of the best mean accuracy (module docstring).

    Args:
        accuracies: multiplier -> test accuracy (percent) of each tuning run; ``None`` or NaN:
            the run diverged (counted at ``chance``).
        chance: the accuracy a diverged run counts as (100 / classes).

    Raises:
        ConfigError: no multipliers, or a multiplier without runs.
    """
    if not accuracies:
        raise ConfigError("tuning.multipliers: empty; give at least one multiplier, e.g. [0.5, 1, 2]")
    means: dict[float, float] = {}
    diverged: dict[float, int] = {}
    for m in sorted(accuracies):
        runs = list(accuracies[m])
        if not runs:
            raise ConfigError(f"tuning: multiplier x{m:g} has no runs; give tuning.cells >= 1")
        bad = sum(1 for a in runs if a is None or not math.isfinite(a))
        values = [chance if a is None or not math.isfinite(a) else float(a) for a in runs]
        means[m], diverged[m] = sum(values) / len(values), bad
    best = max(means.values())
    chosen = min((m for m, v in means.items() if v == best), key=lambda m: (abs(math.log(m)), m))
    grid = sorted(means)
    edge: Literal["low", "high"] | None = None
    if len(grid) > 1 and chosen == grid[0]:
        edge = "low"
    elif len(grid) > 1 and chosen == grid[-1]:
        edge = "high"
    return TuningChoice(chosen, means, edge, diverged)


def extend_multipliers(multipliers: Sequence[float], edge: str | None) -> list[float]:
    """``multipliers`` (ascending) with one more past ``edge``, at the ratio of the two nearest.

    >>> extend_multipliers([0.25, 0.5, 1.0], "low")
    [0.125, 0.25, 0.5, 1.0]
    >>> extend_multipliers([1.0], "high")
    [1.0, 2.0]
    """
    grid = sorted(multipliers)
    if edge is None:
        return grid
    ratio = grid[1] / grid[0] if len(grid) > 1 else 2.0
    if edge == "low":
        return [float(f"{grid[0] / ratio:.6g}"), *grid]
    return [*grid, float(f"{grid[-1] * ratio:.6g}")]
