"""The report of a budget trend (``kind = "trend"``): :mod:`.write` writes it from the ordered
sections of :mod:`.sections` over the run's summary (:mod:`.summary`); :mod:`.link` is how a retrain
report quotes a trend built on it."""
