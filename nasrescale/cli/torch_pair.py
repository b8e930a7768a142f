"""The torch / torchvision pair, checked before a command that builds or trains networks.

torchvision is compiled against one torch release: torch ``2.x`` goes with torchvision
``0.(x + 15)`` (torch 2.3 with 0.18, 2.13 with 0.28, 2.14 with 0.29), and a CPU build of one
(``+cpu``) does not load beside a CUDA build of the other. pip installs such a pair without
complaint when the two come from different indexes, and the first ``import torchvision`` then
fails deep inside a run (``operator torchvision::nms does not exist``). :func:`check_torch_pair`
finds that before the command starts, from the installed versions and one import of each, and
says it in one line with the command that mends it.

>>> matching_torchvision("2.14.1")
'0.29'
>>> matching_torchvision("2.3.0+cpu")
'0.18'
>>> pair_problem("2.13.0+cpu", "0.28.0")
'torch is the +cpu build, torchvision the CUDA build from PyPI (no +label); both must come from one index'
>>> pair_problem("2.14.1", "0.28.0")
'torchvision 0.28 is built for torch 2.13, not 2.14'
>>> print(mend_command("2.13.0+cpu"))
python -m pip install --force-reinstall torch==2.13.0 "torchvision==0.28.*" --index-url https://download.pytorch.org/whl/cpu
"""

from __future__ import annotations

import importlib
import re
import sys
from importlib import metadata

from ..errors import NasRescaleError

__all__ = ["TORCH_VISION_OFFSET", "TorchInstallError", "matching_torchvision", "pair_problem", "mend_command",
           "check_torch_pair"]

#: torch 2.x <-> torchvision 0.(x + 15), every release since torch 2.0 / torchvision 0.15
TORCH_VISION_OFFSET = 15

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?[^+]*(?:\+(.+))?")


class TorchInstallError(NasRescaleError):
    """torch and torchvision are missing, broken, or not a pair built for each other."""


def _parse(version: str) -> tuple[int, int, str]:
    """``(major, minor, local label)`` of a version such as ``2.13.0+cpu`` (label ``""`` if none)."""
    match = _VERSION.match(version)
    if match is None:
        return -1, -1, ""
    return int(match.group(1)), int(match.group(2)), match.group(4) or ""


def matching_torchvision(torch_version: str) -> str | None:
    """The torchvision minor release (``"0.29"``) built for ``torch_version``; None before torch 2."""
    major, minor, _ = _parse(torch_version)
    return f"0.{minor + TORCH_VISION_OFFSET}" if major == 2 else None


def _build(label: str, linux: bool) -> str | None:
    """``cpu``, ``cuXXX`` or ``rocmX`` of a local label; an unlabelled wheel is PyPI's build (CUDA on
    Linux, unknown elsewhere: None)."""
    if label:
        return label
    return "pypi" if linux else None


def _said(build: str) -> str:
    return "CUDA build from PyPI (no +label)" if build == "pypi" else f"+{build} build"


def pair_problem(torch_version: str, vision_version: str, linux: bool = True) -> str | None:
    """What is wrong with installing these two versions together, or None where they match
    (``linux``: whether an unlabelled wheel is PyPI's CUDA build, as on Linux)."""
    t_major, t_minor, t_label = _parse(torch_version)
    v_major, v_minor, v_label = _parse(vision_version)
    if t_major == 2 and (v_major, v_minor) != (0, t_minor + TORCH_VISION_OFFSET):
        built_for = f"torch 2.{v_minor - TORCH_VISION_OFFSET}" if v_major == 0 and v_minor >= 15 else "another torch"
        return f"torchvision {v_major}.{v_minor} is built for {built_for}, not {t_major}.{t_minor}"
    t_build, v_build = _build(t_label, linux), _build(v_label, linux)
    if t_build and v_build and t_build != v_build:
        return f"torch is the {_said(t_build)}, torchvision the {_said(v_build)}; both must come from one index"
    return None


def mend_command(torch_version: str | None) -> str:
    """The one pip command that installs a matching pair, keeping torch's release and build."""
    if torch_version is None:
        return "python -m pip install torch torchvision"
    public = torch_version.split("+", 1)[0]
    label = _parse(torch_version)[2]
    vision = matching_torchvision(torch_version)
    pins = f'torch=={public} "torchvision=={vision}.*"' if vision else "torch torchvision"
    index = f" --index-url https://download.pytorch.org/whl/{label}" if label else ""
    return f"python -m pip install --force-reinstall {pins}{index}"


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _first_line(err: BaseException, limit: int = 160) -> str:
    text = (str(err).strip().splitlines() or [type(err).__name__])[0]
    return text if len(text) <= limit else text[:limit - 1] + "…"


def check_torch_pair(import_vision: bool = True) -> None:
    """Check the installed pair's versions and import torch (and torchvision, with
    ``import_vision``: about 2 s more where the command would not import it), refusing a missing,
    broken or mismatched pair.

    Raises:
        TorchInstallError: one line naming the two versions found, what is wrong, and the
            ``python -m pip install ...`` command that mends it.
    """
    torch_v, vision_v = _installed("torch"), _installed("torchvision")
    found = f"torch {torch_v or '(not installed)'}, torchvision {vision_v or '(not installed)'}"
    mend = f"mend with: {mend_command(torch_v)}"
    if torch_v and "+" in torch_v:  # a PyTorch index build: that index may be out of reach
        mend += " (where that index cannot be reached: python -m pip install --force-reinstall --upgrade torch torchvision)"
    if torch_v is None or vision_v is None:
        raise TorchInstallError(f"{found}: both are needed; {mend}")
    problem = pair_problem(torch_v, vision_v, sys.platform.startswith("linux"))
    if problem:
        raise TorchInstallError(f"{found} do not work together ({problem}); {mend}")
    for module in ("torch", "torchvision") if import_vision else ("torch",):
        try:
            importlib.import_module(module)
        except Exception as err:  # ImportError, or torchvision's RuntimeError about its C++ ops
            raise TorchInstallError(f"{found}: import {module} failed ({type(err).__name__}: {_first_line(err)}); "
                                    f"{mend}") from None
