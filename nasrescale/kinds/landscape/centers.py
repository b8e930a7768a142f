"""A finished landscape's best LR per cell as a ``[landscape.centers]`` table: the grid centres of
a longer budget's landscape on the same cells (``tools/landscape_centers.py`` prints it).

>>> from nasrescale.kinds.landscape.settings import LandscapeSettings
>>> from nasrescale.kinds.landscape.cells import CellLandscape
>>> s = LandscapeSettings(lr_min=0.1, lr_max=0.4, points_per_octave=2)
>>> cell = CellLandscape("1_21_010", 1.0, 1.0, {1: [50.0], 2: [60.0], 3: [55.0]}, best=2, vertex=2.1,
...                      edge=None, vertex_ci=None, cross=None)
>>> print("\\n".join(centers_toml([cell], s, "my_landscape")))
[landscape.centers]  # each cell's best LR (largest mean accuracy over seeds) in my_landscape
"1_21_010" = 0.2  # path-depth scale 1.000
>>> LandscapeSettings(lr_min=0.1, centers={"1_21_010": 0.2}).initial_ks("1_21_010")
[0, 1, 2, 3, 4, 5]
"""

from __future__ import annotations

from typing import Callable, Sequence

from .settings import LandscapeSettings
from .cells import CellLandscape

__all__ = ["centers_toml"]


def centers_toml(cells: Sequence[CellLandscape], settings: LandscapeSettings, source: str,
                 name: Callable[[str], str] = str) -> list[str]:
    """TOML lines of ``[landscape.centers]``: each cell (keyed by ``name(arch)``, e.g. a shorter
    encoding) with its argmax grid LR, written so it reads back as the same grid point (``repr``
    of the float), and its path-depth scale beside it. A cell whose best is still at an edge of
    its grid (extension cap reached) is marked so."""
    lines = [f"[landscape.centers]  # each cell's best LR (largest mean accuracy over seeds) in {source}"]
    for cell in cells:
        note = f"  # path-depth scale {cell.lr_scale:.3f}"
        if cell.edge is not None:
            note += f"; still at the {cell.edge} edge of its grid"
        lines.append(f'"{name(cell.arch)}" = {settings.lr(cell.best)!r}{note}')
    return lines
