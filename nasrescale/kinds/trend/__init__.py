"""The budget trend (``[pipeline] kind = "trend"``), whole: its ``[trend]`` table
(:mod:`.settings`), its plan (:mod:`.plan`), its report (:mod:`.write` writes it from the
ordered sections of :mod:`.sections` over the run's typed summary, :mod:`.summary`), how a
study's report quotes a trend built on it (:mod:`.link`), and its one entry
(:data:`.registration.TREND`)."""

from .registration import TREND

__all__ = ["TREND"]
