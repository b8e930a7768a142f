"""Options shared by the commands, spelled one way everywhere, and helpers to read them.

Each concept has one option name across all commands (``tests/cli/test_cli_vocabulary.py``
walks every parser): ``--family``/``-f`` and ``--family-file`` for the cell family,
``--width``/``--cells`` for the network's size, ``--dataset``/``--data-path``/``--train-subset``/
``--test-subset``/``--resolution`` for the data, ``--seeds``, ``--device``, ``--results``. A former spelling is
still accepted, hidden from the help (:func:`add_option`).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from typing import Any, Callable, Iterable, Sequence

import networkx as nx

from ..config import MAX_SEED, check_seeds, parse_overrides
from ..errors import ArchError, ConfigError, notice
from ..fileio import atomic_write_text
from ..space.encodings import parse_arch
from ..space.families import CellFamily
from ..space.family_loader import load_families, resolve_family
from .path_args import existing_folder, writable_folder

__all__ = ["int_at_least", "positive_float", "add_option", "retire_option", "deprecate_option", "retire_cells_path",
           "add_family_options", "add_family_file_option", "add_model_options", "add_data_options",
           "add_seeds_option", "add_device_option", "add_results_option", "family_from_args", "seeds_from_args",
           "parse_archs", "protocol_overrides", "read_archs", "seed_int", "print_records"]

#: the smallest ``--resolution`` (:data:`nasrescale.data.resize.MIN_RESOLUTION`, not imported: it loads torch)
MIN_RESOLUTION = 4

#: what ``--device`` takes, wherever a command has it
DEVICE_HELP = "auto (cuda if available, else cpu; default), cpu, cuda, or cuda:N for one GPU"


def int_at_least(low: int) -> Callable[[str], int]:
    """``argparse`` type: an integer ``>= low`` (the refusal names the range).

    >>> int_at_least(1)("3")
    3
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text!r}")
        return value
    return parse


def seed_int(text: str) -> int:
    """``argparse`` type of a seed: an integer from 0 to 2**63 - 1 (:data:`~nasrescale.config.MAX_SEED`).

    >>> seed_int("7")
    7
    """
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to 2**63 - 1, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """``argparse`` type: a finite number ``> 0`` (the refusal names the range)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0 < value < math.inf):
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def add_option(parser: argparse.ArgumentParser, *flags: str, former: Sequence[str] = (),
               **kwargs: Any) -> argparse.Action:
    """``parser.add_argument(*flags, **kwargs)``, plus the ``former`` spellings of the option:
    they do the same (same destination) and are not shown in the help."""
    action = parser.add_argument(*flags, **kwargs)
    if former:
        parser.add_argument(*former, **{**kwargs, "dest": action.dest, "help": argparse.SUPPRESS})
    return action


class _Retired(argparse.Action):
    """A former spelling that now means something else elsewhere: refused, naming the new one."""

    def __init__(self, option_strings: Sequence[str], dest: str, now: str = "", why: str = "",
                 **kwargs: Any) -> None:
        super().__init__(option_strings, argparse.SUPPRESS, nargs=1, help=argparse.SUPPRESS, **kwargs)
        self.now, self.why = now, why

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser.error(f"{option_string} {values[0]}: the option is now {self.now} {values[0]} ({self.why})")


class _Deprecated(argparse.Action):
    """A former spelling that still works: it sets the new option's value and says, once, to use the new one."""

    def __init__(self, option_strings: Sequence[str], dest: str, now: str = "", target: str = "",
                 **kwargs: Any) -> None:
        super().__init__(option_strings, argparse.SUPPRESS, help=argparse.SUPPRESS, **kwargs)
        self.now, self.target = now, target  # dest SUPPRESS: the old name holds no value of its own

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        notice(f"{parser.prog}: {option_string} is deprecated, use {self.now} (same meaning)")
        setattr(namespace, self.target, values)


def deprecate_option(parser: argparse.ArgumentParser, old: str, action: argparse.Action) -> None:
    """Accept ``old``, a former spelling of the option ``action`` adds, with a one-line deprecation notice."""
    parser.add_argument(old, action=_Deprecated, now=action.option_strings[0], target=action.dest,
                        type=action.type, metavar=action.metavar)


