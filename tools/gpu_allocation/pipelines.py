"""What the tool reads of a pipeline file without loading it: its ``[pipeline]`` table and run name."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from . import ROOT

__all__ = ["pipeline_table", "run_name"]


def pipeline_table(pipeline: Path) -> dict[str, Any]:
    """The ``[pipeline]`` table of a pipeline file (relative to the checkout; empty where it cannot be read)."""
    try:
        table = tomllib.loads((ROOT / pipeline).read_text())["pipeline"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return {}
    return table if isinstance(table, dict) else {}


def run_name(pipeline: Path) -> str:
    """The run (results/ folder) a pipeline file names; its file stem where it cannot be read."""
    return str(pipeline_table(pipeline).get("name") or Path(pipeline).stem)
