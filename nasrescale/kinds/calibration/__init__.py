"""The calibration kind (``[pipeline] kind = "calibration"``): its one entry, :data:`.registration.CALIBRATION`."""

from .registration import CALIBRATION

__all__ = ["CALIBRATION"]
