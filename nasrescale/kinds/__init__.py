"""The pipeline kinds, one package each (``kinds/<kind>/``): its own tables, its plan, its
report, and one :class:`~nasrescale.kinds.entry.KindEntry` (``registration.py``) from which the
pipeline loader, the report registry and the results index learn everything about it.

Importing this package registers the built-in kinds, in this order (the order the registries
list them, and the order a study's claims quote the runs of other kinds); the registries
import it themselves before they are first read.
"""

from . import retrain, lr_validation, calibration, trend, landscape  # noqa: F401  (each registers its entry)

__all__ = ["retrain", "lr_validation", "calibration", "trend", "landscape"]
