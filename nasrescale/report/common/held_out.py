"""The cells a run's evaluation leaves out: its LR tuning's cells and the cells isomorphic to them.

A tuned protocol chose its LR on its tuning cells; evaluating it on those cells (or on cells
computing the same function) would score the choice on the data that made it. By default every
statistic of a report leaves them out (:func:`held_out`, :func:`without`) and the page says so
once; ``nasrescale report NAME --include-tuning-cells`` counts them, for a sensitivity check.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Collection, Mapping

from ...errors import NasRescaleError
from ...lrsearch.tuning import TUNE_PREFIX
from ...ranking.sources import Source
from ...space.isomorphism import canonical_form
from ...space.family_loader import get_family
from ...store.read import StoreData

__all__ = ["tuning_cells", "held_out", "without", "held_out_note"]


def tuning_cells(store: StoreData) -> set[str]:
    """The cells the store's LR tunings trained (jobs labelled ``tune:<protocol>@x<m>``)."""
    jobs = store.jobs
    return set(jobs.loc[jobs["protocol"].astype(str).str.startswith(TUNE_PREFIX), "arch"].astype(str))


def held_out(tuning: Collection[str], evaluated: Collection[str], family: Any) -> dict[str, str]:
    """``{cell: why}`` for every cell of ``evaluated`` that is a tuning cell (``"tuning cell"``) or
    isomorphic to one (``"isomorphic to <tuning cell>"``); isomorphism only where ``family`` is
    installed here.

    >>> held_out(["2_20_101"], ["0_10_211", "2_20_101", "3_33_333"], "nb201")
    {'0_10_211': 'isomorphic to 2_20_101', '2_20_101': 'tuning cell'}
    """
    out = {cell: "tuning cell" for cell in evaluated if cell in set(tuning)}
    try:
        fam = get_family(str(family or "nb201"))
        forms = {canonical_form(cell, fam): cell for cell in sorted(tuning)}
        for cell in evaluated:
            twin = forms.get(canonical_form(cell, fam))
            if cell not in out and twin is not None:
                out[cell] = f"isomorphic to {twin}"
    except (NasRescaleError, ValueError, KeyError):
        pass
    return dict(sorted(out.items()))


def without(source: Source, cells: Collection[str]) -> Source:
    """``source`` less the runs of ``cells``."""
    if not cells:
        return source
    return replace(source, runs=source.runs[~source.runs["arch"].isin(list(cells))])


def held_out_note(cells: Mapping[str, str], names: Mapping[str, str], switch: str, included: bool) -> str:
    """The page's one sentence on the tuning cells: how many, which, and the switch.

    >>> held_out_note({"a": "tuning cell", "b": "isomorphic to a"}, {}, "`x`", False)
    '**Tuning cells are out of every statistic:** 2 cells, 1 tuning cell (a) and 1 isomorphic to one (b, as a), are left out of every comparison below; `x` counts them.'
    """
    if not cells:
        return ""
    tuned = [names.get(c, c) for c, why in cells.items() if why == "tuning cell"]
    twins = [f"{names.get(c, c)}, as {names.get(why.split()[-1], why.split()[-1])}"
             for c, why in cells.items() if why != "tuning cell"]
    parts = ([f"{len(tuned)} tuning cell{'' if len(tuned) == 1 else 's'} ({', '.join(tuned)})"] if tuned else []) + \
        ([f"{len(twins)} isomorphic to one ({'; '.join(twins)})"] if twins else [])
    what = f"{len(cells)} cell{'' if len(cells) == 1 else 's'}, " + " and ".join(parts)
    if included:
        return (f"**Tuning cells counted (sensitivity check):** {what}, are counted in every statistic below; "
                "by default they are left out.")
    tail = f"; {switch} counts them." if switch else " (the tuning of the run it reuses chose its tuned LRs)."
    return f"**Tuning cells are out of every statistic:** {what}, are left out of every comparison below{tail}"
