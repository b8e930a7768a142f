"""The run record: what a store's meta table says about its run, as one typed, versioned value.

A store's meta table holds the resolved pipeline (``pipeline``, JSON), the run's name and
creation time, and the choices its stages made (``base_lr:<label>``, ``tuning:<label>``,
``lr_search:<label>``, ``visit:<n>``, ...). :class:`RunRecord` holds what the readers use of
them as typed fields; :func:`~nasrescale.store.migration.parse_record` builds it, once per read
(:attr:`~nasrescale.store.read.StoreData.record`), after bringing an older store's meta to the
current layout (:data:`RECORD_VERSION`). Its tables, its stages' entries and its stored plans are
typed by the schema types of :mod:`~nasrescale.store.schema`, :mod:`~nasrescale.store.stage_records`
and :mod:`~nasrescale.store.plans`.

Every meta key is built here (:func:`base_lr_key`, :func:`tuning_key`, ...), for the writers
and the readers alike, as is the store label of a trend's protocol at a budget
(:func:`trend_label`).

>>> base_lr_key("rescaled"), tuning_key("flat"), trend_label("default", 12)
('base_lr:rescaled', 'tuning:flat', 'default@12ep')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .plans import LandscapePlanRecord, ValidationPlanRecord
from .schema import BudgetRecord, CandidateBudget, ExecutorRecord, LrSearchRecord, TuningRecord
from .stage_records import Reused, SearchSelection, TuningResult, Visit

__all__ = ["RECORD_VERSION", "VERSION_KEY", "PIPELINE_KEY", "NAME_KEY", "CREATED_KEY", "IDENTITY_KEY",
           "VALIDATION_PLAN_KEY", "LANDSCAPE_PLAN_KEY", "REUSED_KEY", "THREADS_KEY", "DEFAULT_KIND", "base_lr_key", "tuning_key", "lr_search_key",
           "visit_key", "trend_label", "keyed", "visit_entries", "ProtocolRecord", "TrendRecord", "RunRecord"]

#: the layout of the meta table this version writes (meta ``record_version``); a store without
#: the key was written before it had one (version 1) and is migrated when read
RECORD_VERSION = 2

VERSION_KEY = "record_version"
PIPELINE_KEY = "pipeline"
NAME_KEY = "name"
CREATED_KEY = "created_at"
IDENTITY_KEY = "identity"
VALIDATION_PLAN_KEY = "validation_plan"
LANDSCAPE_PLAN_KEY = "landscape_plan"
REUSED_KEY = "reused"
#: the kind of a pipeline that names none (``[pipeline] kind`` left out), as written and as read
DEFAULT_KIND = "retrain"
#: the threads a run picked for its CPU jobs once, kept on resume (:mod:`nasrescale.pipeline.run_threads`)
THREADS_KEY = "cpu_threads"

_BASE_LR, _TUNING, _LR_SEARCH, _VISIT = "base_lr:", "tuning:", "lr_search:", "visit:"


def base_lr_key(label: str) -> str:
    """Meta key of protocol ``label``'s base LR (given, searched or tuned)."""
    return _BASE_LR + label


def tuning_key(label: str) -> str:
    """Meta key of protocol ``label``'s finished LR tuning."""
    return _TUNING + label


def lr_search_key(label: str) -> str:
    """Meta key of the LR search ``label`` names (its selection)."""
    return _LR_SEARCH + label


def visit_key(n: int) -> str:
    """Meta key of the run's ``n``-th visit (slice).

    >>> visit_key(7)
    'visit:007'
    """
    return f"{_VISIT}{n:03d}"


def trend_label(label: str, epochs: int) -> str:
    """The store label of protocol ``label`` trained at ``epochs`` by a trend run.

    >>> trend_label("principled", 24)
    'principled@24ep'
    """
    return f"{label}@{epochs}ep"


