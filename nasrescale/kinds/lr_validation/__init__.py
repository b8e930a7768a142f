"""The lr_validation kind (``[pipeline] kind = "lr_validation"``): its one entry, :data:`.registration.LR_VALIDATION`."""

from .registration import LR_VALIDATION

__all__ = ["LR_VALIDATION"]
