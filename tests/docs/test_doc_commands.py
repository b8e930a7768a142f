"""The documentation's commands and examples run, its pages are reachable, and it cites only files
in the repository.

Every shell or Python block marked with a ``<!-- runnable -->`` line just before its
```` ```bash ```` or ```` ```python ```` fence, in README.md or docs/*.md, runs here: in a fresh copy
of the repository's data folders (cells, pipelines, protocols, examples, results, ...), with
``nasrescale`` on PATH and importable from this checkout, offline, on one thread, with data and
cache folders inside the temp directory. A shell block runs in bash (``-euo pipefail``), a Python
block as a script; a block that fails (a non-zero exit, an exception) fails its own test case,
named ``FILE:LINE`` after the marker.
Every other shell or Python block carries ``<!-- not runnable: REASON -->`` (README's two commands
keep their own markers, which .ci/run reads).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- runnable -->"
#: fence -> the language its block runs in
FENCES = {"```bash": "bash", "```sh": "bash", "```python": "python", "```py": "python"}
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_IGNORED_NAMES = shutil.ignore_patterns(".git", ".data", "nasrescale", "tests", "__pycache__", "checkpoints",
                                        "*.egg-info", ".hypothesis")


def COPY_IGNORE(folder: str, names: list[str]) -> set[str]:
    """What each block's working folder leaves out: the package itself (imported from ROOT), caches,
    data, and any virtual environment inside the checkout (a folder holding ``pyvenv.cfg``, several GB)."""
    venvs = {n for n in names if (Path(folder) / n / "pyvenv.cfg").is_file()}
    # the user's own runs (results/quickstart after `nasrescale run quickstart`) are not the docs'
    own_runs = set(names) - _committed_runs() if Path(folder) == ROOT / "results" and _committed_runs() else set()
    return set(_IGNORED_NAMES(folder, names)) | venvs | own_runs


def _committed_runs() -> set[str]:
    """The names directly under results/ that git tracks (empty where git cannot say)."""
    try:
        listed = subprocess.run(["git", "ls-files", "results"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return set()
    return {Path(name).parts[1] for name in listed if len(Path(name).parts) > 1}
BLOCK_TIMEOUT_S = 600
#: the name of the design notes that never were in the repository, split so this file does not name it
OUTSIDE_NOTES = "DESIGN" + ".md"
#: markers that may precede a shell or Python block: run by this test, not run (with the reason), or README's two commands
KNOWN_MARKERS = r"<!-- (runnable|not runnable: .+|main-command|test-command) -->"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def runnable_blocks(path: Path) -> list[tuple[int, str, str]]:
    """``(line of the marker, language, code)`` of every marked block of ``path`` (1-based lines).

    >>> import tempfile
    >>> page = Path(tempfile.mkdtemp()) / "p.md"
    >>> _ = page.write_text("text\\n<!-- runnable -->\\n```bash\\necho hi\\n```\\n```bash\\nnot marked\\n```\\n"
    ...                     "<!-- runnable -->\\n```python\\nprint(1)\\n```\\n")
    >>> runnable_blocks(page)
    [(2, 'bash', 'echo hi\\n'), (9, 'python', 'print(1)\\n')]
    """
    lines = path.read_text().splitlines()
    blocks = []
    for i, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        fence = i + 1
        if fence >= len(lines) or lines[fence].strip() not in FENCES:
            raise ValueError(f"{path.name}:{i + 1}: {MARKER} must be followed by a ```bash or ```python block")
        end = next((j for j in range(fence + 1, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            raise ValueError(f"{path.name}:{i + 1}: the marked block is never closed")
        blocks.append((i + 1, FENCES[lines[fence].strip()], "\n".join(lines[fence + 1:end]) + "\n"))
    return blocks


def _cases() -> list:
    return [pytest.param(path, line, language, code, id=f"{path.relative_to(ROOT)}:{line}")
            for path in DOC_FILES for line, language, code in runnable_blocks(path)]


def _environment(tmp: Path) -> dict[str, str]:
    """PATH with a ``nasrescale`` that runs this checkout's package with this interpreter."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "nasrescale"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m nasrescale "$@"\n')
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NASRESCALE_")}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{os.path.dirname(sys.executable)}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=f"{ROOT}{os.pathsep}{env['PYTHONPATH']}" if env.get("PYTHONPATH") else str(ROOT),
        OMP_NUM_THREADS="1",
        NASRESCALE_DATA=str(tmp / "data"),
        NASRESCALE_CACHE=str(tmp / "cache"),
        MPLBACKEND="Agg",
    )
    return env