def retire_option(parser: argparse.ArgumentParser, old: str, now: str, why: str) -> None:
    """Refuse ``old``, a former spelling of option ``now``, with a message naming ``now`` and ``why``."""
    parser.add_argument(old, action=_Retired, now=now, why=why)


def add_family_options(parser: argparse.ArgumentParser) -> None:
    """``--family``/``-f`` (a family's name) and ``--family-file`` (files or folders, repeatable)."""
    parser.add_argument("--family", "-f", metavar="F",
                        help="cell family name (default: the one family in the family files given, else nb201)")
    add_family_file_option(parser)


def add_family_file_option(parser: argparse.ArgumentParser) -> None:
    """``--family-file PATH`` (repeatable), for ``cells``, which has no ``--family``."""
    parser.add_argument("--family-file", dest="family_files", action="append", default=[], metavar="PATH",
                        help="extra cell family file or folder of .toml files (repeatable)")


def retire_cells_path(parser: argparse.ArgumentParser) -> None:
    """Refuse ``--cells PATH``, the former family-file option of ``cells`` and ``analyze``
    (``--cells N`` is the cells per stage of the commands that build networks)."""
    retire_option(parser, "--cells", "--family-file", "--cells N is the cells per stage of a network")


def family_from_args(args: argparse.Namespace) -> CellFamily:
    """The family selected by ``--family`` and ``--family-file`` (with ``--norm``, where given, its
    networks' normalization: :mod:`nasrescale.models.norms`)."""
    family = resolve_family(args.family, args.family_files)
    if getattr(args, "norm", None) is None:
        return family
    from ..models.norms import with_norm  # torch: loaded only where a network is built

    return with_norm(family, args.norm, "--norm")


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """``--width`` and ``--cells`` (network size overrides of the family's macro) and ``--norm``."""
    parser.add_argument("--width", type=int_at_least(1), metavar="C",
                        help="network width, by the family's skeleton: nb201 C, channels of the first stage "
                             "(16); darts, darts5 C of the first cells (36); nb101 stem channels (128); "
                             "mlp/cnn families the hidden width")
    parser.add_argument("--cells", type=int_at_least(1), metavar="N",
                        help="number of cells, by the family's skeleton: nb201 cells per stage (5); darts, darts5 "
                             "all cells, reductions at N//3 and 2N//3 (20, at least 3); nb101 cells per stack (3)")
    parser.add_argument("--norm", metavar="NAME",
                        help="the network's normalization: batch (as the skeleton builds it, the default) or none "
                             "(every BatchNorm removed); a pipeline's budget.norm")


def add_data_options(parser: argparse.ArgumentParser, test_subset: int | None = None) -> None:
    """``--dataset``, ``--data-path``, ``--train-subset``, ``--test-subset`` (default ``test_subset``) and
    ``--resolution``: the data keys of a pipeline's ``[data]`` and ``[budget]``."""
    parser.add_argument("--dataset", default="cifar10-subset", metavar="NAME",
                        help="cifar10-subset (shipped, default), cifar10, cifar100, imagefolder, imagenet16-120")
    add_option(parser, "--data-path", former=["--data"], metavar="PATH",
               help="the dataset's folder or image pack (cifar10/100, imagefolder, imagenet16-120)")
    add_option(parser, "--train-subset", former=["--subset"], type=int_at_least(1), metavar="N",
               help="train on a class-balanced subset of N images")
    default = "" if test_subset is None else f" (default {test_subset})"
    parser.add_argument("--test-subset", type=int_at_least(1), default=test_subset, metavar="M",
                        help=f"evaluate on a class-balanced subset of M images{default}")
    parser.add_argument("--resolution", type=int_at_least(MIN_RESOLUTION), metavar="PX",
                        help="box-downsample every image to PX x PX once at load (a pipeline's budget.resolution, "
                             "e.g. 16; default: the dataset's own size)")


