"""No code outside a kind's own package tests a run's or a pipeline's kind by its name: every
reader asks the kind's entry (:mod:`nasrescale.kinds`), so adding a kind edits no other module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from nasrescale.pipeline.kind_registry import KINDS

ROOT = Path(__file__).resolve().parents[1]


def comparisons(text: str, name: str) -> list[str]:
    """The lines of ``text`` that compare with the string ``name`` (``==``, ``!=``, ``in (...)``).

    >>> comparisons('if kind == "trend":\\n    x = "trend"\\nif "trend" != k or k in ("a", "trend"):', "trend")
    ['if kind == "trend":', 'if "trend" != k or k in ("a", "trend"):']
    """
    quoted = rf"""["']{re.escape(name)}["']"""
    pattern = re.compile(rf"""(?:[=!]=\s*{quoted})|(?:{quoted}\s*[=!]=)|(?:\bin\s*[(\[{{][^)\]}}]*{quoted})""")
    return [line.strip() for line in text.splitlines()
            if pattern.search(line) and not line.lstrip().startswith("for ")]  # a loop over names tests none


def test_no_module_outside_a_kind_compares_its_name():
    found = []
    for path in sorted([*(ROOT / "nasrescale").rglob("*.py"), *(ROOT / "tools").rglob("*.py")]):
        rel = path.relative_to(ROOT)
        for name in KINDS.names():
            if rel.parts[:3] == ("nasrescale", "kinds", name):
                continue  # a kind's own package may name itself
            found += [f"{rel}: {line}" for line in comparisons(path.read_text(encoding="utf-8"), name)]
    assert not found, "kind names compared outside their package:\n" + "\n".join(found)


def test_the_check_sees_a_comparison():
    assert comparisons("if record.kind != 'landscape':", "landscape")
    assert not comparisons("kind = 'landscape'  # its name", "landscape")
    assert not comparisons("for key in ('landscape', 'reference'):", "landscape")


def test_the_default_kind_is_named_once_and_registered():
    """The kind a pipeline without one runs as is one constant (the record's, which writes and
    reads it); no other code outside the kinds spells it."""
    from nasrescale.store.record import DEFAULT_KIND

    assert DEFAULT_KIND in KINDS.names()
    named = [str(path.relative_to(ROOT)) for path in sorted((ROOT / "nasrescale").rglob("*.py"))
             if not path.is_relative_to(ROOT / "nasrescale" / "kinds")
             and any(isinstance(node, ast.Constant) and node.value == DEFAULT_KIND
                     for node in ast.walk(ast.parse(path.read_text())))]
    assert named == ["nasrescale/store/record.py"], named
