"""Paths on the command line: checked where they are parsed, and OS errors told in one line.

The ``argparse`` types :func:`existing_folder`, :func:`writable_folder` and :func:`output_file`
check an option's path when the command line is parsed (it exists, it is a folder, it can be
written), so a wrong path ends the command with exit code 2 and a message naming it, before
anything runs. :func:`require_writable` does the same for a folder the command derives (a run
folder), and :func:`os_error_line` words an :class:`OSError` that still reaches the command line.
"""

from __future__ import annotations

import argparse
import errno
import tempfile
from pathlib import Path

from ..errors import ConfigError

__all__ = ["existing_folder", "writable_folder", "output_file", "run_name", "require_writable", "os_error_line"]

#: what to do about an OS error, by its errno
_FIXES = {
    errno.ENOENT: "check the path, or create the missing folder",
    errno.ENOTDIR: "a part of the path is a file, not a folder: choose another path",
    errno.EISDIR: "it is a folder where a file is expected: move it away, or give a file's path",
    errno.EACCES: "choose a place you may write to, or change the permissions",
    errno.EPERM: "choose a place you may write to, or change the permissions",
    errno.EROFS: "the file system is read-only: choose a folder on a writable one",
    errno.ENOSPC: "the disk is full: free some space, or choose another folder",
}


def existing_folder(text: str) -> str:
    """``argparse`` type: a folder that exists (results a command reads)."""
    path = Path(text).expanduser()
    if not path.is_dir():
        what = "a file, not a folder" if path.exists() else "no such folder"
        raise argparse.ArgumentTypeError(f"{text!r}: {what}; pass the folder that holds the runs "
                                         "(<folder>/<pipeline>/store.sqlite)")
    return text


def writable_folder(text: str) -> str:
    """``argparse`` type: a folder this process can write (created if missing, so the nearest
    folder that exists on its way must be writable)."""
    path = Path(text).expanduser()
    if path.is_file():
        raise argparse.ArgumentTypeError(f"{text!r} is a file, not a folder; pass a folder (created if missing)")
    problem = _unwritable(path)
    if problem:
        raise argparse.ArgumentTypeError(f"{text!r}: {problem}")
    return text


def output_file(text: str) -> str:
    """``argparse`` type: a file to write -- not a folder, not a results store (writing over one
    would lose every result in it), in a folder that exists and can be written.

    >>> import sqlite3, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> sqlite3.connect(f"{folder}/runs.db").execute("CREATE TABLE t (x)").connection.close()
    >>> output_file(f"{folder}/runs.db")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: ... is a SQLite database (a results store?); writing it would lose what it holds: give another file
    """
    path = Path(text).expanduser()
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file's path, e.g. {text.rstrip('/')}/out")
    if _is_store(path):
        raise argparse.ArgumentTypeError(f"{text!r} is a SQLite database (a results store?); writing it would lose "
                                         "what it holds: give another file")
    problem = _unwritable(path.parent)
    if problem is None and not path.parent.is_dir():
        problem = f"folder {str(path.parent)!r} does not exist; create it first, or choose a folder that exists"
    if problem:
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: {problem}")
    return text


def run_name(text: str) -> str:
    """``argparse`` type: a run's name, the folder under ``--results`` it lives in (the rule of
    ``pipeline.name``: letters, digits, ``_``, ``-`` or ``.``, not starting with ``.``).

    >>> run_name("lr-search-2")
    'lr-search-2'
    >>> run_name("/tmp/elsewhere")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: '/tmp/elsewhere' must be letters, digits, _, - or . (it names a folder under --results)
    """
    if not text or text.startswith(".") or not all(c.isalnum() or c in "_-." for c in text):
        raise argparse.ArgumentTypeError(f"{text!r} must be letters, digits, _, - or . (it names a folder under --results)")
    return text


def require_writable(folder: Path, what: str) -> None:
    """Raise :class:`ConfigError` naming ``folder`` (described as ``what``) if it cannot be written."""
    problem = _unwritable(folder)
    if problem:
        raise ConfigError(f"{what} {str(folder)!r}: {problem}")


def os_error_line(err: OSError) -> str:
    """An OS error as one line: the path, the reason, and what to do.

    >>> os_error_line(FileNotFoundError(2, "No such file or directory", "/x/y.csv"))
    "'/x/y.csv': No such file or directory; check the path, or create the missing folder"
    """
    fix = _FIXES.get(err.errno or 0, "check the path and its permissions")
    path = err.filename2 if err.filename2 is not None else err.filename  # a rename's target, else the path
    return f"{str(path)!r}: {err.strerror or err}; {fix}"


def _is_store(path: Path) -> bool:
    """Whether ``path`` is a results store or one of its parts: a SQLite file, its WAL or shared
    memory, or a packed ``store.sqlite.gz``."""
    if path.name.startswith("store.sqlite"):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _unwritable(folder: Path) -> str | None:
    """Why files cannot be created in ``folder`` (or, if it is missing, in the nearest folder on
    its way that exists, where it would be created); ``None`` if they can."""
    base = folder.absolute()
    while not base.exists():  # the root exists, so this ends
        base = base.parent
    if not base.is_dir():
        return f"{str(base)!r} is a file, not a folder; choose another path"
    try:
        with tempfile.TemporaryFile(dir=base):  # the one check that holds for every user, root included
            pass
    except OSError as err:
        specific = err.errno in (errno.EROFS, errno.ENOSPC)
        fix = _FIXES[err.errno] if specific else "choose a folder you may write to"
        return f"cannot create files in {str(base)!r} ({err.strerror or err}); {fix}"
    return None
