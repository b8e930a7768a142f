"""``[validation]``: the table only an LR validation reads (:class:`ValidationSettings`).

>>> ValidationSettings(kernels=(3, 5)).kernels
(3, 5)
>>> ValidationSettings(kernels=(4,))
Traceback (most recent call last):
...
nasrescale.errors.ConfigError: validation.kernels: expected distinct odd sizes, got [4]
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ConfigError

__all__ = ["ValidationSettings"]


@dataclass(frozen=True)
class ValidationSettings:
    """``[validation]`` of an ``lr_validation`` pipeline.

    Attributes:
        kernels: conv kernel sizes to validate (each family conv op takes each in turn); empty:
            the family as it is. Must contain the family's ``kernel_base`` when given.
    """

    kernels: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if any(k < 1 or k % 2 == 0 for k in self.kernels) or len(set(self.kernels)) != len(self.kernels):
            raise ConfigError(f"validation.kernels: expected distinct odd sizes, got {list(self.kernels)}")
