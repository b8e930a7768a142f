"""Whether a file is a store this version can read or write, checked before anything reads or writes it.

Every opening of a store passes here (:class:`~nasrescale.store.sqlite_store.Store` for ``run``,
``status`` and ``export``; :func:`~nasrescale.store.read.read_store` for ``rank`` and
``report``). A file that is not one -- truncated, random bytes, another program's SQLite
database, a store of a newer schema version, a ``store.sqlite.gz`` that does not unpack -- is
refused with a :class:`~nasrescale.errors.DataError` naming the file and what to do, after
opening it read-only: the file is left byte-identical, and nothing is added to another
program's database.

The schema version is SQLite's ``PRAGMA user_version``: :data:`SCHEMA_VERSION` in the stores
this version writes, 0 in those written before it had one (the same schema).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "store.sqlite"
>>> _ = path.write_bytes(b"not a database, just text" * 100)
>>> check_store_file(path, ("key",))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
nasrescale.errors.DataError: '...' is not a nasrescale store: file is not a database; move it away (or restore it from a copy), then rerun the pipeline to start it over
"""

from __future__ import annotations

import gzip
import shutil
import sqlite3
import zlib
from pathlib import Path
from typing import Sequence
from urllib.parse import quote

from ..errors import DataError

__all__ = ["SCHEMA_VERSION", "READ_COLUMNS", "check_store_file", "check_connection", "unpack_gzipped"]

#: the store schema this version writes (``PRAGMA user_version``); a larger one is a newer version's
SCHEMA_VERSION = 1
#: the ``jobs`` columns without which no reader can make sense of a store
READ_COLUMNS = ("key", "arch", "protocol", "status")

_FIX = "move it away (or restore it from a copy), then rerun the pipeline to start it over"


def _refuse(path: Path, why: str, fix: str = _FIX) -> DataError:
    """The refusal of ``path``; ``why`` is kept on it as ``.why`` (a ``.gz`` restates it)."""
    err = DataError(f"{str(path)!r} {why}; {fix}")
    err.why, err.fix = why, fix  # type: ignore[attr-defined]
    return err


def check_connection(db: sqlite3.Connection, path: Path, columns: Sequence[str], *, empty: bool = False) -> None:
    """Check the open store ``db`` (of file ``path``): sound pages, a schema version this
    version reads, and a ``jobs`` table with ``columns``. With ``empty``, a database without
    tables passes (the writer creating a store; a reader refuses it).

    Raises:
        DataError: naming ``path`` and what to do.
    """
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        check = db.execute("PRAGMA quick_check").fetchone()[0]
        found = {r[1] for r in db.execute("PRAGMA table_info('jobs')")}
    except sqlite3.DatabaseError as err:
        raise _refuse(path, f"is not a nasrescale store: {err}") from None
    if version > SCHEMA_VERSION:
        raise _refuse(path, f"was written by a newer nasrescale (store schema version {version}; this one reads up to "
                            f"{SCHEMA_VERSION})", "upgrade nasrescale (pip install -U nasrescale) to use it")
    if check != "ok":
        raise _refuse(path, f"is a damaged store ({check})")
    if not tables and empty:
        return
    if not tables:
        raise _refuse(path, "holds no results (an empty database)", "run the pipeline (nasrescale run) to fill it, "
                                                                      "or move it away")
    if "jobs" not in tables:
        names = ", ".join(sorted(tables)[:5])
        raise _refuse(path, f"is another program's SQLite database, not a nasrescale store (tables {names}; no jobs table)")
    missing = [c for c in columns if c not in found]
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise _refuse(path, f"is not a nasrescale store: its jobs table lacks the column(s) {', '.join(missing[:3])}{more}")


def check_store_file(path: Path, columns: Sequence[str] = READ_COLUMNS, *, empty: bool = False) -> None:
    """Open the existing file ``path`` read-only and :func:`check_connection` it."""
    try:
        db = sqlite3.connect(f"file:{quote(str(Path(path).resolve()))}?mode=ro", uri=True, timeout=30)
    except sqlite3.Error as err:
        raise _refuse(path, f"is not a nasrescale store: {err}") from None
    try:
        check_connection(db, path, columns, empty=empty)
    finally:
        db.close()


def unpack_gzipped(path: Path, packed: Path | None = None) -> Path:
    """``path``, first decompressed from ``packed`` (default ``<path>.gz`` beside it, as
    ``gunzip -k`` would) when only the gzipped copy exists: committed results ship their stores as
    ``store.sqlite.gz``, and every reader and a resumed run then see the store itself. The gzipped
    file is left as it is; one that does not unpack to a store leaves nothing at ``path``.

    Raises:
        DataError: ``path`` is a folder (every reader and writer of a store passes here), or its
            ``.gz`` does not unpack to a readable store.
    """
    if path.is_dir():
        raise DataError(f"{str(path)!r} is a folder, not a results store (a SQLite file); move it away, "
                        "then rerun, or point at the run folder that holds the store file")
    packed = packed or path.with_name(path.name + ".gz")
    if not path.exists() and packed.is_file():
        tmp = path.with_name(path.name + ".unpacking")
        try:
            with gzip.open(packed, "rb") as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst)
            check_store_file(tmp)
        except (OSError, EOFError, zlib.error, DataError) as err:
            tmp.unlink(missing_ok=True)
            why = getattr(err, "why", None) or f"is not a readable gzip file: {err or type(err).__name__}"
            fix = getattr(err, "fix", _FIX)
            raise DataError(f"{str(packed)!r} does not unpack to a store: it {why}; " + (fix if fix != _FIX else (
                "restore it from a copy (git checkout -- FILE for a committed one) or move it away"))) from None
        tmp.replace(path)  # atomic: a reader never sees half a store
    return path
