"""The report of a proxy calibration (``kind = "calibration"``): :mod:`.write`."""
