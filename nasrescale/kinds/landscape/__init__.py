"""The landscape kind (``[pipeline] kind = "landscape"``): its one entry, :data:`.registration.LANDSCAPE`."""

from .registration import LANDSCAPE

__all__ = ["LANDSCAPE"]
