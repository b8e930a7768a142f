"""Fuzzing the input files: cell-family TOML files, pipeline TOML files with ``--set`` values,
and protocol TOML files. Each generated input ends in exit 0, or exit 2 with one line naming
what is wrong, never a traceback; a refused pipeline is refused by the real ``run`` too, and the
existing store beside it stays byte-identical. ``pytest -k fuzz`` runs these; the ``_long``
variants only with ``-m slow``."""

from __future__ import annotations

import atexit
import shutil
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from hypothesis import event, strategies as st

from nasrescale.config import parse_toml
from nasrescale.errors import NasRescaleError
from nasrescale.protocol import builtin_protocols_dir, load_protocol
from nasrescale.space.family_file import parse_family
from nasrescale.space.family_loader import builtin_cells_dir
from nasrescale.store.job_status import Status
from nasrescale.store.reproduce import toml_literal
from nasrescale.store.sqlite_store import Store

from fuzz_helpers import EDITS, VALUES, edit_text, fuzz_pair, mutate_doc, settle, text_edits, toml_text
from pipeline_helpers import tiny_pipeline

WORK = Path(tempfile.mkdtemp(prefix="nasrescale-fuzz-"))
atexit.register(shutil.rmtree, WORK, ignore_errors=True)
RESULTS = WORK / "res"
#: seconds one example may take before it counts as a hang
HANG_S = 30


@contextmanager
def no_hang(what: Any) -> Iterator[None]:
    """Fail (naming ``what``) where the body runs longer than :data:`HANG_S`."""
    def alarm(signum: int, frame: Any) -> None:
        raise AssertionError(f"no answer after {HANG_S} s: {what!r}")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(HANG_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _existing_store() -> None:
    """A store of pipeline ``tiny`` with one finished job: what a refused run must leave alone."""
    store = Store(RESULTS / "tiny" / "store.sqlite")
    store.bind_pipeline("tiny", {"pipeline": {"name": "tiny"}}, {"pipeline": {"name": "tiny"}})
    store.add_jobs([{"key": "k0", "arch": "3_11_111", "protocol": "default", "seed": 0, "job_json": "{}"}])
    store.finish("k0", Status.DONE, {"test_accuracy": 50.0})
    store.close()


def _snapshot() -> dict[str, bytes]:
    """Every stored file of the results folder: the empty ``.driver.lock`` a run takes before it reads
    anything (and leaves, as file locks do) holds no result, so it is not one."""
    return {str(p.relative_to(RESULTS)): p.read_bytes() for p in sorted(RESULTS.rglob("*"))
            if p.is_file() and p.name != ".driver.lock"}


_existing_store()
TINY = parse_toml(tiny_pipeline("tiny"), "tiny.toml")
KEYS = sorted({f"{t}.{k}" for t, table in TINY.items() if isinstance(table, dict) for k in table} | {
    "budget.resolution", "archs.count", "archs.seed", "archs.select", "archs.include", "pipeline.reference",
    "pipeline.kind", "pipeline.family", "pipeline.family_file", "executor.kind", "executor.fuse", "lr_search.lr_min",
    "lr_search.points", "lr_search.seeds", "protocols.rescaled.base_lr", "protocols.rescaled.epochs",
    "protocols.new.protocol", "validation.kernels", "budgets.low.epochs", "data.name", "data.test_split", "x.y"})
SETS = st.lists(st.tuples(st.one_of(st.sampled_from(KEYS), st.text(max_size=10)),
                          st.one_of(VALUES.map(toml_literal), st.text(max_size=10))).map(lambda kv: f"{kv[0]}={kv[1]}"),
                max_size=3)


def _run_refused_or_planned(path: Path, sets: list[str]) -> int:
    """``run --dry-run`` of the pipeline file; where it is refused, the real ``run`` is too, and
    the results folder is left byte-identical."""
    flags = [w for s in sets for w in ("--set", s)]
    before = _snapshot()
    with no_hang((path.read_text(), sets)):
        code, _, err = settle("run", str(path), "--results", str(RESULTS), "--dry-run", *flags)
        event(f"run --dry-run: exit {code}")
        if code == 2:
            again, _, err_again = settle("run", str(path), "--results", str(RESULTS), "--quiet", *flags)
            assert again == 2, err_again
    assert _snapshot() == before
    return code


def check_pipeline(value: tuple[list, list[str], list]) -> None:
    """A pipeline file (the tiny pipeline with keys set, dropped and added, sometimes with its
    text cut) and ``--set`` values: planned (exit 0) or refused (exit 2), the store untouched."""
    edits, sets, cuts = value
    path = WORK / "pipeline.toml"
    path.write_text(edit_text(toml_text(mutate_doc(TINY, edits)), cuts))
    _run_refused_or_planned(path, sets)


PIPELINES = st.tuples(st.one_of(st.just([]), EDITS), st.one_of(st.just([]), SETS), st.one_of(st.just([]), text_edits("[]=\"'.\n#x1")))
test_fuzz_pipeline_files_and_set_values, test_fuzz_pipeline_files_and_set_values_long = fuzz_pair(
    PIPELINES, check_pipeline)

PROTOCOL = parse_toml((builtin_protocols_dir() / "rescaled.toml").read_text(), "rescaled.toml")


def check_protocol(value: tuple[list, list]) -> None:
    """A protocol file (the shipped ``rescaled`` with keys set, dropped and added, sometimes cut)
    loads or is a :class:`NasRescaleError`; a pipeline using it is planned or refused."""
    edits, cuts = value
    path = WORK / "protocol.toml"
    path.write_text(edit_text(toml_text(mutate_doc(PROTOCOL, edits)), cuts))
    try:
        load_protocol(path, {"lr": 0.1})
    except NasRescaleError:
        pass
    pipeline = WORK / "with_protocol.toml"
    pipeline.write_text(tiny_pipeline("tiny").replace('protocol = "rescaled"', f'protocol = {toml_literal(str(path))}'))
    _run_refused_or_planned(pipeline, [])


test_fuzz_protocol_files, test_fuzz_protocol_files_long = fuzz_pair(
    st.tuples(st.one_of(st.just([]), EDITS), st.one_of(st.just([]), text_edits("[]=\"'.\n#x1"))), check_protocol)

FAMILY_TEXTS = [p.read_text() for p in sorted(builtin_cells_dir().glob("*.toml"))]


def check_family(value: tuple[int, list, list]) -> None:
    """A family file (a shipped one with keys set, dropped and added, sometimes cut) parses or
    is a :class:`NasRescaleError`; ``cells`` and ``analyze`` with it exit 0 or 2."""
    index, edits, cuts = value
    doc = parse_toml(FAMILY_TEXTS[index % len(FAMILY_TEXTS)], "family.toml")
    path = WORK / "family.toml"
    path.write_text(edit_text(toml_text(mutate_doc(doc, edits)), cuts))
    try:
        family = parse_family(path.read_text(), source=str(path))
    except NasRescaleError:
        family = None
    event("family parses" if family is not None else "family refused")
    with no_hang(path.read_text()):
        settle("cells", "--family-file", str(path))
        if family is not None:
            settle("analyze", "--family-file", str(path), "--family", family.name, "--", family.base)


test_fuzz_family_files, test_fuzz_family_files_long = fuzz_pair(
    st.tuples(st.integers(0, 10), st.one_of(st.just([]), EDITS), st.one_of(st.just([]), text_edits("[]=\"'.\n#x1"))),
    check_family)
