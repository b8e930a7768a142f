"""The retrain run, the study (``[pipeline] kind = "retrain"``, a pipeline's default), whole:
its plan (:mod:`.plan`: architecture x protocol x seed; it reads only the shared tables and the
stages' ``[lr_search]`` and ``[tuning]``), its report (:mod:`.write` writes it from the ordered
sections of :mod:`.sections`, each computing from the run's typed summary, :mod:`.summary`, in
one module per section or its pieces) and its one entry (:data:`.registration.RETRAIN`)."""

from .registration import RETRAIN

__all__ = ["RETRAIN"]
