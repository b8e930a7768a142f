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

import csv
from functools import lru_cache
from pathlib import Path
from typing import Iterable

import pandas as pd

from ..errors import ArchError, ConfigError, DataError
from .encodings import format_arch, parse_arch
from .families import CellFamily

__all__ = [
    "DATASETS",
    "BENCHMARK_CLASSES",
    "dataset_classes",
    "benchmark_table",
    "benchmark_accuracies",
    "resolve_dataset",
    "canonical_archs",
    "read_accuracy_csv",
    "nats_bench_accuracies",
    "NATS_DATASETS",
]

#: the benchmark's dataset columns, in table order
DATASETS = ("cifar10", "cifar100", "imagenet16-120")

#: classes of each benchmark dataset (chance accuracy is 100 / classes percent)
BENCHMARK_CLASSES = {"cifar10": 10, "cifar100": 100, "imagenet16-120": 120}

# Other spellings users (and nasrescale's own dataset names) use for the same benchmark column.
# cifar10-subset is the shipped 5k/1k subset of CIFAR-10: its reference is CIFAR-10's column.
_ALIASES = {
    "cifar-10": "cifar10",
    "cifar10-subset": "cifar10",
    "cifar10_subset": "cifar10",
    "cifar10-valid": "cifar10",
    "cifar-100": "cifar100",
    "imagenet16_120": "imagenet16-120",  # the NAS-Bench-201 API's spelling
    "imagenet16": "imagenet16-120",
    "imagenet-16-120": "imagenet16-120",
    "imagenet16120": "imagenet16-120",
}

_TABLE = Path(__file__).resolve().parent / "reference_data" / "nb201_200ep_test_accuracy.csv.gz"


def resolve_dataset(name: str) -> str:
    """The benchmark column for a dataset name or alias.

    >>> resolve_dataset("ImageNet16-120"), resolve_dataset("cifar10-subset")
    ('imagenet16-120', 'cifar10')

    Raises:
        ConfigError: for a dataset the benchmark table has no column for.
    """
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in DATASETS:
        raise ConfigError(
            f"the NB201 benchmark has no dataset {name!r}; allowed: {', '.join(DATASETS)} "
            "(aliases: imagenet16_120, cifar10-subset)"
        )
    return key


def dataset_classes(name: str) -> int | None:
    """The class count of a benchmark dataset under any of its names; ``None`` for a dataset
    the benchmark does not have.

    >>> dataset_classes("ImageNet16-120"), dataset_classes("cifar10-subset"), dataset_classes("imagefolder")
    (120, 10, None)
    """
    try:
        return BENCHMARK_CLASSES[resolve_dataset(name)]
    except ConfigError:
        return None


@lru_cache(maxsize=1)
def _read_table() -> pd.DataFrame:
    if not _TABLE.is_file():
        raise DataError(f"the shipped NB201 benchmark table {str(_TABLE)!r} is missing; reinstall nasrescale")
    return pd.read_csv(_TABLE, compression="gzip").rename(columns={"imagenet16_120": "imagenet16-120"})


def benchmark_table() -> pd.DataFrame:
    """The NAS-Bench-201 200-epoch test accuracies of all 15,625 cells.

    Columns: ``index`` (the benchmark's architecture index), ``arch`` (canonical NB201 string),
    ``cifar10``, ``cifar100``, ``imagenet16-120`` (percent, mean over the benchmark's seeds).
    Returns a fresh copy the caller may modify.

    >>> t = benchmark_table()
    >>> list(t.columns), len(t)
    (['index', 'arch', 'cifar10', 'cifar100', 'imagenet16-120'], 15625)
    """
    return _read_table().copy()


