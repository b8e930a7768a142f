"""The retrain kind (``[pipeline] kind = "retrain"``): its one entry, :data:`.registration.RETRAIN`."""

from .registration import RETRAIN

__all__ = ["RETRAIN"]
