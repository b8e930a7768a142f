"""Fuzzing the command line's values: architecture strings in every encoding, and every numeric
option of every command. Each input ends in exit 0, or exit 2 with one line naming what is
wrong, never a traceback (:func:`fuzz_helpers.settle`). ``pytest -k fuzz`` runs these; the
``_long`` variants only with ``-m slow``."""

from __future__ import annotations

import argparse
import io
import contextlib

import networkx as nx
from hypothesis import event, strategies as st

from nasrescale.cli.main import build_parser
from nasrescale.cli.train_cmd import train_job
from nasrescale.errors import ArchError, ConfigError, NasRescaleError
from nasrescale.space.encodings import format_arch, parse_arch
from nasrescale.space.families import ENCODINGS
from nasrescale.space.family_loader import load_families
from nasrescale.space.selection import uniform_sample

from fuzz_helpers import edit_text, fuzz_pair, settle, text_edits

FAMILIES = {name: family for name, family in load_families().items()}


def _encoded_samples() -> list[tuple[str, str]]:
    """``(family, architecture)``: a few cells of each shipped family in each encoding it has."""
    out = []
    for name, family in FAMILIES.items():
        try:
            archs = uniform_sample(family, 4, seed=1)
        except ConfigError:  # a family that cannot be enumerated (DARTS, NAS-Bench-101): its base cell
            archs = [family.base]
        for arch in archs:
            for encoding in ENCODINGS:
                try:
                    out.append((name, format_arch(parse_arch(arch, family), family, encoding)))
                except ArchError:
                    pass  # an encoding the family has no form in
    return out


SAMPLES = _encoded_samples()
ARCH_CHARS = "|~+_0123456789[], \"'none_skipconvrelu-x.\n\t\\"
ARCHS = st.tuples(st.sampled_from(sorted(FAMILIES)), st.one_of(
    st.sampled_from(SAMPLES).map(lambda s: s[1]),
    st.tuples(st.sampled_from(SAMPLES).map(lambda s: s[1]), text_edits(ARCH_CHARS)).map(lambda t: edit_text(*t)),
    st.text(max_size=40),
))


def check_architecture(value: tuple[str, str]) -> None:
    """An architecture string parses in a family or is an :class:`ArchError`; one that parses
    reads back from each of its encodings as the same cell; ``analyze`` exits 0 or 2."""
    name, text = value
    family = FAMILIES[name]
    try:
        graph = parse_arch(text, family)
    except ArchError:
        graph = None
    if graph is not None:
        canonical = format_arch(graph, family)
        for encoding in ENCODINGS:
            try:
                again = format_arch(graph, family, encoding)
            except ArchError:
                continue
            assert format_arch(parse_arch(again, family), family) == canonical, (text, encoding)
        assert nx.is_directed_acyclic_graph(graph)
    code, out, _ = settle("analyze", "--family", name, "--", text)
    event(f"analyze: exit {code}")
    assert (code == 0) == (graph is not None), (text, code)


test_fuzz_architecture_strings, test_fuzz_architecture_strings_long = fuzz_pair(ARCHS, check_architecture)


def _numeric_options() -> list[tuple[str, list[str], str]]:
    """``(command, its required arguments, option)`` for every option whose value is a number."""
    required = {"train": ["3_11_111"], "run": ["quickstart"], "status": ["quickstart"], "export": ["quickstart"],
                "rank": ["nb201:cifar10", "nb201:cifar100"], "lr-search": [], "summary": ["3_11_111"],
                "diagnose": ["3_11_111"], "analyze": ["3_11_111"], "report": ["quickstart"]}
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = []
    for command, p in sub.choices.items():
        for action in p._actions:
            numeric = getattr(action.type, "__name__", "") in ("int", "float", "parse", "positive_float", "seed_int",
                                                                "parse_duration", "_positive_int")
            if action.option_strings and numeric and action.help != argparse.SUPPRESS:
                out.append((command, required.get(command, []), action.option_strings[0]))
    return out


NUMERIC = _numeric_options()
NUMBERS = st.one_of(
    st.integers().map(str), st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["0", "-1", "1e309", "-0", "nan", "inf", "0x10", "1_000", "", " 3", "٣", "3.0", "1e3", "9" * 5000,
                     "2h", "-5m", "1h30m", "0s", str(2**63), str(2**64 + 1)]),
    st.text(alphabet="0123456789.-+eEinfahms_x ", max_size=10),
)


def check_numeric_option(value: tuple[tuple[str, list[str], str], str]) -> None:
    """Each numeric option parses or is refused by argparse (exit 2, one error line); a value it
    takes for ``train`` builds the job or is a :class:`NasRescaleError` (nothing trains here)."""
    (command, required, option), text = value
    argv = [command, *required, f"{option}={text}"]
    with contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exit_:
            event("refused by argparse")
            assert exit_.code == 2
            lines = err.getvalue().strip().splitlines()
            assert lines[-1].startswith(f"nasrescale {command}: error: argument {option}"), err.getvalue()
            return
    if command == "train" and not args.seeds and not args.protocols:
        try:
            job = train_job(args)
        except NasRescaleError:
            return
        assert len(job.key()) == 16


test_fuzz_numeric_options, test_fuzz_numeric_options_long = fuzz_pair(
    st.tuples(st.sampled_from(NUMERIC), NUMBERS), check_numeric_option)


def test_the_numeric_options_are_found():
    """The option walk finds the options it is meant to (a renamed type would drop them silently)."""
    found = {(c, o) for c, _, o in NUMERIC}
    for pair in [("train", "--epochs"), ("train", "--resolution"), ("train", "--base-lr"), ("train", "--seed"),
                 ("run", "--time-limit"), ("run", "--max-cells"), ("rank", "--bootstrap"), ("lr-search", "--lr-min")]:
        assert pair in found, pair
