"""How one kind's report quotes the runs of another kind built on its run, without importing
that kind's package: a :class:`RunLink`.

A study's claims end with a sentence per trend and per landscape built on it. The retrain
report takes its links as a value (``links=``: :func:`nasrescale.report.kind_reports.run_links`, every
registered kind's); each linked kind's package defines its own :class:`RunLink` (the trend's in
``kinds/trend/link.py``, the landscape's in ``kinds/landscape/link.py``), which reads the sibling
runs' ``report.json`` (never their stores or writers), and its entry carries it
(``KindReport.link``). Quoting a new kind is one :class:`RunLink` in its package, on its entry.

>>> link = RunLink("echo", lambda run_dir, name, dataset: [f"{name} on {dataset}"])
>>> quote_links([link, link], Path("results/study"), "study", "cifar10")
['study on cifar10', 'study on cifar10']
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

__all__ = ["RunLink", "quote_links"]


@dataclass(frozen=True)
class RunLink:
    """The runs of kind ``kind`` built on a run, quoted.

    Attributes:
        kind: the quoted runs' pipeline kind.
        quotes: ``(run_dir, run name, dataset) -> sentences``, one per linked run beside
            ``run_dir`` (empty sentences are dropped by the caller as it sees fit).
    """

    kind: str
    quotes: Callable[[Path, str, str | None], list[str]]


def quote_links(links: Sequence[RunLink], run_dir: Path, name: str, dataset: str | None) -> list[str]:
    """Every link's sentences on the run ``name`` in ``run_dir``, in the links' order."""
    return [text for link in links for text in link.quotes(Path(run_dir), name, dataset)]
