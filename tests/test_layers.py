"""The layer order of the package (pyproject.toml ``[tool.importlinter]``) holds, and can fail.

The contract is checked by import-linter in a subprocess run from a folder holding the package
and pyproject.toml: the repository itself, or a temporary copy with one planted upward import.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

pytest.importorskip("importlinter", reason="the layers contract needs import-linter (the dev extra)")
grimp = pytest.importorskip("grimp")

ROOT = Path(__file__).resolve().parents[1]
LINT = ("import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")


def lint(folder: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the package in ``folder`` (import-linter puts the working folder first on sys.path)."""
    return subprocess.run([sys.executable, "-c", LINT], cwd=folder, capture_output=True, text=True, timeout=300)


def test_layers_contract_is_kept():
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "nasrescale layers KEPT" in result.stdout
    assert "report rooms KEPT" in result.stdout
    assert "kind packages KEPT" in result.stdout


def test_a_planted_upward_import_breaks_the_contract(tmp_path):
    shutil.copytree(ROOT / "nasrescale", tmp_path / "nasrescale",
                    ignore=shutil.ignore_patterns("__pycache__", "*.npz", "*.gz"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    ops = tmp_path / "nasrescale" / "space" / "ops.py"  # the space layer importing the pipeline runner
    ops.write_text(ops.read_text() + "\nfrom ..pipeline import runner  # planted upward import\n")
    result = lint(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "nasrescale layers BROKEN" in result.stdout
    assert "nasrescale.space.ops -> nasrescale.pipeline.runner" in result.stdout


def test_no_import_cycle_between_modules():
    graph = grimp.build_graph("nasrescale", cache_dir=None)
    edges = nx.DiGraph()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            edges.add_edge(module, imported)
    cycles = [sorted(c) for c in nx.strongly_connected_components(edges) if len(c) > 1]
    assert cycles == []


def test_kind_packages_are_independent_siblings(tmp_path):
    """A kind's package importing another kind's (here the retrain's claims the trend's writer)
    breaks the kind packages' contract: a link goes through ``report.common.links``."""
    shutil.copytree(ROOT / "nasrescale", tmp_path / "nasrescale",
                    ignore=shutil.ignore_patterns("__pycache__", "*.npz", "*.gz"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    claims = tmp_path / "nasrescale" / "kinds" / "retrain" / "claims.py"
    claims.write_text(claims.read_text() + "\nfrom ..trend import write  # planted sibling import\n")
    result = lint(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "kind packages BROKEN" in result.stdout
    assert "nasrescale.kinds.retrain.claims -> nasrescale.kinds.trend.write" in result.stdout
