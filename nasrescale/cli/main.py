"""Entry point of the ``nasrescale`` command.

Each command lives in its own module with a ``register(subparsers)`` function that adds its
parser and sets ``func``. Commands import heavy libraries (torch, pandas, matplotlib, Ray)
inside ``func``, never at the top of their module, so that ``nasrescale --help``, ``cells`` and
``analyze`` start fast (``tests/cli/test_cli_startup.py``).

Exit codes: 0 success; 2 bad input, a path that cannot be read or written included (one line on
stderr, no traceback); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM during a run).
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn, Sequence

from .. import __version__
from ..errors import NasRescaleError
from ..pipeline.signals import terminated
from . import analyze_cmd, lr_search_cmd, model_cmds, pipeline_cmds, rank_cmd, train_cmd
from .path_args import os_error_line
from .torch_pair import check_torch_pair

__all__ = ["main", "build_parser", "command_summary", "OneLineParser"]

#: modules that contribute commands, in help order
COMMAND_MODULES = [analyze_cmd, train_cmd, model_cmds, pipeline_cmds, rank_cmd, lr_search_cmd]

#: commands that build or train networks: torch and torchvision are checked as a pair before they
#: start (``torch_pair``); the others never import torch. ``run`` checks the pair itself, once it
#: holds its run folder's lock, so that a second driver is refused before torch is imported
#: (``run --dry-run`` only plans)
TORCH_COMMANDS = frozenset({"train", "summary", "diagnose", "lr-search"})


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose refusals are one line, like every other error of the command:
    ``PROG: error: MESSAGE (see PROG --help)``, exit 2, no usage block. Subcommand parsers are
    of the same class (argparse makes them of their parent's)."""

    def error(self, message: str) -> NoReturn:
        """Print the one-line refusal and exit 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every command registered."""
    parser = OneLineParser(
        prog="nasrescale",
        description="Architecture-aware init and learning rates for NAS benchmarks (Chen et al., ICLR 2024).",
    )
    parser.add_argument("--version", action="version", version=f"nasrescale {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def command_summary(width: int = 110) -> str:
    """Every command's usage, generated from the parsers (one wrapped entry per command, help
    order): the "Command line" block of docs/cli.md is this text, so it cannot drift from the options
    (``python tools/readme_cli.py`` rewrites it; a test compares the two)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    entries = []
    for command in sub.choices.values():
        formatter = argparse.HelpFormatter(command.prog, width=width)
        formatter.add_usage(command.usage, command._actions, command._mutually_exclusive_groups, prefix="")
        lines = formatter.format_help().strip("\n").replace(" [-h]", "").splitlines()
        entries.append("\n".join(line.rstrip() for line in lines))
    return "\n".join(entries) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command in TORCH_COMMANDS and not getattr(args, "dry_run", False):
            check_torch_pair(import_vision=args.command != "summary")  # summary reads no images
        return int(args.func(args) or 0)
    except NasRescaleError as err:
        print(f"nasrescale {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:
        if terminated(err):  # SIGTERM during a run (kill, scancel, a SLURM time limit)
            print(f"nasrescale {args.command}: terminated (SIGTERM)", file=sys.stderr)
            return 143
        print(f"nasrescale {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `nasrescale analyze --all | head`
        sys.stderr.close()
        return 0
    except OSError as err:
        if err.filename is None:  # not about a path the user can fix: a bug, keep its traceback
            raise
        print(f"nasrescale {args.command}: error: {os_error_line(err)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
