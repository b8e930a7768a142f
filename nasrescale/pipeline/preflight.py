"""Checks a run must pass before its first row is stored (``nasrescale run`` and ``lr-search``).

A pipeline whose data is missing, whose subsets are larger than the dataset, whose device or
optional packages are absent would otherwise store one ``failed`` row per job. Everything a run
needs is checked here first: the caller exits 2 and nothing is written. Data errors are restated
in the caller's own keys (``data.path`` in a pipeline, ``--data-path`` for ``lr-search``), since
only ``nasrescale train`` has ``--download``.

>>> keys = DataKeys(path="data.path", name="data.name", train_subset="budget.train_subset",
...                 test_subset="budget.test_subset")
>>> restate("cannot take 9 train samples from cifar10-subset: it has 5", keys)
'budget.train_subset = 9: cannot take 9 train samples from cifar10-subset: it has 5'
>>> "pass --download" in restate("X not found. pass --download to fetch it into /d, or --data-path PATH", keys)
False
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import ConfigError, DataError, NasRescaleError
from ..executors import executor_entry
from ..executors.base import ExecutorSettings
from ..jobs.job import DataSpec, resolve_device

__all__ = ["DataKeys", "PIPELINE_KEYS", "LR_SEARCH_KEYS", "check_data", "check_executor", "check_reference", "restate"]


@dataclass(frozen=True)
class DataKeys:
    """How the caller's user spells the data settings (for error messages)."""

    path: str
    name: str
    train_subset: str
    test_subset: str
    resolution: str = "budget.resolution"


PIPELINE_KEYS = DataKeys("data.path", "data.name", "budget.train_subset", "budget.test_subset")
LR_SEARCH_KEYS = DataKeys("--data-path", "--dataset", "--train-subset", "--test-subset", "--resolution")

_DOWNLOAD = re.compile(r"pass --download to fetch it into (\S+?),? or ")
_SUBSET = re.compile(r"cannot take (\d+) (train|test) samples")


def _set(key: str, value: str) -> str:
    """``--opt VALUE`` for an option, ``key = VALUE`` for a pipeline key."""
    return f"{key} {value}" if key.startswith("--") else f"{key} = {value}"


def restate(message: str, keys: DataKeys) -> str:
    """A data loader's message (written for ``nasrescale train``) in the caller's keys."""
    subset = _SUBSET.search(message)
    if subset:
        key = keys.train_subset if subset.group(2) == "train" else keys.test_subset
        return f"{_set(key, subset.group(1))}: {message}"
    message = message.replace("Nothing is downloaded unless --download is given:", "Nothing is downloaded here:")
    message = _DOWNLOAD.sub(lambda m: f"fetch it into {m.group(1)} once with `nasrescale train ARCH --dataset NAME "
                                      f"--data-path {m.group(1)} --download`, or set ", message)
    message = message.replace("--data-path PATH", _set(keys.path, "PATH"))
    message = re.sub(r"budget\.resolution = (\d+)", lambda m: _set(keys.resolution, m.group(1)), message)
    return message.replace("--dataset imagefolder", _set(keys.name, '"imagefolder"'))


def check_data(spec: DataSpec, keys: DataKeys) -> None:
    """Load ``spec`` (present, readable, subsets no larger than the splits), as the jobs will.

    Raises:
        DataError: restated in ``keys``.
    """
    try:
        spec.load()
    except DataError as err:
        raise DataError(restate(str(err), keys)) from None


def check_executor(settings: ExecutorSettings, device_key: str = "executor.device") -> None:
    """The executor's optional package is installed and, run locally, its device exists.

    Raises:
        ConfigError: naming the setting and how to fix it.
    """
    entry = executor_entry(settings.kind)
    if entry.requires is not None:
        if importlib.util.find_spec(entry.requires) is None:
            raise ConfigError(f"executor.kind = \"{entry.name}\" needs the {entry.requires} package: "
                              f"{entry.install} (or set executor.kind = \"local\")")
        return  # a cluster's devices are the workers', not this machine's
    try:
        resolve_device(settings.device)
    except ConfigError as err:
        raise ConfigError(f"{_set(device_key, repr(settings.device))}: {err}") from None


_NO_REFERENCE = 'set pipeline.reference = "none" to run without one (the report then compares the protocols only)'


def check_reference(pipeline: Any, archs: Sequence[str]) -> None:
    """The pipeline's reference (what its report ranks against; ``nb201:<dataset>`` unless
    ``pipeline.reference`` says otherwise) loads and has an accuracy for at least one of its
    architectures ``archs`` (canonical strings). NATS-Bench references are read by the report only.

    Raises:
        ConfigError: naming the reference, the family, and ``reference = "none"`` as the fix.
    """
    from ..ranking.sources import load_source  # local: the report's modules load matplotlib
    from ..report.common.reference import reference_spec
    from ..store.migration import record_of

    spec, _ = reference_spec(record_of(pipeline.resolved(archs)))
    if spec is None or spec.lower().startswith("nats:"):
        return
    family = pipeline.family()
    try:
        listed = set(load_source(spec, family=family).runs["arch"])
    except NasRescaleError as err:
        raise ConfigError(f"pipeline.reference = {spec!r}: {err}; {_NO_REFERENCE}") from None
    if not listed & set(archs):
        raise ConfigError(f"pipeline.reference = {spec!r} has an accuracy for none of the pipeline's {len(archs)} "
                          f"architectures (family {family.name!r}), so its report would rank against nothing; "
                          f"{_NO_REFERENCE}, or name a CSV of accuracies of these architectures")