def keyed(meta: Mapping[str, Any], key_of: Callable[[str], str]) -> dict[str, Any]:
    """The meta entries whose keys ``key_of`` builds, by the label it was given.

    >>> keyed({"base_lr:flat": "0.2", "tuning:flat": "{}", "name": "x"}, base_lr_key)
    {'flat': '0.2'}
    """
    prefix = key_of("")
    return {key[len(prefix):]: value for key, value in meta.items() if key.startswith(prefix)}


def visit_entries(meta: Mapping[str, Any]) -> list[Any]:
    """The values of the meta's visit entries, in the order of their numbers.

    >>> visit_entries({"visit:002": "b", "visit:001": "a", "name": "x"})
    ['a', 'b']
    """
    return [meta[key] for key in sorted(k for k in meta if k.startswith(_VISIT))]


def _number(value: Any) -> Any:
    """A stored number as stored (an int stays an int: reports print it as written), else ``None``."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value) else None


@dataclass(frozen=True)
class ProtocolRecord:
    """One protocol of the stored pipeline, by its label.

    Attributes:
        label: the pipeline's label for it (``default``, ``rescaled``, ...).
        name: the protocol's own name (``nb201``, ``rescaled``, ...), ``None`` if not stored.
        lr: its base LR as stored (``None`` when searched, or not stored).
        lr_rule: its LR rule (``fixed``, ``path_depth``, ...).
        init: its init rule (``default``, ``in_degree``, ...).
        kernel_rule: its kernel rule (``family``: the family's).
        epochs: its training length.
        batch_size, momentum, nesterov, weight_decay, precision: its optimizer and numerics settings, as stored.
        searched: its base LR is found by the LR search (``base_lr = "search"``).
        tuned: its LR is tuned at the run's budget (``tune = true``).
        settings: every key the pipeline stored for it (batch size, momentum, precision, ...).

    >>> p = ProtocolRecord.of("rescaled", {"lr_rule": "path_depth", "base_lr": "search", "epochs": 6})
    >>> p.searched, p.tuned, p.lr, p.epochs
    (True, False, None, 6)
    """

    label: str
    name: str | None = None
    lr: float | None = None
    lr_rule: str | None = None
    init: str | None = None
    kernel_rule: str | None = None
    epochs: int | None = None
    batch_size: int | None = None
    momentum: float | None = None
    nesterov: bool | None = None
    weight_decay: float | None = None
    precision: str | None = None
    searched: bool = False
    tuned: bool = False
    settings: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, label: str, table: Mapping[str, Any]) -> ProtocolRecord:
        """The record of the stored table ``table`` of protocol ``label``."""
        epochs = table.get("epochs")
        return cls(label=str(label), name=_text(table.get("name")), lr=_number(table.get("lr")),
                   lr_rule=_text(table.get("lr_rule")), init=_text(table.get("init")),
                   kernel_rule=_text(table.get("kernel_rule")),
                   epochs=epochs if isinstance(epochs, int) and not isinstance(epochs, bool) else None,
                   batch_size=_number(table.get("batch_size")), momentum=_number(table.get("momentum")),
                   nesterov=table["nesterov"] if isinstance(table.get("nesterov"), bool) else None,
                   weight_decay=_number(table.get("weight_decay")), precision=_text(table.get("precision")),
                   searched=table.get("base_lr") == "search", tuned=bool(table.get("tune")), settings=dict(table))


@dataclass(frozen=True)
class TrendRecord:
    """A trend run's ``[trend]`` table.

    Attributes:
        epochs: the budgets, as stored.
        top_percent: the top-K% subset of the tau between protocols.
        noise: the run whose seed-noise floor the report reads (``None``: none).
        reuse: the run whose stored runs the trend copied (``None``: none).
    """

    epochs: tuple[int, ...] = ()
    top_percent: int = 50
    noise: str | None = None
    reuse: str | None = None

    @classmethod
    def of(cls, table: Mapping[str, Any]) -> TrendRecord:
        """The record of the stored ``[trend]`` table.

        >>> TrendRecord.of({"epochs": [6, 12], "reuse": "cpu"})
        TrendRecord(epochs=(6, 12), top_percent=50, noise=None, reuse='cpu')
        """
        return cls(epochs=tuple(int(e) for e in table.get("epochs") or ()),
                   top_percent=int(table.get("top_percent", 50)),
                   noise=_text(table.get("noise")), reuse=_text(table.get("reuse")))


@dataclass(frozen=True)
class RunRecord:
    """What a store's meta says about its run (see the module's docstring).

    Attributes:
        version: the meta layout it was written in (:data:`RECORD_VERSION` once migrated).
        name: the pipeline's name (``None``: not stored).
        kind: the run's kind (``retrain``, ``lr_validation``, ``calibration``, ``trend``, ``landscape``).
        family: the cell family's name (``None``: not stored).
        family_file: the family file the pipeline named (``None``: none).
        dataset: the dataset's name.
        data_path: where the data was read from.
        description: the pipeline's description (``""``: none).
        reference: the reference as stored (a spec string, a table, or ``None``).
        calibration: the calibration candidate the pipeline names (``run:candidate``).
        seeds: the pipeline's seeds.
        archs: the architectures the pipeline declares (``arch_list``), in its order.
        protocols: label -> :class:`ProtocolRecord`, in the stored order.
        budget: the ``[budget]`` table; budgets: a calibration's candidate budgets by name.
        executor: the ``[executor]`` table.
        lr_search: the ``[lr_search]`` table; tuning: the ``[tuning]`` table (``None``: the
            pipeline has none).
        trend: the ``[trend]`` table (``None``: not a trend run).
        base_lrs: label -> the base LR stored for it (given, searched or tuned; ``None``: not yet).
        tunings: label -> its finished tuning (anchor, multipliers, means, runs, choice).
        searches: search label -> its LR search's selection.
        visits: the recorded visits (slices), in order.
        reused: what a run copied from another run's store (``None``: nothing).
        validation_plan: an LR validation's plan; landscape_plan: a landscape's (``None``: none stored).
        cpu_threads: the threads per CPU job the run picked (``None``: none stored, or not a whole number).
        created_at: when the store was created.
        pipeline: the whole resolved pipeline, migrated (to reproduce a run; readers use the fields).
        meta: every meta entry, as stored, the pipeline migrated (to reproduce a run; readers use the fields).
    """

    version: int
    name: str | None
    kind: str
    family: str | None
    family_file: str | None
    dataset: str | None
    data_path: str | None
    description: str
    reference: Any
    calibration: str | None
    seeds: tuple[int, ...]
    archs: tuple[str, ...]
    protocols: Mapping[str, ProtocolRecord]
    budget: BudgetRecord
    budgets: Mapping[str, CandidateBudget]
    executor: ExecutorRecord
    lr_search: LrSearchRecord | None
    tuning: TuningRecord | None
    trend: TrendRecord | None
    base_lrs: Mapping[str, float | None]
    tunings: Mapping[str, TuningResult]
    searches: Mapping[str, SearchSelection]
    visits: tuple[Visit, ...]
    reused: Reused | None
    validation_plan: ValidationPlanRecord | None
    landscape_plan: LandscapePlanRecord | None
    cpu_threads: int | None
    created_at: str | None
    pipeline: Mapping[str, Any] = field(repr=False)
    meta: Mapping[str, Any] = field(repr=False)

    def base_lr(self, label: str) -> float | None:
        """The base LR stored for protocol ``label`` (``None``: none yet)."""
        return self.base_lrs.get(label)

    def tuned(self, label: str) -> bool:
        """Whether protocol ``label``'s LR tuning has finished (its choice is stored)."""
        return label in self.tunings

    def search_of(self, label: str) -> SearchSelection | None:
        """The LR search's selection for protocol ``label`` (one shared search: ``lr_search.protocol``'s)."""
        shared = self.lr_search.protocol if self.lr_search is not None else None
        return self.searches.get(str(shared or label))

    def family_or(self, default: str = "nb201") -> str:
        """The family's name, else ``default``."""
        return self.family or default
