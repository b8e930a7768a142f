"""Sources of architecture accuracies for ranking: a run's protocol, the benchmark, a CSV.

A source spec is one of

* ``PIPELINE:PROTOCOL`` -- one protocol of a pipeline's result store (``PIPELINE`` is the
  pipeline name under ``--results``, its pipeline file, a run folder, or the ``store.sqlite``
  file), every seed;
* ``nb201:DATASET`` -- the shipped NAS-Bench-201 table (``cifar10``, ``cifar100``,
  ``imagenet16-120``; ``imagenet16_120`` is accepted too);
* ``nats:DATASET`` -- NATS-Bench's own API on the user's benchmark file (``nats_file``);
* ``FILE.csv`` or ``FILE.csv:PROTOCOL`` -- a CSV with an architecture and an accuracy column
  (optional ``seed``, ``status`` and ``protocol`` columns, as ``nasrescale export`` writes).

Every source becomes a :class:`Source` whose ``runs`` frame has one row per run: ``arch``
(canonical string), ``seed``, ``accuracy`` (percent; NaN for a diverged run), ``diverged``
and ``degenerate`` (``pd.NA`` where the source does not say).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import ConfigError
from ..space.families import CellFamily
from ..space.benchmark import (
    BENCHMARK_CLASSES,
    benchmark_table,
    nats_bench_accuracies,
    read_accuracy_csv,
    resolve_dataset,
)
from ..space.family_loader import get_family
from ..store.job_status import FINAL, Status
from ..store.read import StoreData, chance_accuracy, read_store, store_path

__all__ = ["Source", "load_source", "store_source", "split_spec"]

_CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".txt")


@dataclass(frozen=True)
class Source:
    """Accuracies of one source, one row per run.

    Attributes:
        label: how tables and plots name it (the spec, shortened).
        kind: ``store``, ``benchmark``, ``nats`` or ``csv``.
        runs: ``arch, seed, accuracy, diverged, degenerate`` (see module docstring).
        chance: chance accuracy in percent (what a diverged run counts as), ``None`` if unknown.
        family: the cell family name of its architectures.
        skipped: rows not used, by reason (``pending``, ``running``, ``failed``, ``missing``).
    """

    label: str
    kind: str
    runs: pd.DataFrame = field(repr=False)
    chance: float | None
    family: str
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def seeds(self) -> list:
        """The distinct seeds among its runs."""
        return sorted(self.runs["seed"].dropna().unique().tolist())


def split_spec(spec: str) -> tuple[str, str | None]:
    """Split ``THING:LABEL`` at the last colon (``None`` label without one).

    >>> split_spec("quickstart:rescaled"), split_spec("nb201:cifar10"), split_spec("a.csv")
    (('quickstart', 'rescaled'), ('nb201', 'cifar10'), ('a.csv', None))
    """
    head, sep, tail = spec.rpartition(":")
    if not sep or not head:
        return spec, None
    return head, tail


def _is_csv(path: str) -> bool:
    return path.lower().endswith(_CSV_SUFFIXES) or (
        Path(path).is_file() and not path.lower().endswith((".sqlite", ".db", ".toml")))


def _runs(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[["arch", "seed", "accuracy", "diverged", "degenerate"]].reset_index(drop=True)


def load_source(
    spec: str,
    *,
    results: str | Path | None = None,
    family: CellFamily | None = None,
    arch_column: str = "arch",
    accuracy_column: str | None = None,
    nats_file: str | Path | None = None,
    classes: int | None = None,
) -> Source:
    """Load the accuracies a source spec names (see module docstring).

    Args:
        spec: the source spec.
        results: the results folder of ``PIPELINE:PROTOCOL`` sources (default ``results``).
        family: the cell family of a CSV's architectures (default ``nb201``).
        arch_column, accuracy_column: a CSV's columns (default ``arch`` and ``accuracy``,
            falling back to ``test_accuracy``).
        nats_file: NATS-Bench's benchmark file or fast-mode folder, for ``nats:`` sources.
        classes: the dataset's class count, for a CSV's chance accuracy.

    Raises:
        ConfigError: an unknown protocol label or dataset (naming the allowed ones).
        DataError: a missing or unreadable store or file.
    """
    spec = str(spec).strip()
    if not spec:
        raise ConfigError("empty source; give PIPELINE:PROTOCOL, nb201:DATASET or a CSV file")
    head, label = split_spec(spec)
    if head.lower() in ("nb201", "nats"):
        if label is None:
            raise ConfigError(f"source {spec!r} needs a dataset, e.g. {head}:cifar10")
        return _benchmark(head.lower(), label, nats_file)
    if _is_csv(spec):
        return _csv(spec, None, family, arch_column, accuracy_column, classes)
    if label is not None and _is_csv(head):
        return _csv(head, label, family, arch_column, accuracy_column, classes)
    return _store(head, label, results)


def _benchmark(kind: str, dataset: str, nats_file: str | Path | None) -> Source:
    column = resolve_dataset(dataset)
    nb201 = get_family("nb201")
    if kind == "nb201":
        table = benchmark_table()
        frame = pd.DataFrame({"arch": table["arch"], "accuracy": table[column].astype(float)})
    else:
        if nats_file is None:
            raise ConfigError("a nats:DATASET source needs --nats-file PATH (NATS-tss-v1_0-3ffb9.pickle.pbz2 "
                              "or its fast-mode folder)")
        acc = nats_bench_accuracies(nats_file, column, nb201)
        frame = pd.DataFrame({"arch": list(acc), "accuracy": list(acc.values())})
    frame["seed"], frame["diverged"], frame["degenerate"] = 0, False, pd.NA
    return Source(label=f"{kind}:{column}", kind="benchmark" if kind == "nb201" else "nats", runs=_runs(frame),
                  chance=100.0 / BENCHMARK_CLASSES[column], family="nb201")


def _csv(path: str, protocol: str | None, family: CellFamily | None, arch_column: str,
         accuracy_column: str | None, classes: int | None) -> Source:
    family = family or get_family("nb201")
    frame = read_accuracy_csv(path, family, arch_column=arch_column, accuracy_column=accuracy_column)
    name = Path(path).name
    if "protocol" in frame.columns:
        labels = list(dict.fromkeys(frame["protocol"].dropna().astype(str)))
        if protocol is not None:
            if protocol not in labels:
                raise ConfigError(f"{name} has no protocol {protocol!r}; it has: {', '.join(labels)}")
            frame = frame[frame["protocol"].astype(str) == protocol]
        elif len(labels) > 1:
            raise ConfigError(f"{name} holds several protocols; pick one: "
                              + ", ".join(f"{path}:{p}" for p in labels))
    elif protocol is not None:
        raise ConfigError(f"{name} has no protocol column, so {path}:{protocol} cannot select one")
    skipped: dict[str, int] = {}
    status = frame["status"].astype(str) if "status" in frame.columns else None
    if status is not None:
        for reason, count in status[~status.isin(FINAL)].value_counts().items():
            skipped[str(reason)] = int(count)
        frame = frame[status.isin(FINAL)].copy()
        frame["diverged"] = frame["status"] == Status.DIVERGED
    else:
        missing = frame["accuracy"].isna()
        if missing.any():
            skipped["missing"] = int(missing.sum())
        frame = frame[~missing].copy()
        frame["diverged"] = False
    frame.loc[frame["diverged"], "accuracy"] = float("nan")
    frame["seed"] = frame["seed"] if "seed" in frame.columns else 0
    if "degenerate" in frame.columns:
        frame["degenerate"] = frame["degenerate"].map(lambda v: pd.NA if pd.isna(v) else bool(v)).astype(object)
    else:
        frame["degenerate"] = pd.NA
    chance = 100.0 / classes if classes else None
    if chance is None and "degenerate" in frame.columns:
        known = frame[frame["degenerate"].eq(True) & frame["accuracy"].notna()]
        chance = float(known["accuracy"].iloc[0]) if len(known) else None
    label = name if protocol is None else f"{name}:{protocol}"
    return Source(label=label, kind="csv", runs=_runs(frame), chance=chance, family=family.name, skipped=skipped)


def _store(pipeline: str, protocol: str | None, results: str | Path | None) -> Source:
    path = store_path(pipeline, results)
    store = read_store(path)
    labels = store.protocols
    if protocol is None:
        if len(labels) != 1:
            choices = ", ".join(f"{pipeline}:{p}" for p in labels) or "(the store has no jobs yet)"
            raise ConfigError(f"source {pipeline!r} needs a protocol: one of {choices}")
        protocol = labels[0]
    return store_source(store, protocol, f"{path.parent.name}:{protocol}")  # the run folder = pipeline name


def store_source(store: StoreData, protocol: str, label: str | None = None) -> Source:
    """The source of one protocol label of an already read store (mean over seeds later).

    Raises:
        ConfigError: the store has no such protocol (naming the ones it has).
    """
    labels = store.protocols
    if protocol not in labels:
        raise ConfigError(f"pipeline {store.path.parent.name!r} has no protocol {protocol!r}; its protocols: "
                          f"{', '.join(labels) or '(none yet)'}")
    jobs = store.jobs[store.jobs["protocol"] == protocol]
    usable = jobs["status"].isin(FINAL)
    skipped = {str(k): int(v) for k, v in jobs.loc[~usable, "status"].value_counts().items()}
    frame = jobs[usable].copy()
    frame["diverged"] = frame["status"] == Status.DIVERGED
    frame["accuracy"] = frame["test_accuracy"].where(~frame["diverged"])
    done_without = frame["accuracy"].isna() & ~frame["diverged"]
    if done_without.any():  # a 'done' row without an accuracy cannot be ranked
        skipped["missing"] = int(done_without.sum())
        frame = frame[~done_without]
    frame["degenerate"] = frame["degenerate"].astype(object)
    return Source(label=label or protocol, kind="store", runs=_runs(frame), chance=chance_accuracy(store),
                  family=store.record.family_or("nb201"), skipped=skipped)
