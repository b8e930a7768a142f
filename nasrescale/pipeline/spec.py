"""Pipeline files: which architectures to retrain, under which protocols and seeds, on what.

A pipeline is a TOML file (``pipelines/*.toml``) read into frozen dataclasses with
:mod:`nasrescale.config`; every unknown key or bad value is a :class:`ConfigError` naming its
key path and the allowed keys or values. ``--set a.b=value`` overrides any key
(``--set budget.epochs=3``, ``--set executor.kind=ray``, ``--set protocols.rescaled.base_lr=0.3``)::

    [pipeline]
    name = "quickstart"          # results go to results/<name>/
    family = "nb201"             # cell family (default nb201; or family_file = "path.toml" alone)
    seeds = [0, 1]
    reference = "nb201:cifar10"  # what `report` compares against (a CSV path, or "none"; checked by run)

    [data]                       # name, path, test_split (full | x-test | x-valid)
    name = "cifar10-subset"

    [archs]                      # select = uniform | stratified | list | file
    select = "uniform"
    count = 12                   # cells in all, `include` first
    seed = 0
    include = ["|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"]

    [protocols.default]          # label -> shipped protocol name or .toml file + overrides
    protocol = "nb201"
    [protocols.rescaled]
    protocol = "rescaled"
    base_lr = 0.46               # alias of the protocol's `lr`; "search": run the LR search first

    [lr_search]                  # the grid of base_lr = "search" and of kind = "lr_validation"
    lr_min = 0.01                # (nasrescale.lrsearch.search.LrSearchSettings)

    [budget]                     # epochs, batch_size (every protocol), width, cells, train_subset, test_subset
    epochs = 4

    [executor]                   # nasrescale.executors.ExecutorSettings
    kind = "local"

>>> p = load_pipeline("quickstart", {"budget.epochs": 2})
>>> p.pipeline.name, [e.label for e in p.protocols], p.protocols[0].protocol.epochs
('quickstart', ['default', 'rescaled'], 2)
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..config import Overrides, from_table, read_toml_file, set_in_table, to_table, typed_overrides
from ..errors import ConfigError
from ..executors.base import ExecutorSettings
from ..jobs.job import DataSpec, TrainJob
from ..lrsearch.search import LrSearchSettings
from ..models.norms import with_norm
from ..plugins import Plugin, import_plugins
from ..protocol import LR_TO_SEARCH, LrToSearch
from ..space.families import CellFamily
from ..space.parsed_arch import CellMemo, ParsedArch
from ..space.selection import select_cells
from .checks import check_distinct, check_stages, check_tuning_seeds
from .family import named_family
from .files import pipeline_names, resolve_pipeline_path
from .identity import analysis_only, strip_keys
from .kind_registry import PipelineKind, get_kind, kind_tables, owned_tables
from .preflight import PIPELINE_KEYS, DataKeys
from .protocols import ProtocolEntry, protocol_entry
from .tables import ArchSettings, Budget, DataSettings, PipelineSettings, TuningSettings

__all__ = ["TuningSettings", "PipelineSettings", "DataSettings", "ArchSettings", "Budget", "ProtocolEntry",
           "Pipeline",
           "load_pipeline", "pipeline_names", "resolve_pipeline_path"]


#: the tables of every kind: typed here; a kind's own tables are its
#: :attr:`PipelineKind.tables` (:mod:`nasrescale.kinds`), never named here
_SECTIONS = {"pipeline": PipelineSettings, "data": DataSettings, "archs": ArchSettings, "budget": Budget,
             "executor": ExecutorSettings, "lr_search": LrSearchSettings, "tuning": TuningSettings}

#: the tables every kind resolves (the others: a kind's own, :attr:`PipelineKind.owns`, and the
#: stages' tables it uses, :attr:`PipelineKind.uses`)
_SHARED = ("pipeline", "data", "archs", "budget", "executor")


def _tables() -> tuple[str, ...]:
    """Every top-level table of a pipeline file: the shared ones, ``protocols`` and every
    registered kind's own."""
    return (*_SECTIONS, "protocols", *kind_tables())


