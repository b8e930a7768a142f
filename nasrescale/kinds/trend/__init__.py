"""The trend kind (``[pipeline] kind = "trend"``): its one entry, :data:`.registration.TREND`."""

from .registration import TREND

__all__ = ["TREND"]
