"""How one parameter is drawn under one init rule: :class:`InitSpec`, the scaling map's init entry.

>>> InitSpec(constant=0.0).constant, InitSpec().std((8, 8)) == 0.5
(0.0, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["InitSpec"]


@dataclass(frozen=True)
class InitSpec:
    """How one parameter is initialized under one rule.

    Attributes:
        constant: fill value (biases 0, BatchNorm weight 1 / bias 0); ``None`` for a drawn weight.
        divisor: ``d`` in ``std = sqrt(2 / (fan * d)) ** power``.
        fan_mode: ``fan_in`` or ``fan_out``.
        power: 1 (He) or 2 (the released code's readout, ``std = 2 / fan``).
        spectral: draw at the spectral scale instead, ``sqrt(2 / fan_in) * min(1, sqrt(fan_out /
            fan_in))`` (``divisor``, ``fan_mode`` and ``power`` are then unused).
    """

    constant: float | None = None
    divisor: float = 1.0
    fan_mode: str = "fan_in"
    power: int = 1
    spectral: bool = False

    def std(self, weight_shape: tuple[int, ...]) -> float:
        """Standard deviation of the draw for a weight of ``weight_shape``.

        >>> InitSpec(divisor=2).std((8, 4, 3, 3)) == math.sqrt(2 / (4 * 9 * 2))
        True
        >>> InitSpec(spectral=True).std((10, 40)) == math.sqrt(2 / 40) * math.sqrt(10 / 40)  # fan_out < fan_in
        True
        """
        receptive = math.prod(weight_shape[2:])
        fan_in, fan_out = weight_shape[1] * receptive, weight_shape[0] * receptive
        if self.spectral:
            return math.sqrt(2.0 / fan_in) * min(1.0, math.sqrt(fan_out / fan_in))
        fan = fan_in if self.fan_mode == "fan_in" else fan_out
        return math.sqrt(2.0 / (fan * self.divisor)) ** self.power
