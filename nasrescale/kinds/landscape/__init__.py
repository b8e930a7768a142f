"""The per-cell LR landscape (``[pipeline] kind = "landscape"``), whole: its ``[landscape]``
table (:mod:`.settings`), the per-cell grid rule (:mod:`.grid`), its plan and extensions
(:mod:`.plan`), its report (:mod:`.write` from the ordered sections of :mod:`.sections` over the
typed summary, :mod:`.summary` and :mod:`.figures`; its calibrated verdicts, :mod:`.verdicts`),
how a study's report quotes a landscape built on it (:mod:`.link`) and its one entry
(:data:`.registration.LANDSCAPE`). docs/architecture.md, "Pipeline kinds", walks through it."""

from .registration import LANDSCAPE

__all__ = ["LANDSCAPE"]
