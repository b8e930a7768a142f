"""The bootstrap resample counts that the commands, the reports and README share.

Kept in a module of its own, with no imports, so that the command line can quote them in its
help without loading numpy or scipy.

>>> f"{VERDICT_BOOT:,} / {DEFAULT_BOOT:,}"
'9,999 / 1,000'
"""

from __future__ import annotations

__all__ = ["VERDICT_BOOT", "DEFAULT_BOOT"]

#: resamples behind the CI of a mean gain that a verdict reads: every report takes this many,
#: whatever ``--bootstrap`` says (:mod:`nasrescale.ranking.paired`)
VERDICT_BOOT = 9999

#: the default of ``rank --bootstrap`` and ``report --bootstrap``: the resamples behind the CIs of
#: tau, the correlations and the differences, and the top-K% bands
DEFAULT_BOOT = 1000
