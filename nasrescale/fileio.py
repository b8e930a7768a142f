"""Crash-safe file writes: a killed process leaves the old file or the new one, never half.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> atomic_write_text(d / "a.txt", "hello")
>>> (d / "a.txt").read_text(), sorted(p.name for p in d.iterdir())
('hello', ['a.txt'])
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import NasRescaleError

__all__ = ["atomic_writer", "atomic_write_text", "save_figure", "shipped_toml_dir", "read_utf8"]


def read_utf8(path: str | Path) -> str:
    """The text of ``path``, decoded as UTF-8.

    Raises:
        OSError: it cannot be read, or is not UTF-8 text (its ``strerror`` says where, and how
            to fix it), so a caller's one ``except OSError`` names either problem.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "latin1.toml"
    >>> _ = path.write_bytes("name = 'r\xe9sum\xe9'".encode("latin-1"))
    >>> try:
    ...     read_utf8(path)
    ... except OSError as err:
    ...     print(err.strerror)
    not UTF-8 text (byte 0xe9 at offset 9); save the file as UTF-8
    """
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise OSError(errno.EILSEQ, f"not UTF-8 text (byte {data[err.start]:#04x} at offset {err.start}); "
                                    "save the file as UTF-8", str(path)) from None


def _umask() -> int:
    """The process's file-creation mask (Linux reports it in ``/proc``; elsewhere it is read by
    setting it and putting it back)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class atomic_writer:
    """Context manager: write a file through a temporary sibling, fsync, then rename over the
    target, so a killed run leaves the old file or the new one, never half of one. The file gets
    the permissions any new file gets under the umask (``0644`` under ``022``), not the private
    ``0600`` of the temporary file."""

    def __init__(self, path: str | Path, mode: str = "w", newline: str | None = None) -> None:
        self.path = Path(path)
        self.mode = mode
        self.newline = newline

    def __enter__(self):  # noqa: ANN204 - returns a file object
        parent = self.path.parent
        if not parent.is_dir():
            raise NasRescaleError(f"cannot write {str(self.path)!r}: folder {str(parent)!r} does not exist")
        fd, self.tmp = tempfile.mkstemp(dir=parent, prefix=f".{self.path.name}.", suffix=".tmp")
        kwargs = {"newline": self.newline, "encoding": "utf-8"} if "b" not in self.mode else {}
        self.file = os.fdopen(fd, self.mode, **kwargs)
        return self.file

    def __exit__(self, exc_type, exc, tb) -> None:  # noqa: ANN001
        try:
            if exc_type is None:
                self.file.flush()
                os.fsync(self.file.fileno())
            self.file.close()
            if exc_type is None:
                os.chmod(self.tmp, 0o666 & ~_umask())
                os.replace(self.tmp, self.path)
        finally:
            if os.path.exists(self.tmp):
                os.unlink(self.tmp)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :class:`atomic_writer`)."""
    with atomic_writer(path) as f:
        f.write(text)


def save_figure(fig: Any, path: str | Path, **savefig: Any) -> Path:
    """``fig.savefig(path, **savefig)`` through :class:`atomic_writer` (the format from the
    suffix): a run killed while a figure is written leaves the last figure, not a broken PNG.
    Returns ``path``."""
    path = Path(path)
    with atomic_writer(path, "wb") as f:
        fig.savefig(f, format=path.suffix.lstrip(".").lower() or "png", **savefig)
    return path


def shipped_toml_dir(name: str) -> Path | None:
    """The folder of TOML files shipped under ``name`` (``cells``, ``protocols``): inside the
    installed package (a wheel maps the top-level folder there) or, in a source checkout and
    editable installs, the top-level folder itself. ``None`` if neither holds any.
    """
    here = Path(__file__).resolve().parent
    for candidate in (here / name, here.parent / name):
        if candidate.is_dir() and any(candidate.glob("*.toml")):
            return candidate
    return None
