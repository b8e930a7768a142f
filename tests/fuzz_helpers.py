"""Shared pieces of the fuzz tests (``tests/fuzz/``): how a command must end, a TOML writer for
generated documents, value and edit strategies, and the two sizes of a fuzz run.

Every fuzz target is one ``check`` function run twice: ``test_fuzz_<target>`` in the suite
(:data:`SUITE` examples) and ``test_fuzz_<target>_long`` (:data:`LONG` examples), marked ``slow``
and ``long_fuzz``, which runs only when ``-m`` selects ``slow`` (``pytest -m slow -k fuzz``;
``tests/conftest.py`` leaves it out otherwise).

>>> print(toml_text({"pipeline": {"name": "x", "seeds": [0, 1]}, "ops": [{"name": "a"}]}))
[pipeline]
name = "x"
seeds = [0, 1]
<BLANKLINE>
[[ops]]
name = "a"
<BLANKLINE>
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import pkgutil
from typing import Any, Callable, Mapping, Sequence

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import nasrescale.kinds
import nasrescale.report
from nasrescale.cli.main import main
from nasrescale.store.reproduce import toml_literal

# The CLI imports its report code (matplotlib, pandas) lazily, on a command's first use. The fuzz
# targets run each example under a hang alarm; a first import cut short by that alarm on a slow or
# busy machine leaves matplotlib half-imported and every later example failing for that reason
# alone. Importing it here (every kind's package and the report's), before any alarm, keeps the
# alarm on the command's own work.
for _package in (nasrescale.kinds, nasrescale.report):
    for _info in pkgutil.walk_packages(_package.__path__, f"{_package.__name__}."):
        importlib.import_module(_info.name)

#: examples per target in the suite, and in the long (``-m slow``) run (``NASRESCALE_FUZZ_EXAMPLES`` to change it)
SUITE, LONG = 120, int(os.environ.get("NASRESCALE_FUZZ_EXAMPLES", "5000"))


def fuzz_pair(strategy: st.SearchStrategy, check: Callable[[Any], None], suite: int = SUITE) -> tuple[Any, Any]:
    """``(suite test, long test)`` running ``check(value)`` over ``strategy``; the suite's is
    derandomized (the same examples every run), the long one is marked ``slow`` and ``long_fuzz``."""
    def build(examples: int) -> Any:
        @settings(max_examples=examples, deadline=None, derandomize=examples == suite, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
        @given(strategy)
        def test(value: Any) -> None:
            check(value)
        test.__doc__ = check.__doc__
        return test

    return build(suite), pytest.mark.long_fuzz(pytest.mark.slow(build(LONG)))


def settle(*argv: str) -> tuple[int, str, str]:
    """Run ``nasrescale ARGV`` in-process and check how it ended: exit 0, or exit 2 with the
    error on one line (``nasrescale CMD: error: ...``; argparse's usage lines may precede it).
    Any other exception fails the test with its traceback. Returns ``(code, stdout, stderr)``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exit_:
            code = exit_.code
    text = err.getvalue()
    assert code in (0, 2), (argv, code, text)
    assert "Traceback" not in text, (argv, text)
    if code == 2:
        lines = text.strip().splitlines()
        errors = [ln for ln in lines if ": error: " in ln]
        assert len(errors) == 1 and lines[-1] == errors[0], (argv, text)
        assert errors[0].startswith(f"nasrescale {argv[0]}: error: ") or errors[0].startswith("nasrescale: error: "), text
        usage = lines[:-1]
        assert all(ln.startswith(("usage:", " ")) for ln in usage), (argv, text)  # only argparse's usage above it
    return code, out.getvalue(), text


def toml_text(doc: Mapping[str, Any]) -> str:
    """A TOML document of ``doc``: scalars first, then a ``[table]`` per dict and a ``[[table]]``
    per list of dicts (deeper values inline, :func:`~nasrescale.store.reproduce.toml_literal`)."""
    lines = [f"{_key(k)} = {toml_literal(v)}" for k, v in doc.items() if not _is_table(v) and not _is_tables(v)]
    for key, value in doc.items():
        if _is_table(value):
            lines += ["", f"[{_key(key)}]"] + [f"{_key(k)} = {toml_literal(v)}" for k, v in value.items()]
        elif _is_tables(value):
            for table in value:
                lines += ["", f"[[{_key(key)}]]"] + [f"{_key(k)} = {toml_literal(v)}" for k, v in table.items()]
    return "\n".join(lines).lstrip("\n") + "\n"


def _is_table(value: Any) -> bool:
    return isinstance(value, dict)


def _is_tables(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _key(key: str) -> str:
    return key if key and all(c.isalnum() or c in "_-" for c in key) else toml_literal(str(key))


#: TOML values a fuzzed key may take: edge numbers, words of the project's vocabularies, lists, tables
VALUES = st.one_of(
    st.integers(-3, 3), st.integers(), st.sampled_from([2**31, 2**63 - 1, -2**63, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1e-300, 1e300, 0.5]),
    st.booleans(), st.text(max_size=12),
    st.sampled_from(["none", "nb201", "rescaled", "cifar10-subset", "local", "uniform", "list", "file", "cpu", "auto",
                     "search", "zero", "identity", "conv_relu", "relu_conv_bn", "3_11_111", "edges", "digits",
                     "nb201:cifar10", "fp32", "cosine", "in_degree", "path_depth", ""]),
    st.lists(st.integers(-2, 5), max_size=3), st.lists(st.text(max_size=6), max_size=2),
    st.dictionaries(st.sampled_from(["name", "kind", "x"]), st.integers(0, 3), max_size=2),
)


def mutate_doc(doc: dict[str, Any], edits: Sequence[tuple[int, int, str, Any]]) -> dict[str, Any]:
    """A copy of the two-level ``doc`` (tables of keys; a list of tables counts as tables) with
    ``edits`` applied: each ``(table index, key index, action, value)`` sets, deletes or adds a key
    (``action``: ``set``, ``del``, ``add:<name>``), sets one to a value of its own type (``like``)
    or, on the table itself, replaces it (``table``)."""
    out = {k: ([dict(t) for t in v] if _is_tables(v) else dict(v) if _is_table(v) else v) for k, v in doc.items()}
    for table_i, key_i, action, value in edits:
        names = list(out)
        if not names:
            out["x"] = value
            continue
        name = names[table_i % len(names)]
        node = out[name]
        tables = node if _is_tables(node) else [node] if _is_table(node) else []
        if action == "table" or not tables:
            out[name] = value
            continue
        table = tables[key_i % len(tables)]
        keys = list(table)
        if action.startswith("add:"):
            table[action[4:]] = value
        elif keys and action == "del":
            del table[keys[key_i % len(keys)]]
        elif keys and action == "like":
            key = keys[key_i % len(keys)]
            table[key] = _like(table[key], value)
        elif keys:
            table[keys[key_i % len(keys)]] = value
    return out


def _like(old: Any, value: Any) -> Any:
    """``value`` made into a value of ``old``'s type (a number for a number, a word for a word)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(old, bool):
        return bool(value)
    if isinstance(old, int):
        return int(value) if number and abs(value) < 2**70 and value == value else len(str(value)) - 1
    if isinstance(old, float):
        return float(value) if number else old * 2
    if isinstance(old, list):
        return [_like(old[0], value)] if old else [value]
    return value if isinstance(value, str) else str(value)


EDITS = st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20),
                           st.sampled_from(["like", "like", "like", "like", "set", "set", "del", "table", "add:name", "add:kind", "add:extra",
                                            "add:seed", "add:count"]), VALUES), min_size=1, max_size=4)


def text_edits(alphabet: str) -> st.SearchStrategy:
    """Character edits of a text: ``(position, cut, insertion)`` triples."""
    return st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 3), st.text(alphabet=alphabet, max_size=3)),
                    max_size=4)


def edit_text(text: str, edits: Sequence[tuple[int, int, str]]) -> str:
    """``text`` with each edit applied: at ``position`` (modulo the length) drop ``cut`` characters
    and put ``insertion`` there."""
    for pos, cut, insertion in edits:
        at = pos % (len(text) + 1)
        text = text[:at] + insertion + text[at + cut:]
    return text
