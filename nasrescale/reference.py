"""Reference accuracies to compare a re-evaluation against.

* the NAS-Bench-201 table shipped with the package (:func:`benchmark_table`,
  :func:`benchmark_accuracies`): for each of the 15,625 cells the benchmark's 200-epoch test
  accuracy in percent, mean over its seeds; CIFAR-10 on the full 10k test set, CIFAR-100 and
  ImageNet16-120 on x-test (the benchmark's half of the test set);
* any CSV with an architecture column and an accuracy column (:func:`read_accuracy_csv`);
  architectures may be in any encoding and are matched by their canonical string;
* NATS-Bench's own API (:func:`nats_bench_accuracies`) when the ``nats_bench`` package and the
  user's benchmark file are available.

>>> acc = benchmark_accuracies("cifar10")
>>> len(acc), acc["|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|"]
(15625, 93.66)
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Iterable

import pandas as pd

from .encodings import format_arch, parse_arch
from .errors import ArchError, ConfigError, DataError
from .families import CellFamily

__all__ = [
    "DATASETS",
    "benchmark_table",
    "benchmark_accuracies",
    "resolve_dataset",
    "canonical_archs",
]

#: the benchmark's dataset columns, in table order
DATASETS = ("cifar10", "cifar100", "imagenet16_120")

# Other spellings users (and nasrescale's own dataset names) use for the same benchmark column.
# cifar10-subset is the shipped 5k/1k subset of CIFAR-10: its reference is CIFAR-10's column.
_ALIASES = {
    "cifar-10": "cifar10",
    "cifar10-subset": "cifar10",
    "cifar10_subset": "cifar10",
    "cifar10-valid": "cifar10",
    "cifar-100": "cifar100",
    "imagenet16-120": "imagenet16_120",
    "imagenet16": "imagenet16_120",
    "imagenet-16-120": "imagenet16_120",
    "imagenet16120": "imagenet16_120",
}

_TABLE = Path(__file__).resolve().parent / "reference_data" / "nb201_200ep_test_accuracy.csv.gz"


def resolve_dataset(name: str) -> str:
    """The benchmark column for a dataset name or alias.

    >>> resolve_dataset("ImageNet16-120"), resolve_dataset("cifar10-subset")
    ('imagenet16_120', 'cifar10')

    Raises:
        ConfigError: for a dataset the benchmark table has no column for.
    """
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in DATASETS:
        raise ConfigError(
            f"the NB201 benchmark has no dataset {name!r}; allowed: {', '.join(DATASETS)} "
            "(aliases: imagenet16-120, cifar10-subset)"
        )
    return key


@lru_cache(maxsize=1)
def _read_table() -> pd.DataFrame:
    if not _TABLE.is_file():
        raise DataError(f"the shipped NB201 benchmark table {str(_TABLE)!r} is missing; reinstall nasrescale")
    return pd.read_csv(_TABLE, compression="gzip")


def benchmark_table() -> pd.DataFrame:
    """The NAS-Bench-201 200-epoch test accuracies of all 15,625 cells.

    Columns: ``index`` (the benchmark's architecture index), ``arch`` (canonical NB201 string),
    ``cifar10``, ``cifar100``, ``imagenet16_120`` (percent, mean over the benchmark's seeds).
    Returns a fresh copy the caller may modify.

    >>> t = benchmark_table()
    >>> list(t.columns), len(t)
    (['index', 'arch', 'cifar10', 'cifar100', 'imagenet16_120'], 15625)
    """
    return _read_table().copy()


def benchmark_accuracies(dataset: str) -> dict[str, float]:
    """Canonical NB201 architecture string -> benchmark test accuracy (percent) on ``dataset``.

    Args:
        dataset: ``cifar10``, ``cifar100`` or ``imagenet16_120`` (or an alias such as
            ``imagenet16-120`` or ``cifar10-subset``).

    >>> acc = benchmark_accuracies("imagenet16-120")
    >>> round(max(acc.values()), 2)
    47.31
    """
    column = resolve_dataset(dataset)
    table = _read_table()
    return dict(zip(table["arch"], table[column].astype(float)))


def canonical_archs(archs: Iterable[str], family: CellFamily, *, where: str = "input") -> list[str]:
    """Canonical strings (the family's encoding) of architectures given in any encoding.

    Args:
        archs: architecture strings (NB201 strings, digit strings, JSON edge lists).
        family: their cell family.
        where: what the strings come from, named in the error (e.g. ``"results.csv row 3"``).

    Raises:
        ArchError: naming the first string that does not parse, and its position.

    >>> from nasrescale.registry import get_family
    >>> canonical_archs(["0_00_000"], get_family("nb201"))
    ['|none~0|+|none~0|none~1|+|none~0|none~1|none~2|']
    """
    out: list[str] = []
    cache: dict[str, str] = {}
    for i, text in enumerate(archs):
        if text not in cache:
            try:
                cache[text] = format_arch(parse_arch(str(text), family), family)
            except ArchError as err:
                raise ArchError(f"{where}: architecture #{i + 1} ({str(text)[:60]!r}): {err}") from None
        out.append(cache[text])
    return out
