"""Paths the user passes: a file where a folder belongs, a folder that cannot be written, an
output under /proc -- each one line and exit code 2, before anything runs; reading commands
work in a read-only folder."""

from __future__ import annotations

import errno
import tempfile
from pathlib import Path
from typing import Callable, Iterator

import pytest

from nasrescale.cli import path_args
from nasrescale.cli.main import main

from pipeline_helpers import TINY, private_cache  # noqa: F401  (fixtures, used by name)
from rank_store_builder import build_store


def cli(capsys, *argv: str) -> tuple[int, str]:
    """Exit code and stderr of a command (argparse exits where an option's value is refused)."""
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = exit_.code
    return code, capsys.readouterr().err


def one_line_error(err: str, command: str) -> str:
    """The error line (argparse prints the usage above it); no traceback."""
    assert "Traceback" not in err, err
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"nasrescale {command}: error: "), err
    return line


def _writes(folder: Path) -> bool:
    try:
        (folder / "probe").write_text("")
    except OSError:
        return False
    (folder / "probe").unlink()
    return True


@pytest.fixture
def read_only(monkeypatch) -> Iterator[Callable[[Path], Path]]:
    """Makes a folder read-only: ``chmod 0o555``, and where that does not stop writes (root),
    the write check of :mod:`nasrescale.cli.path_args` meets a read-only file system there instead."""
    made: list[Path] = []

    def make(folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        for f in [*sorted(p for p in folder.rglob("*") if p.is_dir()), folder]:
            f.chmod(0o555)
            made.append(f)
        if _writes(folder):
            real = tempfile.TemporaryFile

            def refusing(*args, dir=None, **kwargs):  # noqa: A002 - tempfile's own keyword
                if dir is not None and Path(dir).absolute().is_relative_to(folder.absolute()):
                    raise OSError(errno.EROFS, "Read-only file system", str(dir))
                return real(*args, dir=dir, **kwargs)

            monkeypatch.setattr(path_args.tempfile, "TemporaryFile", refusing)
        return folder

    yield make
    for f in made:
        f.chmod(0o755)


@pytest.fixture
def tiny(tmp_path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


def test_run_with_a_file_as_results_folder(capsys, tiny, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("")
    code, err = cli(capsys, "run", str(tiny), "--results", str(afile), "--quiet")
    assert code == 2
    assert f"'{afile}' is a file, not a folder" in one_line_error(err, "run")
    code, err = cli(capsys, "run", str(tiny), "--results", str(afile / "sub"), "--quiet")
    assert code == 2
    assert f"'{afile}' is a file, not a folder" in one_line_error(err, "run")


def test_run_in_a_read_only_results_folder(capsys, tiny, tmp_path, read_only):
    results = read_only(tmp_path / "ro")
    code, err = cli(capsys, "run", str(tiny), "--results", str(results), "--quiet")
    assert code == 2
    assert f"cannot create files in '{results}'" in one_line_error(err, "run")
    assert list(results.iterdir()) == []


def test_report_in_a_read_only_results_folder_and_reading_there(capsys, tmp_path, read_only):
    build_store(tmp_path / "ro" / "syn", n_archs=8)
    results = read_only(tmp_path / "ro")
    before = sorted(p.name for p in (results / "syn").iterdir())
    code, err = cli(capsys, "report", "syn", "--results", str(results), "--bootstrap", "10")
    assert code == 2
    assert f"cannot create files in '{results}" in one_line_error(err, "report")
    assert sorted(p.name for p in (results / "syn").iterdir()) == before  # no report, no PNG
    code, err = cli(capsys, "status", "syn", "--results", str(results))
    assert code == 0, err


def test_export_to_a_path_that_cannot_be_created(capsys, tmp_path):
    build_store(tmp_path / "res" / "syn", n_archs=8)
    (tmp_path / "afile").write_text("")
    targets = [str(tmp_path / "afile" / "y.csv")] + (["/proc/x/y.csv"] if Path("/proc/self").is_dir() else [])
    for target in targets:
        code, err = cli(capsys, "export", "syn", "--results", str(tmp_path / "res"), "--out", target)
        assert code == 2
        assert f"cannot write '{target}'" in one_line_error(err, "export")


def test_an_output_that_is_a_folder(capsys, tmp_path):
    code, err = cli(capsys, "analyze", "--all", "--out", str(tmp_path))
    assert code == 2
    assert f"'{tmp_path}' is a folder" in one_line_error(err, "analyze")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_the_write_check_tries_a_write():
    # /proc/self is a folder nobody can create files in, root included: only a real write tells
    assert "cannot create files in '/proc/self'" in path_args._unwritable(Path("/proc/self"))
    assert path_args._unwritable(Path(tempfile.gettempdir()) / "missing" / "deeper") is None


def test_an_os_error_reaching_the_command_line_is_one_line(capsys, tmp_path):
    run, _ = build_store(tmp_path / "res" / "syn", n_archs=8)
    (run.parent / "report.md").mkdir()  # the report cannot replace a folder
    code, err = cli(capsys, "report", "syn", "--results", str(tmp_path / "res"), "--bootstrap", "10")
    assert code == 2
    line = one_line_error(err, "report")
    assert f"'{run.parent / 'report.md'}': Is a directory" in line
    assert "move it away" in line