@dataclass(frozen=True)
class Pipeline:
    """A resolved pipeline (see the module docstring)."""

    pipeline: PipelineSettings
    data: DataSettings
    archs: ArchSettings
    budget: Budget
    executor: ExecutorSettings
    protocols: tuple[ProtocolEntry, ...]
    source: str | None = None
    lr_search: LrSearchSettings = LrSearchSettings()
    tuning: TuningSettings = TuningSettings()
    own: tuple[tuple[str, Any], ...] = ()  # the kind's own tables, typed: (name, value) (PipelineKind.tables)
    plugins: tuple[Plugin, ...] = ()  # what ``pipeline.imports`` names, imported when the file was read

    @property
    def name(self) -> str:
        """The pipeline's name (its results folder)."""
        return self.pipeline.name

    def imports(self) -> tuple[Plugin, ...]:
        """Every plug-in the pipeline imported: its own ``pipeline.imports``, then its protocol files'."""
        return tuple(dict.fromkeys([*self.plugins, *(p for e in self.protocols for p in e.imports)]))

    def table(self, name: str) -> Any:
        """The kind's own table ``name``, typed (a trend's ``trend``: its ``TrendSettings``).

        Raises:
            ConfigError: the pipeline's kind has no such table.
        """
        for table, value in self.own:
            if table == name:
                return value
        raise ConfigError(f"{name}: a {self.pipeline.kind} pipeline has no [{name}] table")

    @property
    def kind(self) -> PipelineKind:
        """The registered kind of ``[pipeline] kind`` (:mod:`nasrescale.pipeline.kind_registry`)."""
        return get_kind(self.pipeline.kind)

    def family(self) -> CellFamily:
        """The :class:`~nasrescale.space.families.CellFamily`, read once per pipeline (its files too)."""
        return self._family

    @functools.cached_property
    def _family(self) -> CellFamily:
        family = named_family(self.pipeline, self.source)
        return family if self.budget.norm is None else with_norm(family, self.budget.norm)

    def data_spec(self) -> DataSpec:
        """The jobs' :class:`DataSpec`."""
        return DataSpec(self.data.name, self.data.path, self.data.test_split, self.budget.train_subset,
                        self.budget.test_subset, self.budget.resolution)

    def data_specs(self) -> list[tuple[DataSpec, DataKeys]]:
        """Every distinct dataset its jobs use, with how its keys are spelled in errors."""
        specs = self.kind.data_specs
        return [(self.data_spec(), PIPELINE_KEYS)] if specs is None else specs(self)

    def arch_list(self) -> list[str]:
        """The selected architectures, canonical, in selection order (selected once per pipeline)."""
        return list(self._selected)

    def arch_cells(self, archs: Sequence[str]) -> list[ParsedArch]:
        """``archs`` parsed, each string once per pipeline (the selection's cells as selected):
        what every planner hands its jobs."""
        return self._cell_memo.cells(archs)

    @functools.cached_property
    def _selected(self) -> tuple[str, ...]:
        base = None if self.source is None else Path(self.source).parent
        cells = select_cells(self.archs, self.family(), self.data.name, base)
        self._cell_memo.add(cells)
        return tuple(c.text for c in cells)

    @functools.cached_property
    def _cell_memo(self) -> CellMemo:
        return CellMemo(self.family())

    def needs_search(self) -> bool:
        """Whether some protocol's base LR comes from the LR search (``base_lr = "search"``)."""
        return self.kind.searches and any(e.search for e in self.protocols)

    def needs_tuning(self) -> bool:
        """Whether some protocol's LR multiplier comes from the run's tuning (``tune = true``)."""
        return self.kind.searches and any(e.tune for e in self.protocols)

    def with_base_lrs(self, lrs: dict[str, float | LrToSearch]) -> "Pipeline":
        """A copy whose protocols ``lrs`` names (label -> base LR) use that LR."""
        entries = tuple(dataclasses.replace(e, protocol=dataclasses.replace(e.protocol, lr=lrs[e.label]))
                        if e.label in lrs else e for e in self.protocols)
        copy = dataclasses.replace(self, protocols=entries)
        for name in ("_family", "_cell_memo", "_selected"):  # as loaded, selected and parsed: not again
            if name in self.__dict__:
                copy.__dict__[name] = self.__dict__[name]
        return copy

    def with_lrs_to_search(self) -> "Pipeline":
        """A copy whose ``base_lr = "search"`` protocols hold :data:`~nasrescale.protocol.LR_TO_SEARCH`:
        its jobs are planned before the search only to be checked and counted; they refuse to be
        keyed, stored or trained."""
        return self.with_base_lrs({e.label: LR_TO_SEARCH for e in self.protocols if e.search})

    def jobs(self, archs: Sequence[str] | None = None) -> list[TrainJob]:
        """Every job, as the kind plans them (:attr:`PipelineKind.plan`)."""
        return self.kind.plan(self, self.arch_list() if archs is None else archs)[0]

    def resolved(self, archs: Sequence[str]) -> dict[str, Any]:
        """The whole resolved pipeline as JSON (saved with the run)."""
        kind = self.kind
        tables = (*_SHARED, *kind.owns, *kind.uses(self))
        out: dict[str, Any] = {name: to_table(getattr(self, name)) for name in _SECTIONS if name in tables}
        if not kind.stores_kind:
            out["pipeline"].pop("kind")
        out["protocols"] = {e.label: {"source": e.source, **to_table(e.protocol), **({"base_lr": "search"} if e.search else {}),
                                      **({"tune": True} if e.tune else {})}
                            for e in self.protocols}
        writers = {table.name: table.write for table in kind.tables}
        out.update({name: writers[name](value) for name, value in self.own})
        out["arch_list"] = list(archs)
        out["pipeline"]["family"] = self.family().name  # family_file alone: the file's family, by name
        out["pipeline"].pop("imports")  # as typed: stored resolved (module names, absolute .py paths), where any
        if self.imports():
            out["pipeline"]["imports"] = [p.name for p in self.imports()]
        out["family_digest"] = self.family().digest()
        return out

    def identity(self, archs: Sequence[str]) -> dict[str, Any]:
        """What determines the run's results: :meth:`resolved` without the executor, data path,
        description, reference and the analysis-only keys
        (:func:`~nasrescale.pipeline.identity.analysis_only`: changing those never changes a stored result)."""
        out = self.resolved(archs)
        out.pop("executor")
        out["data"].pop("path", None)
        for key in ("description", "reference", "calibration", "imports"):
            out["pipeline"].pop(key, None)
        return strip_keys(self.kind.identity(out), analysis_only())


