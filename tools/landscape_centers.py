"""Print a finished landscape's ``[landscape.centers]`` table: each cell's best LR, the centre of
its grid in a longer budget's landscape on the same cells (``kind = "landscape"``, ``centers``).

    python tools/landscape_centers.py results/landscape_nb201_cpu [--cells 1_21_010 4_03_440 ...]

Only cells whose landscape is complete are written; ``--cells`` keeps those named (in that order)
and refuses a name the run has no complete landscape of. Paste the lines into the longer run's
pipeline file beside its ``[landscape]`` table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nasrescale.kinds.landscape.cells import read_cells, read_plan  # noqa: E402
from nasrescale.kinds.landscape.centers import centers_toml  # noqa: E402
from nasrescale.errors import NasRescaleError  # noqa: E402
from nasrescale.space.encodings import format_arch, parse_arch  # noqa: E402
from nasrescale.space.family_loader import get_family  # noqa: E402
from nasrescale.store.read import StoreData, read_store, store_path  # noqa: E402


def short_name(store: StoreData):
    """A cell as its family's digit string where it has one (NB201: ``1_21_010``), else as stored."""
    family = get_family(store.record.family_or("nb201"))

    def name(arch: str) -> str:
        try:
            return format_arch(parse_arch(arch, family), family, "digits")
        except NasRescaleError:
            return arch
    return name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a landscape run's folder (holding store.sqlite or store.sqlite.gz)")
    parser.add_argument("--cells", nargs="+", help="only these cells, in this order (default: every complete cell)")
    args = parser.parse_args(argv)
    store = read_store(store_path(args.run))
    cells, _ = read_cells(store)
    if args.cells:
        name = short_name(store)
        by = {**{c.arch: c for c in cells}, **{name(c.arch): c for c in cells}}
        missing = [a for a in args.cells if a not in by]
        if missing:
            parser.error(f"--cells: no complete landscape of {', '.join(missing)} in {args.run}; "
                         f"complete: {', '.join(name(c.arch) for c in cells) or 'none'}")
        cells = [by[a] for a in args.cells]
    print("\n".join(centers_toml(cells, read_plan(store)[1], args.run.name, short_name(store))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
