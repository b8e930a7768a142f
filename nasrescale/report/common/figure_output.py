"""How every report figure is written (:func:`save_png`): matplotlib without pyplot state, the
Agg canvas attached explicitly, 130 dpi, tight bounds, written atomically; and how a log axis
is labelled (:func:`log_ticks`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

from ...fileio import save_figure

__all__ = ["save_png", "log_ticks"]

_DPI = 130


def save_png(fig: Figure, path: Path) -> Path:
    """Write ``fig`` to ``path`` as every report figure is: the Agg canvas attached explicitly (no
    GUI backend, no global state), 130 dpi, tight bounds, written atomically."""
    FigureCanvasAgg(fig)
    return save_figure(fig, path, dpi=_DPI, bbox_inches="tight")


def log_ticks(axis: Any) -> None:
    """1-2-5 major ticks as plain numbers on a log ``axis`` (powers of 10 alone past 2.5 decades,
    where 1-2-5 labels would run into each other), unlabelled minor ticks. Call it once the
    axis's limits are final."""
    lo, hi = sorted(axis.get_view_interval())
    wide = lo > 0 and hi / lo > 300
    axis.set_major_locator(LogLocator(base=10, subs=(1.0,) if wide else (1.0, 2.0, 5.0)))
    axis.set_major_formatter(FormatStrFormatter("%g"))
    axis.set_minor_formatter(NullFormatter())
