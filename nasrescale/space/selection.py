"""Choosing a pipeline's architectures: a registry of selection methods, looked up by name.

``[archs] select`` names a method registered with :func:`register_selection`; the pipeline
spec checks the name against :func:`selection_methods` (an unknown one is an error listing
them) and :func:`select_archs` runs it. The built-in methods are ``uniform`` (a seeded
uniform sample of the family's space), ``stratified`` (one cell per equal-size stratum of
NB201 benchmark accuracy), ``list`` (``archs.names``) and ``file`` (one architecture per line).

Every selection is deterministic given its settings (seeded ``random.Random``), returns
canonical strings (the family's encoding) without duplicates, and puts ``include`` first.

With ``archs.unique = true`` a selection takes one cell per isomorphism class
(:mod:`nasrescale.space.isomorphism`): ``uniform`` draws classes uniformly (each as its first
cell in digit-string order), ``stratified`` stratifies those first cells, ``list`` and ``file``
keep the first cell of each class they name. The default (``false``) keeps the selections, and
so the job keys, of pipelines stored before the option existed.

>>> selection_methods()
('uniform', 'stratified', 'list', 'file')
>>> selection_method("random")
Traceback (most recent call last):
...
nasrescale.errors.ConfigError: archs.select: expected one of 'uniform', 'stratified', 'list', 'file' (the registered selection methods), got 'random'
>>> from nasrescale.space.family_loader import get_family
>>> from nasrescale.pipeline.spec import ArchSettings
>>> nb = get_family("nb201")
>>> a = select_archs(ArchSettings(count=5, seed=1), nb)
>>> len(a), a == select_archs(ArchSettings(count=5, seed=1), nb), len(set(a))
(5, True, 5)
>>> select_archs(ArchSettings(select="list", names=("1_10_021", "0_10_211"), unique=True), nb)
['|skip_connect~0|+|skip_connect~0|none~1|+|none~0|nor_conv_1x1~1|skip_connect~2|']
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..registry import Registry
from ..errors import ArchError, ConfigError, NasRescaleError, notice
from ..fileio import read_utf8
from .analysis import space_size
from .benchmark import benchmark_accuracies
from .encodings import make_graph, parse_arch
from .families import CellFamily
from .parsed_arch import ParsedArch, collecting, remember
from .isomorphism import class_representatives, first_of_each_class, isomorphism_classes
from .topology import is_degenerate

__all__ = ["METHODS", "SelectionMethod", "register_selection", "selection_methods", "selection_method", "check_selection",
           "select_archs", "select_cells", "uniform_sample", "stratified_sample", "unique_pool"]

#: ``fn(settings, family, include, dataset, base_dir) -> architectures`` (``include`` first)
SelectFn = Callable[[Any, CellFamily, list[str], "str | None", "Path | None"], list[str]]


@dataclass(frozen=True)
class SelectionMethod:
    """One registered way of choosing architectures.

    Attributes:
        name: the ``archs.select`` value.
        select: the method (see :data:`SelectFn`).
        summary: one line for docs and help texts.
        needs: the ``archs`` key the method reads that must be set (``None``: none).
        needs_text: what that key must hold, for the error message.
    """

    name: str
    select: SelectFn
    summary: str = ""
    needs: str | None = None
    needs_text: str = ""


#: the registered selection methods, by ``archs.select``
METHODS: Registry[SelectionMethod] = Registry("archs.select", "selection methods")


def register_selection(name: str, *, summary: str = "", needs: str | None = None,
                       needs_text: str = "") -> Callable[[SelectFn], SelectFn]:
    """Decorator: register ``fn`` as the selection method ``archs.select = name``.

    A second registration of a name replaces the first (a plug-in may override a built-in).
    """
    return METHODS.decorator(name, lambda fn: SelectionMethod(
        name, fn, summary or (fn.__doc__ or "").strip(), needs, needs_text))


#: the registered ``archs.select`` values, in registration order
selection_methods = METHODS.names
#: the method registered as a name; an unknown name is a ConfigError listing the registered ones
selection_method = METHODS.get


def check_selection(settings: Any) -> None:
    """``settings.select`` is registered and the ``archs`` key its method needs is set.

    Raises:
        ConfigError: naming the ``archs.*`` key at fault.
    """
    method = selection_method(settings.select)
    if method.needs is not None and not getattr(settings, method.needs):
        raise ConfigError(f"archs.{method.needs}: select = \"{method.name}\" needs {method.needs_text}")


def _canonical(items: Sequence[str], family: CellFamily, where: str) -> list[str]:
    """The items in canonical form, a repeated one kept once (with a notice naming the repeats)."""
    first: dict[str, int] = {}
    repeats: list[str] = []
    for i, text in enumerate(items):
        try:
            arch = remember(ParsedArch.parse(text, family)).text
        except ArchError as err:
            raise ConfigError(f"{where}[{i}]: {err}") from None
        if arch in first:
            repeats.append(f"[{i}] = [{first[arch]}]")
        else:
            first[arch] = i
    if repeats:
        notice(f"{where}: {len(repeats)} duplicate architecture{'s' if len(repeats) > 1 else ''} merged "
               f"({', '.join(repeats[:4])}{', ...' if len(repeats) > 4 else ''}); {len(first)} distinct kept")
    return list(first)


def _cell_from_index(index: int, family: CellFamily) -> ParsedArch:
    """The cell number ``index`` of an enumerable family (digit-string order, as ``analyze --all``)."""
    n, ops = family.nodes, family.op_names
    pairs = [(u, v) for v in range(1, n) for u in range(v)]
    digits = []
    for _ in pairs:
        index, d = divmod(index, len(ops))
        digits.append(d)
    edges = [(u, v, ops[d]) for (u, v), d in zip(pairs, reversed(digits))]
    return ParsedArch.of_graph(make_graph(edges, family, n), family)


def uniform_sample(family: CellFamily, count: int, seed: int, exclude: Sequence[str] = (),
                   degenerate: bool = True) -> list[str]:
    """``count`` distinct cells drawn uniformly from an enumerable family's space (without its
    degenerate cells unless ``degenerate``).

    Raises:
        ConfigError: the family is not enumerable, or has fewer cells than asked for.
    """
    try:
        size = space_size(family)
    except ArchError as err:
        raise ConfigError(f"archs.select: uniform sampling needs an enumerable family ({err}); "
                          "use select = \"list\" or \"file\"") from None
    if count > size - len(exclude):
        raise ConfigError(f"archs.count: {count} cells asked for, family {family.name!r} has {size}")
    rng, out, skip = random.Random(seed), [], set(exclude)
    while len(out) < count:
        for index in rng.sample(range(size), min(size, count - len(out) + len(skip))):
            cell = _cell_from_index(index, family)
            arch = cell.text
            if arch in skip or arch in out or len(out) >= count:
                continue
            if degenerate or not is_degenerate(cell.graph, family):
                out.append(remember(cell).text)
            else:
                skip.add(arch)
    return out


def unique_pool(family: CellFamily, exclude: Sequence[str] = (), degenerate: bool = True) -> list[str]:
    """The first cell (digit-string order) of each isomorphism class of an enumerable family,
    without the classes of ``exclude`` and, unless ``degenerate``, the degenerate classes.

    >>> from nasrescale.space.family_loader import get_family
    >>> len(unique_pool(get_family("nb201"))), len(unique_pool(get_family("nb201"), degenerate=False))
    (5545, 5521)
    """
    try:
        classes = isomorphism_classes(family)
    except ArchError as err:
        raise ConfigError(f"archs.unique: isomorphism classes need an enumerable family ({err})") from None
    reps = class_representatives(family)
    skip = {reps[a] for a in exclude if a in reps}
    pool = [cells[0] for cells in classes.values() if cells[0] not in skip]  # digit-string order
    return pool if degenerate else [a for a in pool if not is_degenerate(parse_arch(a, family), family)]


def stratified_sample(accuracies: dict[str, float], count: int, seed: int, exclude: Sequence[str] = ()) -> list[str]:
    """One cell from each of ``count`` equal-size strata of benchmark accuracy (low to high).

    >>> acc = {f"a{i}": float(i) for i in range(10)}
    >>> stratified_sample(acc, 2, 0)[0] in {"a0", "a1", "a2", "a3", "a4"}
    True
    """
    ranked = sorted((a for a in accuracies if a not in set(exclude)), key=lambda a: (accuracies[a], a))
    if count > len(ranked):
        raise ConfigError(f"archs.count: {count} strata asked for, the reference has {len(ranked)} cells")
    rng = random.Random(seed)
    bounds = [round(i * len(ranked) / count) for i in range(count + 1)]
    return [ranked[rng.randrange(lo, hi)] for lo, hi in zip(bounds, bounds[1:])]


def _unique(settings: Any, archs: list[str], family: CellFamily) -> list[str]:
    """``archs`` with one cell per isomorphism class when ``archs.unique`` is set."""
    return first_of_each_class(archs, family)[0] if getattr(settings, "unique", False) else archs


def _read_file(path: Path) -> list[str]:
    try:
        lines = read_utf8(path).splitlines()
    except OSError as err:
        raise ConfigError(f"archs.file: cannot read {str(path)!r}: {err.strerror or err}") from None
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def select_archs(settings: Any, family: CellFamily, dataset: str | None = None, base_dir: Path | None = None) -> list[str]:
    """The architectures ``settings`` (an :class:`~nasrescale.pipeline.spec.ArchSettings`) choose.

    Args:
        settings: the ``[archs]`` table.
        family: the cell family.
        dataset: the pipeline's dataset (default benchmark column of ``stratified``).
        base_dir: folder relative ``archs.file`` paths are read from.

    Raises:
        ConfigError: naming the ``archs.*`` key at fault (an unknown ``select`` lists the
            registered methods).
    """
    check_selection(settings)
    include = _canonical(settings.include, family, "archs.include")
    return selection_method(settings.select).select(settings, family, include, dataset, base_dir)


def select_cells(settings: Any, family: CellFamily, dataset: str | None = None,
                 base_dir: Path | None = None) -> list[ParsedArch]:
    """:func:`select_archs`, parsed: each cell parsed once (what the selection parsed on the way is kept)."""
    with collecting(family) as memo:
        archs = select_archs(settings, family, dataset, base_dir)
    return memo.cells(archs)


@register_selection("uniform", summary="a seeded uniform sample of the family's space")
def _select_uniform(settings: Any, family: CellFamily, include: list[str], dataset: str | None,
                    base_dir: Path | None) -> list[str]:
    wanted = max(0, settings.count - len(include))
    keep_degenerate = getattr(settings, "sample_degenerate", True)
    if getattr(settings, "unique", False):
        pool = unique_pool(family, include, keep_degenerate)
        if wanted > len(pool):
            raise ConfigError(f"archs.count: {wanted} classes asked for, family {family.name!r} has {len(pool)}")
        return include + random.Random(settings.seed).sample(pool, wanted)
    return include + uniform_sample(family, wanted, settings.seed, include, keep_degenerate)


@register_selection("stratified", summary="one cell per equal-size stratum of NB201 benchmark accuracy")
def _select_stratified(settings: Any, family: CellFamily, include: list[str], dataset: str | None,
                       base_dir: Path | None) -> list[str]:
    column = settings.stratify_by or dataset or "cifar10"
    try:
        acc = benchmark_accuracies(column)
    except NasRescaleError as err:
        raise ConfigError(f"archs.stratify_by: {err}") from None
    if family.name != "nb201":
        raise ConfigError(f"archs.select: stratified sampling uses the NB201 benchmark table; family "
                          f"{family.name!r} has none (use uniform, list or file)")
    keep_degenerate = getattr(settings, "sample_degenerate", True)
    wanted = max(0, settings.count - len(include))
    if getattr(settings, "unique", False):
        pool = set(unique_pool(family, include, keep_degenerate))
        return include + stratified_sample({a: v for a, v in acc.items() if a in pool}, wanted, settings.seed)
    exclude = include if keep_degenerate else include + [a for a in acc if is_degenerate(parse_arch(a, family), family)]
    return include + stratified_sample(acc, wanted, settings.seed, exclude)


@register_selection("list", needs="names", needs_text="a non-empty list of architectures",
                    summary="the architectures of archs.names")
def _select_list(settings: Any, family: CellFamily, include: list[str], dataset: str | None,
                 base_dir: Path | None) -> list[str]:
    return _unique(settings, _canonical([*include, *settings.names], family, "archs.names"), family)


@register_selection("file", needs="file", needs_text="a file with one architecture per line",
                    summary="one architecture per line of archs.file (relative to the pipeline file)")
def _select_file(settings: Any, family: CellFamily, include: list[str], dataset: str | None,
                 base_dir: Path | None) -> list[str]:
    path = Path(settings.file).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    return _unique(settings, _canonical([*include, *_read_file(path)], family, f"archs.file {path}"), family)
