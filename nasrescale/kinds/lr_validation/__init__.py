"""The LR-rule validation (``[pipeline] kind = "lr_validation"``), whole: its ``[validation]``
table (:mod:`.settings`), its plan and grid extensions (:mod:`.plan`, :mod:`.grid`; the stored
plan's analysis is :mod:`nasrescale.lrsearch.validation`'s, which the landscape's criterion reads
too), its report (:mod:`.write` from the ordered sections of :mod:`.sections` over the typed
summary, :mod:`.summary`; its censored fits, :mod:`.censored`) and its one entry
(:data:`.registration.LR_VALIDATION`)."""

from .registration import LR_VALIDATION

__all__ = ["LR_VALIDATION"]
