"""How every report figure is written (:func:`save_png`): matplotlib without pyplot state, the
Agg canvas attached explicitly, 130 dpi, tight bounds, written atomically."""

from __future__ import annotations

from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ...fileio import save_figure

__all__ = ["save_png"]

_DPI = 130


def save_png(fig: Figure, path: Path) -> Path:
    """Write ``fig`` to ``path`` as every report figure is: the Agg canvas attached explicitly (no
    GUI backend, no global state), 130 dpi, tight bounds, written atomically."""
    FigureCanvasAgg(fig)
    return save_figure(fig, path, dpi=_DPI, bbox_inches="tight")
