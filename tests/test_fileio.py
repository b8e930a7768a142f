"""Atomic writes leave files with the permissions the umask gives any new file, and a failed
write (a figure too) leaves the old file whole."""

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


@pytest.mark.parametrize("argv", [
    ["run", "{path}", "--dry-run", "--results", "{tmp}/res"],
    ["status", "{path}", "--results", "{tmp}"],
    ["cells", "--family-file", "{path}"],
])
def test_a_file_that_is_not_utf8_exits_2_naming_the_byte(capsys, tmp_path: Path, argv: list[str]) -> None:
    """A pipeline or family file saved in Latin-1 (an accent in a description) is named, not a traceback."""
    from nasrescale.cli.main import main

    path = tmp_path / "latin1.toml"
    path.write_bytes('[pipeline]\nname = "x"\ndescription = "r\u00e9sum\u00e9"\n'.encode("latin-1"))
    assert main([a.format(path=path, tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "not UTF-8 text (byte 0xe9 at offset" in err and "save the file as UTF-8" in err and "Traceback" not in err
    assert not (tmp_path / "res").exists()


def test_a_figure_whose_drawing_fails_leaves_the_last_figure_whole(tmp_path: Path) -> None:
    """A report re-drawn while a figure fails to render (or the run is killed) keeps the PNG it
    had, byte for byte, and no temporary file beside it."""
    from matplotlib.figure import Figure

    from nasrescale.fileio import save_figure

    fig = Figure(figsize=(2, 2))
    fig.add_subplot().plot([0, 1], [1, 0])
    path = save_figure(fig, tmp_path / "curve.png", dpi=50)
    before = path.read_bytes()
    assert before.startswith(b"\x89PNG")

    class Broken(Figure):
        def savefig(self, fname, **kwargs):  # noqa: ANN001, ANN003, ANN201 - dies half-way through the file
            if hasattr(fname, "write"):
                fname.write(before[:100])
            else:
                Path(fname).write_bytes(before[:100])
            raise RuntimeError("drawing failed")

    with pytest.raises(RuntimeError, match="drawing failed"):
        save_figure(Broken(figsize=(2, 2)), path, dpi=50)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["curve.png"]