def benchmark_accuracies(dataset: str) -> dict[str, float]:
    """Canonical NB201 architecture string -> benchmark test accuracy (percent) on ``dataset``.

    Args:
        dataset: ``cifar10``, ``cifar100`` or ``imagenet16-120`` (or an alias such as
            ``imagenet16_120`` or ``cifar10-subset``).

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

    >>> from nasrescale.space.family_loader import get_family
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


def read_accuracy_csv(
    path: str | Path,
    family: CellFamily,
    *,
    arch_column: str = "arch",
    accuracy_column: str | None = None,
) -> pd.DataFrame:
    """Read a CSV of architecture accuracies into canonical form.

    Args:
        path: the CSV file (``.csv``, ``.csv.gz``, ``.tsv``; the separator is sniffed).
        family: the cell family the architectures belong to (any of its encodings).
        arch_column: the architecture column.
        accuracy_column: the accuracy column (percent); default ``accuracy``, else
            ``test_accuracy`` (what ``nasrescale export`` writes).

    Returns:
        The file's rows with ``arch`` replaced by its canonical string and the accuracy in
        ``accuracy`` (float; empty cells are NaN). Other columns (e.g. ``seed``, ``status``,
        ``protocol``) are kept as they are.

    Raises:
        DataError: the file is missing or unreadable, or an accuracy is not a number.
        ConfigError: a named column is absent (the message lists the columns present).
        ArchError: an architecture does not parse (naming its row).
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"accuracy CSV {str(path)!r} does not exist")
    try:
        frame = pd.read_csv(path, sep=None, engine="python", dtype={arch_column: str})
    except (OSError, ValueError, pd.errors.ParserError, csv.Error) as err:  # csv.Error: empty, no delimiter found
        raise DataError(f"cannot read {str(path)!r} as CSV: {err}; it needs a header row (an architecture and an "
                        "accuracy column) and one row per architecture") from None
    present = ", ".join(map(str, frame.columns))
    if arch_column not in frame.columns:
        raise ConfigError(f"{path.name} has no architecture column {arch_column!r}; its columns: {present} "
                          "(choose one with --arch-col)")
    if accuracy_column is None:
        accuracy_column = next((c for c in ("accuracy", "test_accuracy") if c in frame.columns), "accuracy")
    if accuracy_column not in frame.columns:
        raise ConfigError(f"{path.name} has no accuracy column {accuracy_column!r}; its columns: {present} "
                          "(choose one with --acc-col)")
    accuracy = pd.to_numeric(frame[accuracy_column], errors="coerce")
    bad = accuracy.isna() & frame[accuracy_column].notna()
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0])
        raise DataError(f"{path.name} row {row + 2}: accuracy {frame[accuracy_column].iloc[row]!r} "
                        f"in column {accuracy_column!r} is not a number")
    missing = frame[arch_column].isna()
    if missing.any():
        row = int(missing.to_numpy().nonzero()[0][0])
        raise DataError(f"{path.name} row {row + 2}: empty architecture in column {arch_column!r}")
    out = frame.drop(columns=[accuracy_column]).copy()
    out[arch_column] = canonical_archs(frame[arch_column], family, where=path.name)
    out = out.rename(columns={arch_column: "arch"})
    out["accuracy"] = accuracy.astype(float)
    return out


#: nasrescale's benchmark columns -> NATS-Bench's dataset names
NATS_DATASETS = {"cifar10": "cifar10", "cifar100": "cifar100", "imagenet16-120": "ImageNet16-120"}


def nats_bench_accuracies(
    benchmark_path: str | Path,
    dataset: str,
    family: CellFamily,
    *,
    archs: Iterable[str] | None = None,
    epochs: int = 200,
) -> dict[str, float]:
    """Test accuracies from NATS-Bench's own API (topology search space), mean over seeds.

    Needs the ``nats_bench`` package (``pip install nats_bench``) and the user's benchmark
    file (``NATS-tss-v1_0-3ffb9.pickle.pbz2``) or its fast-mode folder
    (``NATS-tss-v1_0-3ffb9-simple``). Like the shipped table: CIFAR-10 on the full test set,
    CIFAR-100 and ImageNet16-120 on x-test.

    Args:
        benchmark_path: the benchmark file or fast-mode folder.
        dataset: ``cifar10``, ``cifar100``, ``imagenet16-120`` or an alias (``imagenet16_120``).
        family: the family to canonicalize NATS-Bench's architecture strings with (nb201).
        archs: canonical strings to look up (default: all; fast mode reads one file per cell).
        epochs: the benchmark's training budget to read (``200`` or ``12``).

    Raises:
        DataError: ``nats_bench`` is not installed, or the benchmark path is missing/unreadable.
    """
    try:
        import nats_bench  # type: ignore[import-not-found]
    except ImportError:
        raise DataError(
            "reading NATS-Bench needs the nats_bench package: run `python -m pip install nats_bench` "
            "and pass the benchmark file (NATS-tss-v1_0-3ffb9.pickle.pbz2) or its fast-mode folder; "
            "or use the shipped table (source nb201:DATASET)"
        ) from None
    column = resolve_dataset(dataset)
    path = Path(benchmark_path)
    if not path.exists():
        raise DataError(f"NATS-Bench file {str(path)!r} does not exist; pass the .pickle.pbz2 file or the "
                        "'-simple' fast-mode folder")
    try:
        api = nats_bench.create(str(path), "tss", fast_mode=path.is_dir(), verbose=False)
    except Exception as err:  # the package raises ValueError/AssertionError/pickle errors
        raise DataError(f"NATS-Bench could not open {str(path)!r}: {err}") from None
    wanted = None if archs is None else set(archs)
    out: dict[str, float] = {}
    for index, text in enumerate(api.meta_archs):
        arch = canonical_archs([text], family, where="NATS-Bench")[0]
        if wanted is not None and arch not in wanted:
            continue
        info = api.get_more_info(index, NATS_DATASETS[column], hp=str(epochs), is_random=False)
        out[arch] = float(info["test-accuracy"])
    return out
