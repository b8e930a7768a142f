"""The key tables of the docs list every key the code reads: a setting added to ExecutorSettings
without a row in docs/executors.md fails here."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from nasrescale.executors.base import ExecutorSettings

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_executor_setting_has_a_row_with_its_default() -> None:
    text = (DOCS / "executors.md").read_text()
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z_]+)` \| ([^|]+) \|", text, flags=re.MULTILINE)}
    fields = {f.name: f.default for f in dataclasses.fields(ExecutorSettings)}
    assert sorted(rows) == sorted(fields), "docs/executors.md's [executor] table and ExecutorSettings differ"
    for name, default in fields.items():
        shown = rows[name].strip()
        expected = "unset" if default is None else f"`{default}`"
        assert shown == expected, f"docs/executors.md: `{name}` shows {shown}, the code's default is {expected}"
