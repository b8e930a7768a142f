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
is copied in instead of training it again (:func:`~nasrescale.pipeline.reuse.reusing`; meta ``reused`` counts them). The
cells of a time-limited run are visited in spread order as a retrain's are: each cell's every
budget and protocol run together.

>>> TrendSettings(epochs=(12, 6)).epochs
Traceback (most recent call last):
...
nasrescale.errors.ConfigError: trend.epochs: expected distinct positive integers in ascending order, e.g. [6, 12, 24], got [12, 6]
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ConfigError

__all__ = ["TrendSettings"]


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
