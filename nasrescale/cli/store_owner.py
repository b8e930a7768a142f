"""Whose results a run folder's store holds, for ``report``: a report of a store that another
pipeline wrote says so, as ``run --dry-run`` refuses to add to it.

A store records the identity of the pipeline that made it (its name and everything that
determines its results). ``report`` writes the report of what is stored either way; it adds one
notice where the store's pipeline is not the one the command names: another name than the
folder's (a store copied or moved under another name), or, where PIPELINE is a pipeline file or
a shipped pipeline, another pipeline of that name than the file as it is now (the keys that
differ are named, as ``run`` names them when it refuses the folder).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import NasRescaleError, notice

__all__ = ["store_owner_note", "import_stored_plugins"]


def _stored_identity(run_dir: Path, key: str = "identity") -> dict[str, Any] | None:
    """The identity the run folder's store was made with, or its meta ``key`` (a JSON table; None:
    no store, or none recorded)."""
    from ..store.integrity import unpack_gzipped

    path = unpack_gzipped(run_dir / "store.sqlite")  # as the report's own reading does
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, timeout=30)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None  # the report's reading says what is wrong with the file
    try:
        identity = json.loads(row[0]) if row else None
    except (TypeError, ValueError):
        return None
    return identity if isinstance(identity, dict) else None


def _named_pipeline(argument: str) -> Path | None:
    """The pipeline file that ``argument`` names: a ``.toml`` path, or a shipped pipeline's name."""
    from ..pipeline.files import resolve_pipeline_path

    if Path(argument).suffix != ".toml" and len(Path(argument).parts) != 1:
        return None
    try:
        path = resolve_pipeline_path(argument)
    except NasRescaleError:
        return None
    return path if path.suffix == ".toml" else None


def _differences(spec: Path, run_dir: Path, stored: dict[str, Any]) -> list[str]:
    """The identity keys in which the pipeline file ``spec`` differs from the stored one ([]: the
    same pipeline, or one that grows it, or one that cannot be planned here)."""
    from ..pipeline.identity import analysis_only, identity_grows, strip_keys
    from ..pipeline.runner import plan_pipeline
    from ..pipeline.spec import load_pipeline
    from ..store.binding import diff_keys

    try:
        pipeline = load_pipeline(spec)
        identity = pipeline.identity(plan_pipeline(pipeline, data=False, run_dir=run_dir).archs)
    except (NasRescaleError, ImportError):
        return []  # not plannable here: nothing to compare the store with
    old = strip_keys(stored, analysis_only())
    if old == identity or identity_grows(old, identity):
        return []
    return diff_keys(old, identity)


def store_owner_note(argument: str, run_dir: Path) -> str | None:
    """The notice ``report ARGUMENT`` gives where ``run_dir``'s store belongs to another
    pipeline than the one named (None where it is that pipeline's, or holds no identity)."""
    stored = _stored_identity(run_dir)
    if stored is None:
        return None
    store = run_dir / "store.sqlite"
    owner = (stored.get("pipeline") or {}).get("name") if isinstance(stored.get("pipeline"), dict) else None
    if isinstance(owner, str) and owner != run_dir.name:
        return (f"{store} is the store of pipeline {owner!r}, not of a pipeline named {run_dir.name!r} (the "
                f"folder's name): this report is of {owner!r}'s results")
    spec = _named_pipeline(argument)
    differs = _differences(spec, run_dir, stored) if spec is not None else []
    if not differs:
        return None
    return (f"{store} holds the results of another pipeline {owner or run_dir.name!r} than {spec} as it is now "
            f"(differs in: {', '.join(differs[:8])}): this report is of the stored results, not of that file's "
            f"(`nasrescale run` of it would refuse this folder)")


def import_stored_plugins(run_dir: Path) -> None:
    """Import the plug-ins the run's stored pipeline names (``pipeline.imports``), so that its
    report describes their rules as the run did; one notice for each that cannot be imported here
    (the report then names such a rule without its description)."""
    from ..plugins import load_plugins, resolve_plugins

    table = (_stored_identity(run_dir, "pipeline") or {}).get("pipeline")
    entries = table.get("imports") if isinstance(table, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        try:
            load_plugins(resolve_plugins([entry], None, "pipeline.imports"), "pipeline.imports")
        except NasRescaleError as err:
            notice(f"{err}; the report names the rules it registers without their descriptions")
