"""The report of an LR-rule validation (``kind = "lr_validation"``): :mod:`.write`."""
