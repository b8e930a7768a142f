"""The proxy calibration (``[pipeline] kind = "calibration"``), whole: its candidate budgets
(:mod:`.budgets`: the ``[budgets.<label>]`` tables), its plan (:mod:`.plan`), its report
(:mod:`.write` from the ordered sections of :mod:`.sections` over the typed summary,
:mod:`.summary`; the proxy validity a study quotes, ``write.proxy_validity``) and its one entry
(:data:`.registration.CALIBRATION`)."""

from .registration import CALIBRATION

__all__ = ["CALIBRATION"]