def _apply_overrides(doc: dict[str, Any], overrides: dict[str, Any]) -> None:
    for key, value in overrides.items():
        path, text = key.split("."), f"{key}={value!r}"
        if len(path) < 2:
            raise ConfigError(f"--set {text!r}: give a key inside the table, e.g. {path[0]}.KEY=VALUE")
        set_in_table(doc, path, value, text)


def _check_tables(doc: dict[str, Any], overrides: dict[str, Any], file: str) -> None:
    """Every table the file or ``--set`` names is a shared one or a registered kind's (a plug-in
    kind's too: checked once the plug-ins are imported)."""
    tables = _tables()
    for key, value in overrides.items():
        if key.split(".")[0] not in tables:
            raise ConfigError(f"--set {f'{key}={value!r}'!r}: unknown table {key.split('.')[0]!r}; tables: {', '.join(tables)}")
    for key in doc:
        if key not in tables:
            raise ConfigError(f"{key}: unknown table in {file}; allowed tables: {', '.join(tables)}")


def load_pipeline(name_or_path: str | Path, overrides: Overrides = ()) -> Pipeline:
    """Read a pipeline file (or a shipped pipeline by name), apply the typed ``overrides``
    (dotted key -> value, e.g. ``{"budget.epochs": 2}``: the command line's ``--set``, parsed
    once there), check it.

    Raises:
        ConfigError: an unreadable file, an unknown table or key, a bad value (named by its key
            path, with the allowed keys or values).
    """
    path = resolve_pipeline_path(name_or_path)
    doc, typed = read_toml_file(path, "pipeline"), typed_overrides(overrides)
    _apply_overrides(doc, typed)
    if not isinstance(doc.get("pipeline"), dict):
        raise ConfigError("pipeline: missing [pipeline] table (with at least name = \"...\")")
    # the plug-ins first: the names the rest of the file gives (a kind and its tables) may be theirs
    plugins = import_plugins(doc["pipeline"].get("imports", []), path.parent, "pipeline.imports")
    _check_tables(doc, typed, path.name)
    sections = {}
    for name, cls in _SECTIONS.items():
        table = doc.get(name, {})
        if not isinstance(table, dict):
            raise ConfigError(f"{name}: expected a table")
        sections[name] = from_table(cls, table, name)
    protocols = doc.get("protocols")
    if not isinstance(protocols, dict) or not protocols:
        raise ConfigError("protocols: missing; add at least one [protocols.<label>] table with protocol = \"nb201\"")
    kind = get_kind(sections["pipeline"].kind)
    for table, owner in owned_tables().items():
        if table in doc and owner != kind.name:
            raise ConfigError(f"{table}: this table belongs to kind = \"{owner}\"; a {kind.name} pipeline has none "
                              f"(set pipeline.kind = \"{owner}\" or drop [{table}])")
    own = _own_tables(doc, kind, sections)
    needs_lr = kind.needs_base_lr
    entries = tuple(protocol_entry(label, t, sections["budget"], path.parent, needs_lr) for label, t in protocols.items())
    check_stages(entries, sections["lr_search"], kind)
    check_tuning_seeds(entries, sections["tuning"].seeds, sections["pipeline"].seeds)
    check_distinct(entries)
    return Pipeline(**sections, protocols=entries, source=str(path), own=own, plugins=plugins)


def _own_tables(doc: dict[str, Any], kind: PipelineKind, sections: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The kind's own tables (:attr:`PipelineKind.tables`), each read by its kind."""
    own = []
    for table in kind.tables:
        raw = doc.get(table.name)
        if raw is not None and not isinstance(raw, dict):
            raise ConfigError(f"{table.name}: expected a table")
        own.append((table.name, table.read(raw, sections)))
    return tuple(own)