def _command(language: str, code: str, tmp: Path) -> list[str]:
    if language == "bash":
        return ["bash", "-euo", "pipefail", "-c", code]
    script = tmp / "block.py"  # a file, so that a traceback shows the block's lines
    script.write_text(code)
    return [sys.executable, str(script)]


@pytest.mark.slow
@pytest.mark.parametrize(("path", "line", "language", "code"), _cases())
def test_marked_block_runs(path: Path, line: int, language: str, code: str, tmp_path: Path) -> None:
    work = tmp_path / "repo"
    shutil.copytree(ROOT, work, ignore=COPY_IGNORE)
    done = subprocess.run(_command(language, code, tmp_path), cwd=work, env=_environment(tmp_path),
                          capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
    where = f"{path.relative_to(ROOT)}:{line}"
    assert done.returncode == 0, (f"{where}: the marked {language} block exited {done.returncode}\n{code}\n"
                                  f"stderr (tail):\n{done.stderr[-3000:]}")


def test_every_docs_page_is_in_the_readme_map() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = [p.name for p in DOC_FILES[1:] if f"](docs/{p.name})" not in readme]
    assert not missing, f"README.md's docs map lacks a link to: {missing}"


def test_relative_links_in_the_docs_resolve() -> None:
    broken = []
    for path in DOC_FILES:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for target in LINK.findall(line):
                if "://" not in target and not (path.parent / target).exists():
                    broken.append(f"{path.relative_to(ROOT)}:{n}: {target}")
    assert not broken, "links to missing files:\n" + "\n".join(broken)


def _repository_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.splitlines()
        return [ROOT / name for name in listed]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (e.g. an unpacked sdist)
        return [p for p in ROOT.rglob("*") if ".git" not in p.parts]


def test_no_file_cites_design_notes_outside_the_repository() -> None:
    citing = []
    for path in _repository_files():
        if not path.is_file():
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):  # binary files (figures, gzipped stores)
            continue
        if OUTSIDE_NOTES in text:
            citing.append(str(path.relative_to(ROOT)))
    assert not citing, (f"these files cite {OUTSIDE_NOTES}, which is not in the repository "
                        f"(cite docs/design.md §N): {citing}")


def test_every_command_page_has_a_runnable_block() -> None:
    pages = ["cli.md", "cells.md", "training.md", "pipelines.md", "ranking.md", "reports.md", "lr_search.md"]
    without = [name for name in pages if not runnable_blocks(ROOT / "docs" / name)]
    assert not without, f"pages whose commands the doc test never runs: {without}"


def unmarked_blocks(path: Path) -> list[int]:
    """Lines of the shell and Python fences of ``path`` that no marker precedes.

    >>> import tempfile
    >>> page = Path(tempfile.mkdtemp()) / "p.md"
    >>> _ = page.write_text("```python\\nx = 1\\n```\\n<!-- not runnable: needs a GPU -->\\n\\n```bash\\nrun\\n```\\n")
    >>> unmarked_blocks(page)
    [1]
    """
    unmarked, previous = [], ""
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip() in FENCES and not re.fullmatch(KNOWN_MARKERS, previous.strip()):
            unmarked.append(n)
        if line.strip():
            previous = line
    return unmarked


def test_every_shell_and_python_block_says_whether_it_runs() -> None:
    """A shell or Python block is marked runnable (and run above), or says why not, so none goes
    unchecked by accident."""
    unmarked = [f"{path.relative_to(ROOT)}:{n}" for path in DOC_FILES for n in unmarked_blocks(path)]
    assert not unmarked, f"shell or Python blocks without {MARKER} or <!-- not runnable: REASON -->: {unmarked}"


def test_cells_page_documents_every_family_key_macro_kind_and_op_kind() -> None:
    """docs/cells.md's family-file reference lists what the code accepts: every ``[family]``
    key, every ``[macro]`` kind with its settings, every shipped op kind."""
    from nasrescale.models import macro_kinds
    from nasrescale.space.family_file import _FAMILY_KEYS
    from nasrescale.space.ops import op_kinds

    page = (ROOT / "docs" / "cells.md").read_text()
    reference = page[page.index("### The family file"):]
    cells = [[c.strip() for c in line.split("|")[1:-1]] for line in reference.splitlines() if line.startswith("| ")]
    missing = [f"[family] {key}" for key in _FAMILY_KEYS if not any(row[1] == f"`{key}`" for row in cells)]
    for kind, keys in macro_kinds().items():
        row = next((r for r in cells if r[0] == f"`{kind}`"), ["", ""])
        missing += [f"[macro] kind {kind!r} with {key!r}" for key in keys if f"`{key}`" not in row[1]]
    missing += [f"op kind {name!r}" for name in op_kinds() if f"`{name}`" not in reference]
    assert not missing, f"docs/cells.md's family-file reference lacks: {missing}"