def add_seeds_option(parser: argparse.ArgumentParser, default: Sequence[int] | None = None, help: str = "") -> None:
    """``--seeds S [S ...]``: integers separated by spaces or commas (``0 1 2`` or ``0,1,2``)."""
    parser.add_argument("--seeds", nargs="+", metavar="S", default=None if default is None else list(default),
                        help=f"{help} (spaces or commas: 0 1 2 or 0,1,2)")


def seeds_from_args(values: Sequence[int | str]) -> list[int]:
    """The distinct seeds of ``--seeds``.

    >>> seeds_from_args(["0,1", "2"])
    [0, 1, 2]
    """
    words = [w for v in values for w in str(v).split(",") if w.strip()]
    text = " ".join(str(v) for v in values)
    if not words or not all(w.strip().removeprefix("-").isdigit() for w in words):
        raise ConfigError(f"--seeds {text}: expected integers separated by spaces or commas, e.g. 0,1,2")
    seeds = [int(w) for w in words]
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"--seeds {text}: give each seed once")
    check_seeds(seeds, f"--seeds {text}")
    return seeds


def add_device_option(parser: argparse.ArgumentParser) -> None:
    """``--device``: ``auto``, ``cpu``, ``cuda`` or ``cuda:N``."""
    parser.add_argument("--device", default="auto", metavar="DEVICE", type=_device, help=DEVICE_HELP)


def _device(text: str) -> str:
    """``argparse`` type of ``--device``."""
    if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", text):
        raise argparse.ArgumentTypeError(f"{text!r}: expected {DEVICE_HELP}")
    return text


def add_results_option(parser: argparse.ArgumentParser, *, writes: bool) -> None:
    """``--results DIR``: the folder that holds the runs (checked: it exists to be read, or can
    be written, created if missing, by a command that ``writes``)."""
    parser.add_argument("--results", metavar="DIR", type=writable_folder if writes else existing_folder,
                        help="folder of pipeline results, one subfolder per run (default ./results)")


def parse_archs(archs: Iterable[str], family: CellFamily, args: argparse.Namespace) -> list[nx.DiGraph]:
    """Each architecture parsed in ``family``. When one does not parse and no ``--family`` was
    given, the error names the other known families it parses in (``pass --family F``)."""
    graphs = []
    for arch in archs:
        try:
            graphs.append(parse_arch(arch, family))
        except ArchError as err:
            fits = [] if args.family is not None else [
                name for name, other in load_families(args.family_files).items()
                if name != family.name and _parses(arch, other)]
            if not fits:
                raise
            raise ArchError(f"{err}; it is a cell of {' and '.join(fits)}: pass --family {fits[0]}") from None
    return graphs


def _parses(arch: str, family: CellFamily) -> bool:
    try:
        parse_arch(arch, family)
    except ArchError:
        return False
    return True


def protocol_overrides(sets: Iterable[str], **flags: Any) -> dict[str, Any]:
    """A command's protocol overrides, typed: its ``--set KEY=VALUE`` strings parsed (once, here),
    then its typed flags (``--epochs 3`` -> ``epochs=3``) that were given, which win.

    >>> protocol_overrides(["epochs=5", "weight_decay=3e-4"], epochs=3, batch_size=None)
    {'epochs': 3, 'weight_decay': 0.0003}
    """
    return {**parse_overrides(list(sets)), **{k: v for k, v in flags.items() if v is not None}}


def read_archs(items: Iterable[str]) -> list[str]:
    """Architecture arguments, where ``-`` stands for one architecture per stdin line."""
    archs: list[str] = []
    for item in items:
        if item == "-":
            archs += [line.strip() for line in sys.stdin if line.strip() and not line.startswith("#")]
        else:
            archs.append(item)
    return archs


def print_records(records: Sequence[dict[str, Any]], out: str | None, history: bool, *, one: bool = False) -> None:
    """The JSON output of ``train`` and ``train --fuse``: the full records (history included) to
    ``out`` where given (the one record itself where ``one``, else a list), then one JSON line per
    record on stdout, without its history unless ``history``."""
    if out:
        atomic_write_text(out, json.dumps(records[0] if one else list(records), indent=2) + "\n")
    for record in records:
        print(json.dumps(record if history else {k: v for k, v in record.items() if k != "history"}))
