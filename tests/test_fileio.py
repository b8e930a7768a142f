"""Atomic writes leave files with the permissions the umask gives any new file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from nasrescale.fileio import atomic_write_text, atomic_writer


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_an_atomic_write_honours_the_umask(tmp_path: Path, mask: int, mode: int) -> None:
    old = os.umask(mask)
    try:
        atomic_write_text(tmp_path / "a.md", "text")
        with atomic_writer(tmp_path / "b.bin", "wb") as f:
            f.write(b"\x00")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.md").stat().st_mode) == mode
    assert stat.S_IMODE((tmp_path / "b.bin").stat().st_mode) == mode


def test_a_rewrite_replaces_a_private_file_with_a_readable_one(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    target.write_text("old")
    target.chmod(0o600)
    old = os.umask(0o022)
    try:
        atomic_write_text(target, "new")
    finally:
        os.umask(old)
    assert (target.read_text(), stat.S_IMODE(target.stat().st_mode)) == ("new", 0o644)
