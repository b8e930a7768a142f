"""The report of a retrain run (``kind = "retrain"``, the study): :mod:`.write` writes it from the
ordered sections of :mod:`.sections`, each computing from the run's summary (:mod:`.summary`)."""
