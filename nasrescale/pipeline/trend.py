"""The budget trend (``kind = "trend"``): every protocol of a pipeline at several training
budgets on the same cells, so the report can say whether a comparison of protocols depends on
the budget.

A trend pipeline is a retrain pipeline plus a ``[trend]`` table (:class:`TrendSettings`)::

    [pipeline]
    name = "my_trend"
    kind = "trend"
    reference = "nb201:cifar10"
    [trend]
    epochs = [6, 12, 24]              # every protocol x cell x seed at each of these budgets
    reuse = "my_study"                # optional: copy finished runs of the same jobs from this store
    noise = "my_study"                # optional: the seed-noise floor comes from this store's seeds

Each job is the retrain job of its protocol with ``epochs`` replaced (the schedule spans the
new length), stored under the label ``<protocol>@<epochs>ep``. Job keys are content hashes
(:meth:`~nasrescale.jobs.job.TrainJob.key`), so a trend job at the study's budget *is* the
study's job: with ``reuse`` every job about to run -- an LR search's too -- is first looked up in
that store (a run name under the same results root, or a run folder), and its finished record
is copied in instead of training it again (:func:`reusing`; meta ``reused`` counts them). The
cells of a time-limited run are visited in spread order as a retrain's are: each cell's every
budget and protocol run together.

>>> TrendSettings(epochs=(12, 6)).epochs
Traceback (most recent call last):
...
nasrescale.errors.ConfigError: trend.epochs: expected distinct positive integers in ascending order, e.g. [6, 12, 24], got [12, 6]
>>> trend_label("default", 12)
'default@12ep'
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..errors import ConfigError
from ..jobs.job import TrainJob
from ..store.job_status import FINAL
from ..store.read import store_path
from ..store.record import REUSED_KEY, trend_label
from ..store.write import Store
from .execute import RunJobs, job_rows
from .protocols import protocol_keys

__all__ = ["TrendSettings", "trend_label", "trend_plan", "reusing", "check_reuse", "reuse_source",
           "REUSED_META"]

#: store meta: ``{"source": the reuse store, "runs": how many finished runs were copied}``
REUSED_META = REUSED_KEY


@dataclass(frozen=True)
class TrendSettings:
    """``[trend]`` of a ``kind = "trend"`` pipeline.

    Attributes:
        epochs: the budgets, ascending: each protocol x cell x seed trains at each.
        reuse: a store to copy finished runs of the same jobs from before training them (a run
            name under the results root, or a run folder); ``None``: train everything.
        noise: a store whose seed-vs-seed tau the report shows as the seed-noise floor (its
            protocols of the same labels, on the trend's cells); ``None``: the trend's own seeds.
        top_percent: the top-K% subset whose tau between protocols the report shows.
    """

    epochs: tuple[int, ...] = (6, 12, 24)
    reuse: str | None = None
    noise: str | None = None
    top_percent: int = 50

    def __post_init__(self) -> None:
        ok = all(isinstance(e, int) and not isinstance(e, bool) and e >= 1 for e in self.epochs)
        if not self.epochs or not ok or list(self.epochs) != sorted(set(self.epochs)):
            raise ConfigError(f"trend.epochs: expected distinct positive integers in ascending order, e.g. "
                              f"[6, 12, 24], got {list(self.epochs)}")
        if not 1 <= self.top_percent <= 100:
            raise ConfigError(f"trend.top_percent: a percentage in [1, 100], got {self.top_percent}")


def trend_plan(pipeline: Any, archs: Sequence[str]) -> tuple[list[TrainJob], dict[str, str]]:
    """Budget x architecture x protocol x seed, the smallest budget first (a partial run ranks it first).

    Raises:
        ConfigError: a protocol whose base LR is not known yet, or one a budget cannot take
            (e.g. warm-up epochs beyond it), naming the key.
    """
    family, data, budget = pipeline.family(), pipeline.data_spec(), pipeline.budget
    cells, jobs = pipeline.arch_cells(archs), []
    for epochs in pipeline.trend.epochs:
        for entry in pipeline.protocols:
            try:
                protocol = dataclasses.replace(entry.protocol, epochs=epochs)
            except (ConfigError, ValueError) as err:
                raise ConfigError(f"trend.epochs: {epochs} epochs for protocols.{entry.label}: {err}") from None
            with protocol_keys(entry):
                jobs += [TrainJob(cell, family, data, protocol, seed, budget.width, budget.cells,
                                  trend_label(entry.label, epochs))
                         for cell in cells for seed in pipeline.pipeline.seeds]
    return jobs, {}


def _source(pipeline: Any, store: Store) -> Path:
    return check_reuse(pipeline, store.path.parent)


def reuse_source(pipeline: Any) -> tuple[str, str | None]:
    """``(key, value)`` of the pipeline's reuse store: its kind's ``reuse_key`` (``trend.reuse``,
    ``landscape.reuse``) and the store it names (``None``: train every job)."""
    key = pipeline.kind.reuse_key or "trend.reuse"
    table, name = key.split(".")
    return key, getattr(getattr(pipeline, table), name)


def check_reuse(pipeline: Any, run_dir: Path) -> Path:
    """The store the kind's reuse key (``trend.reuse``, ``landscape.reuse``) names, beside the
    run folder ``run_dir``.

    Raises:
        ConfigError: there is none (checked before the run's own store is created).
    """
    key, name = reuse_source(pipeline)
    path = store_path(name, Path(run_dir).parent) if name is not None else None
    if path is not None and not (path.is_file() or path.with_name(path.name + ".gz").is_file()):
        raise ConfigError(f"{key}: no store at {str(path)!r}; name a run under the results folder "
                          "(or its folder), or drop the key to train every job")
    return path  # type: ignore[return-value]


def reusing(pipeline: Any, store: Store, run: RunJobs) -> RunJobs:
    """``run``, which first copies into ``store`` the finished runs (done or diverged) that the
    reuse store (:func:`reuse_source`) holds under the same keys; ``run`` itself without one.

    Raises:
        ConfigError: the reuse store does not exist (before any job is stored).
    """
    name = reuse_source(pipeline)[1]
    if name is None:
        return run
    source = Store(_source(pipeline, store), readonly=True)
    try:
        finished = {r["key"]: {**r, "record": source.record(r["key"])} for r in source.rows() if r["status"] in FINAL}
    finally:
        source.close()

    def copy_then_run(jobs: list[TrainJob]) -> tuple[int, int, int]:
        mine = {job.key(): job for job in jobs if job.key() in finished}
        if mine:
            store.add_jobs(job_rows(mine.values()))
            copied = sum(_copy(store, finished[key]) for key in mine)
            if copied:
                before = json.loads(store.get_meta(REUSED_META) or "{}").get("runs", 0)
                store.set_meta(REUSED_META, json.dumps({"source": name, "runs": before + copied}))
        return run(jobs)

    return copy_then_run


def _copy(store: Store, row: dict[str, Any]) -> bool:
    """Store the finished ``row`` of another store as this store's outcome of its key (not when
    this store has one already)."""
    return store.finish(row["key"], row["status"], row["record"], row.get("error"), int(row.get("attempts") or 1))
