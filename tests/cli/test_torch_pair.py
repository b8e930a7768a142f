"""A broken or mismatched torch / torchvision pair is refused in one line, exit 2, before any
command that builds networks starts: the two versions found and the pip command that mends them."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from importlib import metadata

import pytest

from nasrescale.cli import torch_pair
from nasrescale.cli.torch_pair import matching_torchvision, mend_command, pair_problem

from pipeline_helpers import cli  # noqa: F401  (used by name)

FOUND = f"torch {metadata.version('torch')}, torchvision {metadata.version('torchvision')}"


class _BrokenTorchvision(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torchvision`` and fails to load it as a CPU torch beside a CUDA torchvision does."""

    def find_spec(self, name, path=None, target=None):
        if name == "torchvision":
            return importlib.machinery.ModuleSpec(name, self)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        raise RuntimeError("operator torchvision::nms does not exist")


def one_line_refusal(capsys, *argv: str) -> str:
    code, out, err = cli(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1, err
    return err


def test_a_torchvision_whose_import_fails_is_one_line_with_the_mend(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torchvision", None)  # `import torchvision` raises ImportError
    err = one_line_refusal(capsys, "diagnose", "3_33_333")
    assert err.startswith(f"nasrescale diagnose: error: {FOUND}: import torchvision failed (ModuleNotFoundError: import of torchvision halted")
    assert "mend with: python -m pip install --force-reinstall torch==" in err


def test_torchvisions_missing_operator_is_one_line_with_the_mend(monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "torchvision", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_BrokenTorchvision(), *sys.meta_path])
    err = one_line_refusal(capsys, "train", "3_33_333", "--epochs", "1")
    assert f"{FOUND}: import torchvision failed (RuntimeError: operator torchvision::nms does not exist)" in err
    assert 'torch==' in err and '"torchvision==0.' in err


def test_the_issues_pair_is_refused_before_importing_anything(monkeypatch, capsys):
    # torch 2.13.0+cpu from the CPU index beside torchvision 0.28.0, PyPI's CUDA build
    versions = {"torch": "2.13.0+cpu", "torchvision": "0.28.0"}
    monkeypatch.setattr(torch_pair, "_installed", versions.get)
    monkeypatch.setattr(torch_pair.sys, "platform", "linux")
    monkeypatch.setattr(torch_pair.importlib, "import_module", pytest.fail)
    err = one_line_refusal(capsys, "train", "3_33_333")
    assert err == ("nasrescale train: error: torch 2.13.0+cpu, torchvision 0.28.0 do not work together (torch is "
                   "the +cpu build, torchvision the CUDA build from PyPI (no +label); both must come from one "
                   "index); mend with: python -m pip install --force-reinstall torch==2.13.0 "
                   '"torchvision==0.28.*" --index-url https://download.pytorch.org/whl/cpu (where that index '
                   'cannot be reached: python -m pip install --force-reinstall --upgrade torch torchvision)\n')


def test_a_missing_torchvision_names_both_packages(monkeypatch, capsys):
    monkeypatch.setattr(torch_pair, "_installed", {"torch": "2.14.1"}.get)
    err = one_line_refusal(capsys, "lr-search", "3_33_333")
    assert "torch 2.14.1, torchvision (not installed): both are needed; mend with: " in err


def test_commands_that_build_nothing_do_not_check_the_pair(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torchvision", None)
    code, out, _ = cli(capsys, "analyze", "3_33_333")
    assert code == 0 and "sum L^3 126" in out


def test_summary_checks_the_versions_but_imports_no_torchvision(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torchvision", None)  # summary reads no images: it runs
    code, out, _ = cli(capsys, "summary", "3_33_333")
    assert code == 0 and "1,531,546" in out
    monkeypatch.setattr(torch_pair, "_installed", {"torch": "2.14.1", "torchvision": "0.28.0"}.get)
    err = one_line_refusal(capsys, "summary", "3_33_333")
    assert "torchvision 0.28 is built for torch 2.13, not 2.14" in err


@pytest.mark.parametrize("torch_version,vision", [("2.3.0", "0.18"), ("2.3.1+cpu", "0.18"), ("2.13.0", "0.28"),
                                                  ("2.14.1", "0.29"), ("1.13.1", None)])
def test_the_matching_torchvision_release(torch_version, vision):
    assert matching_torchvision(torch_version) == vision


@pytest.mark.parametrize("torch_version,vision_version,linux", [
    ("2.14.1", "0.29.1", True), ("2.14.1+cpu", "0.29.1+cpu", True), ("2.3.0+cu121", "0.18.0+cu121", True),
    ("2.14.1", "0.29.1+cpu", False),  # Windows: PyPI's torch is the CPU build, unlabelled
])
def test_pairs_that_work_together(torch_version, vision_version, linux):
    assert pair_problem(torch_version, vision_version, linux) is None


@pytest.mark.parametrize("torch_version,vision_version,problem", [
    ("2.14.1", "0.28.0", "torchvision 0.28 is built for torch 2.13, not 2.14"),
    ("2.3.0+cpu", "0.19.0+cpu", "torchvision 0.19 is built for torch 2.4, not 2.3"),
    ("2.3.0+cu118", "0.18.0+cu121", "torch is the +cu118 build, torchvision the +cu121 build"),
])
def test_pairs_that_do_not(torch_version, vision_version, problem):
    assert pair_problem(torch_version, vision_version).startswith(problem)


def test_the_mend_keeps_torchs_release_and_index():
    assert mend_command("2.14.1") == 'python -m pip install --force-reinstall torch==2.14.1 "torchvision==0.29.*"'
    assert mend_command("2.4.0+cu121").endswith("--index-url https://download.pytorch.org/whl/cu121")
    assert mend_command(None) == "python -m pip install torch torchvision"
