"""Per-architecture LR landscapes: each cell trained at every LR of a log grid, and its own best LR.

A pipeline of ``kind = "landscape"`` trains every selected cell under one protocol at every
LR of a log grid (``[landscape]``, :class:`LandscapeSettings`), ``points_per_octave`` points per
doubling (2: ``2^(1/2)`` apart), with the pipeline's seeds; the protocol's own LR rule is
replaced by the grid LR (``lr_rule = "fixed"``), its schedule and epochs kept. Grid LRs are
``lr_min * 2^(k / points_per_octave)`` for integer ``k`` (computed so, a grid LR equals the
same LR of another store exactly: ``0.1 * 2^2`` is ``0.4``, and a landscape job at the LR a
retrain protocol used *is* that job).

Where a cell's best LR (the largest mean accuracy over seeds) sits at an edge of the LRs it
has, :func:`cell_grid` adds ``EXTEND_POINTS`` grid points past that edge, for that cell only,
up to ``extend`` rounds: the grid a cell has is a function of the finished runs alone, so
every rerun and every slice re-derives the same extensions.

>>> s = LandscapeSettings(lr_min=0.1, lr_max=0.4, points_per_octave=2)
>>> s.ks(), [round(s.lr(k), 4) for k in s.ks()], s.lr(4) == 0.1 * 4.0
([0, 1, 2, 3, 4], [0.1, 0.1414, 0.2, 0.2828, 0.4], True)
>>> acc = {0: [50.0, 51.0], 1: [55.0, 56.0], 2: [57.0, 58.0], 3: [58.0, 59.0], 4: [59.0, 60.0]}
>>> cell_grid(s, acc)  # best at the top edge: two more points past it
[0, 1, 2, 3, 4, 5, 6]
>>> acc.update({5: [58.0, 58.5], 6: [40.0, 42.0]})
>>> cell_grid(s, acc), best_k(acc)
([0, 1, 2, 3, 4, 5, 6], 4)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from ..errors import ConfigError

__all__ = ["LandscapeSettings", "EXTEND_POINTS", "cell_grid", "mean_curve", "best_k", "vertex",
           "bootstrap_best", "cross_fit"]

#: grid points added past an edge per extension round
EXTEND_POINTS = 2

#: ``k -> accuracy per seed`` of one cell (``nan``: that run diverged); keys are grid indices
Curve = Mapping[int, Sequence[float]]


@dataclass(frozen=True)
class LandscapeSettings:
    """``[landscape]`` of a ``kind = "landscape"`` pipeline.

    Attributes:
        lr_min: the grid's smallest LR (``k = 0``).
        lr_max: the grid's largest LR (rounded down to a grid point).
        points_per_octave: grid points per doubling of the LR (2: ``2^(1/2)`` apart).
        extend: extension rounds per cell at most (0: never extend).
        strata: path-depth scale thresholds (ascending); each stratum they cut must hold a cell
            of the selection (the report shows the strata; empty: no stratification asked).
        top_percent: the top-K% subset whose tau the report shows.
        reuse: a store to copy finished runs of the same jobs from (a run name or folder).
        study: the retrain run (name) whose claims quote this landscape (report only); ``None``:
            the run ``reuse`` names, if any.
        criterion: ``lr_validation`` runs (names or folders) whose maximal LRs (the paper's
            one-epoch criterion) the report shows beside the accuracy-optimal ones, on the cells
            both have (analysis only: never changes a stored result).
        centers: ``arch -> LR``, each a grid LR: every cell's initial grid is ``center_points``
            grid points around its own LR instead of ``lr_min .. lr_max`` (a longer budget's
            landscape around each cell's best LR at a shorter one; ``tools/landscape_centers.py``
            writes the table from a finished landscape). Empty: the one grid for every cell.
        center_points: points of a centred grid: ``(center_points - 1) // 2`` below the centre,
            the rest above it.
        recipe: ``RUN:LABEL`` names of stored protocol arms (e.g. ``nb201_cifar10_cpu:default``,
            the benchmark's recipe) whose runs of the same cells and seeds the report tests as
            one more fixed arm (analysis only: never changes a stored result).

    >>> s = LandscapeSettings(lr_min=0.1, points_per_octave=2, centers={"a": 0.4}, center_points=6)
    >>> s.initial_ks("a"), LandscapeSettings().initial_ks("a") == LandscapeSettings().ks()
    ([2, 3, 4, 5, 6, 7], True)
    >>> LandscapeSettings(centers={"a": 0.3})
    Traceback (most recent call last):
    ...
    nasrescale.errors.ConfigError: landscape.centers.a: 0.3 is not an LR of the grid 0.1 x 2^(k/2); use one (nearest: 0.2828), or change lr_min / points_per_octave
    """

    lr_min: float = 0.1
    lr_max: float = 1.6
    points_per_octave: int = 2
    extend: int = 3
    strata: tuple[float, ...] = ()
    top_percent: int = 50
    reuse: str | None = None
    study: str | None = None
    criterion: tuple[str, ...] = ()
    centers: dict[str, float] = field(default_factory=dict)
    center_points: int = 6
    recipe: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not (self.lr_min > 0 and math.isfinite(self.lr_min)) or not math.isfinite(self.lr_max):
            raise ConfigError(f"landscape.lr_min: expected a positive LR, got {self.lr_min}")
        if self.points_per_octave < 1:
            raise ConfigError(f"landscape.points_per_octave: expected >= 1, got {self.points_per_octave}")
        if len(self.ks()) < 3:
            raise ConfigError(f"landscape: the grid from lr_min = {self.lr_min:g} to lr_max = {self.lr_max:g} at "
                              f"{self.points_per_octave} points per octave has {len(self.ks())} point(s); a "
                              "landscape needs at least 3 (raise lr_max, lower lr_min or add points_per_octave)")
        if self.extend < 0:
            raise ConfigError(f"landscape.extend: the extension cap must be >= 0 rounds, got {self.extend}")
        if any(t <= 0 for t in self.strata) or list(self.strata) != sorted(set(self.strata)):
            raise ConfigError(f"landscape.strata: expected ascending positive path-depth scales, e.g. [0.5], "
                              f"got {list(self.strata)}")
        if not 1 <= self.top_percent <= 100:
            raise ConfigError(f"landscape.top_percent: a percentage in [1, 100], got {self.top_percent}")
        self._check_centers()

    def _check_centers(self) -> None:
        if self.center_points < 3:
            raise ConfigError(f"landscape.center_points: a centred grid needs at least 3 points, got {self.center_points}")
        for arch, lr in self.centers.items():
            k = self.k_of(lr) if lr > 0 and math.isfinite(lr) else math.nan
            if math.isnan(k) or abs(k - round(k)) > 1e-6:
                near = f" (nearest: {self.lr(round(k)):.4g})" if not math.isnan(k) else ""
                raise ConfigError(f"landscape.centers.{arch}: {lr:g} is not an LR of the grid {self.lr_min:g} x "
                                  f"2^(k/{self.points_per_octave}); use one{near}, or change lr_min / points_per_octave")

    def lr(self, k: int) -> float:
        """The LR of grid index ``k`` (negative below ``lr_min``)."""
        return self.lr_min * 2.0 ** (k / self.points_per_octave)

    def k_of(self, lr: float) -> float:
        """The (fractional) grid index of ``lr``."""
        return math.log2(lr / self.lr_min) * self.points_per_octave

    def ks(self) -> list[int]:
        """The initial grid's indices, ``0 .. K``."""
        top = math.floor(self.k_of(self.lr_max) + 1e-9) if self.lr_max > 0 else -1
        return list(range(0, top + 1))

    def initial_ks(self, arch: str | None) -> list[int]:
        """Cell ``arch``'s initial grid: :meth:`ks`, or ``center_points`` indices around its
        entry of ``centers`` where the table is given.

        Raises:
            ConfigError: ``centers`` is given but has no entry for ``arch``.
        """
        if not self.centers:
            return self.ks()
        if arch not in self.centers:
            raise ConfigError(f"landscape.centers: no centre LR for cell {arch!r}; add it to [landscape.centers] "
                              "(tools/landscape_centers.py writes the table from a finished landscape) or drop the cell")
        low = round(self.k_of(self.centers[arch])) - (self.center_points - 1) // 2
        return list(range(low, low + self.center_points))


def mean_curve(curve: Curve) -> dict[int, float]:
    """Mean accuracy over seeds per grid index (``nan`` where a seed diverged)."""
    return {k: float(np.mean(v)) if len(v) and not np.isnan(v).any() else math.nan for k, v in sorted(curve.items())}


def best_k(curve: Curve) -> int | None:
    """The grid index of the largest mean accuracy (an LR where a seed diverged never wins;
    among equal means the larger LR); ``None`` when every LR has a diverged seed."""
    means = [(m, k) for k, m in mean_curve(curve).items() if not math.isnan(m)]
    return max(means)[1] if means else None


def cell_grid(settings: LandscapeSettings, curve: Curve, arch: str | None = None) -> list[int]:
    """The grid indices cell ``arch`` trains at, given its finished runs ``curve`` (``k -> accuracies``;
    an index with fewer than all seeds is unfinished): its initial grid
    (:meth:`LandscapeSettings.initial_ks`), then per round, once every index so far is finished
    and the best sits at an edge, :data:`EXTEND_POINTS` more past it."""
    ks = settings.initial_ks(arch)
    seeds = max((len(v) for v in curve.values()), default=0)
    for _ in range(settings.extend):
        if seeds == 0 or any(len(curve.get(k, ())) < seeds for k in ks):
            break
        best = best_k({k: curve[k] for k in ks})
        if best == ks[-1]:
            ks = ks + [ks[-1] + i for i in range(1, EXTEND_POINTS + 1)]
        elif best == ks[0]:
            ks = [ks[0] - i for i in range(EXTEND_POINTS, 0, -1)] + ks
        else:
            break
    return ks


def vertex(curve: Curve) -> tuple[float | None, str | None]:
    """The fractional grid index of the vertex of a quadratic through the best mean and its two
    neighbours (clipped to theirs), and the edge (``low``/``high``) when the best has no
    neighbour on one side (then the best index itself). ``(None, None)``: nothing finished.

    >>> k, edge = vertex({0: [50.0], 1: [60.0], 2: [56.0]})
    >>> round(k, 4), edge
    (1.2143, None)
    >>> vertex({0: [60.0], 1: [55.0], 2: [50.0]})
    (0.0, 'low')
    """
    means = mean_curve(curve)
    best = best_k(curve)
    if best is None:
        return None, None
    lo, hi = means.get(best - 1, math.nan), means.get(best + 1, math.nan)
    if math.isnan(lo) or math.isnan(hi):
        return float(best), "low" if math.isnan(lo) else "high"
    mid = means[best]
    denom = lo - 2 * mid + hi
    if denom >= 0:  # flat or not concave: the best point itself
        return float(best), None
    return float(min(best + 1, max(best - 1, best + 0.5 * (lo - hi) / denom))), None


def bootstrap_best(curve: Curve, n_boot: int = 1000, seed: int = 0) -> tuple[float, float] | None:
    """A 95% percentile interval of the vertex (grid index) over bootstrap resamples of the
    seeds (the same resampled seeds at every LR); ``None`` with fewer than 2 seeds. With few
    seeds the resamples are few distinct ones: the interval is coarse, not a confidence level."""
    ks = sorted(curve)
    n = min(len(curve[k]) for k in ks) if ks else 0
    if n < 2:
        return None
    table = np.array([list(curve[k])[:n] for k in ks], dtype=float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(n_boot, n))
    values = [v for v in (vertex({k: table[i, p] for i, k in enumerate(ks)})[0] for p in picks) if v is not None]
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))


def cross_fit(curve: Curve) -> list[tuple[int, float]] | None:
    """Noise-free oracle scores: per seed ``s``, the best index chosen on the other seeds' mean and
    the accuracy seed ``s`` got there: ``[(chosen k, accuracy of s), ...]`` in seed order; ``None``
    with fewer than 2 seeds (nothing to choose on apart from the scored run).

    >>> cross_fit({0: [50.0, 60.0], 1: [58.0, 55.0]})
    [(0, 50.0), (1, 55.0)]
    """
    ks = sorted(curve)
    n = min(len(curve[k]) for k in ks) if ks else 0
    if n < 2:
        return None
    out = []
    for s in range(n):
        chosen = best_k({k: [v for i, v in enumerate(curve[k]) if i != s] for k in ks})
        out.append((chosen, float(curve[chosen][s])) if chosen is not None else (ks[0], math.nan))
    return out
