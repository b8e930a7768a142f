"""Choosing a pipeline's architectures: uniform sample, accuracy-stratified sample, list or file.

Every selection is deterministic given its settings (seeded ``random.Random``), returns
canonical strings (the family's encoding) without duplicates, and puts ``include`` first.

>>> from nasrescale.space.registry import get_family
>>> from nasrescale.pipeline.spec import ArchSettings
>>> nb = get_family("nb201")
>>> a = select_archs(ArchSettings(count=5, seed=1), nb)
>>> len(a), a == select_archs(ArchSettings(count=5, seed=1), nb), len(set(a))
(5, True, 5)
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Sequence

from ..errors import ArchError, ConfigError, NasRescaleError
from .encodings import format_arch, make_graph, parse_arch
from .families import CellFamily

__all__ = ["select_archs", "uniform_sample", "stratified_sample"]


def _canonical(items: Sequence[str], family: CellFamily, where: str) -> list[str]:
    out: list[str] = []
    for i, text in enumerate(items):
        try:
            arch = format_arch(parse_arch(text, family), family)
        except ArchError as err:
            raise ConfigError(f"{where}[{i}]: {err}") from None
        if arch not in out:
            out.append(arch)
    return out


def _cell_from_index(index: int, family: CellFamily) -> str:
    """The cell number ``index`` of an enumerable family (digit-string order, as ``analyze --all``)."""
    n, ops = family.nodes, family.op_names
    pairs = [(u, v) for v in range(1, n) for u in range(v)]
    digits = []
    for _ in pairs:
        index, d = divmod(index, len(ops))
        digits.append(d)
    edges = [(u, v, ops[d]) for (u, v), d in zip(pairs, reversed(digits))]
    return format_arch(make_graph(edges, family, n), family)


def uniform_sample(family: CellFamily, count: int, seed: int, exclude: Sequence[str] = ()) -> list[str]:
    """``count`` distinct cells drawn uniformly from an enumerable family's space.

    Raises:
        ConfigError: the family is not enumerable, or has fewer cells than asked for.
    """
    from .analysis import space_size

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
            arch = _cell_from_index(index, family)
            if arch not in skip and arch not in out and len(out) < count:
                out.append(arch)
    return out


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


def _read_file(path: Path) -> list[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
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
        ConfigError: naming the ``archs.*`` key at fault.
    """
    include = _canonical(settings.include, family, "archs.include")
    if settings.select == "list":
        return _canonical([*include, *settings.names], family, "archs.names")
    if settings.select == "file":
        path = Path(settings.file).expanduser()
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        return _canonical([*include, *_read_file(path)], family, f"archs.file {path}")
    wanted = max(0, settings.count - len(include))
    if settings.select == "uniform":
        return include + uniform_sample(family, wanted, settings.seed, include)
    from .benchmark import benchmark_accuracies

    column = settings.stratify_by or dataset or "cifar10"
    try:
        acc = benchmark_accuracies(column)
    except NasRescaleError as err:
        raise ConfigError(f"archs.stratify_by: {err}") from None
    if family.name != "nb201":
        raise ConfigError(f"archs.select: stratified sampling uses the NB201 benchmark table; family "
                          f"{family.name!r} has none (use uniform, list or file)")
    return include + stratified_sample(acc, wanted, settings.seed, include)
