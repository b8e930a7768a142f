"""What the layers that move jobs need of them, as types (no torch at import).

* :class:`RunnableJob` -- a unit of work an executor runs: a job, or a fused group of jobs
  (:class:`~nasrescale.jobs.grouping.JobGroup`); ``run`` takes one
  :class:`~nasrescale.train.options.RunOptions`;
* :class:`TrainSpec` -- a training job as the job pipeline reads it (architecture, family,
  data, protocol, seed, size, identity): :class:`~nasrescale.jobs.job.TrainJob`, a frozen
  dataclass, is the one in use; tests pass small stand-ins.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import networkx as nx

    from ..protocol import Protocol as TrainingProtocol
    from ..space.families import CellFamily
    from ..train.options import RunOptions

__all__ = ["RunnableJob", "DataSource", "TrainSpec"]


class RunnableJob(Protocol):
    """What an executor needs of a unit of work."""

    def key(self) -> str: ...  # noqa: D102 - content hash of what determines the result

    def cost(self) -> float: ...  # noqa: D102 - relative run time, for longest-first order

    def run(self, options: RunOptions) -> Any: ...  # noqa: D102 - a record (a group: one per member)


class DataSource(Protocol):
    """The dataset a job names (:class:`~nasrescale.jobs.job.DataSpec`)."""

    @property
    def name(self) -> str: ...  # noqa: D102

    def identity(self) -> dict[str, Any]: ...  # noqa: D102 - what identifies the data (no path)

    def load(self) -> Any: ...  # noqa: D102 - the ImageData


class TrainSpec(RunnableJob, Protocol):
    """A training job: one architecture x protocol x seed at one size, on one dataset."""

    @property
    def arch(self) -> str: ...  # noqa: D102 - the family's canonical string

    @property
    def family(self) -> CellFamily: ...  # noqa: D102

    @property
    def data(self) -> DataSource: ...  # noqa: D102

    @property
    def protocol(self) -> TrainingProtocol: ...  # noqa: D102

    @property
    def seed(self) -> int: ...  # noqa: D102

    @property
    def label(self) -> str | None: ...  # noqa: D102 - the pipeline's protocol name (not in the key)

    @property
    def graph(self) -> nx.DiGraph: ...  # noqa: D102 - the parsed cell

    @property
    def degenerate(self) -> bool: ...  # noqa: D102 - no input-output path: never trained

    def size(self) -> dict[str, int]: ...  # noqa: D102 - width (and cells) of the model

    def identity(self) -> dict[str, Any]: ...  # noqa: D102 - what the key hashes

    def checkpoint_path(self, checkpoint_dir: str | Path) -> Path: ...  # noqa: D102
