"""``[landscape]``: the table only a landscape reads (:class:`LandscapeSettings`: its LR grid,
its extensions, its strata and what its report reads), and the grid it spans
(``lr_min * 2^(k / points_per_octave)``; the per-cell rule over it is :mod:`.grid`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...errors import ConfigError
from ...store.table_fields import LandscapeFields

__all__ = ["LandscapeSettings"]


@dataclass(frozen=True)
class LandscapeSettings(LandscapeFields):
    """``[landscape]`` of a ``kind = "landscape"`` pipeline, checked, and its grid (its fields,
    shared with the stored record :class:`~nasrescale.store.plans.LandscapeSettingsRecord`:
    :class:`~nasrescale.store.table_fields.LandscapeFields`).

    >>> s = LandscapeSettings(lr_min=0.1, points_per_octave=2, centers={"a": 0.4}, center_points=6)
    >>> s.initial_ks("a"), LandscapeSettings().initial_ks("a") == LandscapeSettings().ks()
    ([2, 3, 4, 5, 6, 7], True)
    >>> LandscapeSettings(centers={"a": 0.3})
    Traceback (most recent call last):
    ...
    nasrescale.errors.ConfigError: landscape.centers.a: 0.3 is not an LR of the grid 0.1 x 2^(k/2); use one (nearest: 0.2828), or change lr_min / points_per_octave
    """

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
