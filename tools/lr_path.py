"""Follow the learning rate from the pipeline runner to the optimizer, as the code runs it.

    python tools/lr_path.py [PIPELINE] [--set KEY=VALUE ...]

Runs ``PIPELINE`` (default: the quickstart, cut to one cell beside its degenerate one, one seed, one epoch on 256 images,
in a temporary results folder) in this process and records the call stacks that carry a job's
learning rate: where each job is made with its protocol (the base LR it trains with is
decided there), where the cell's LR (base LR x its LR rule) and the per-parameter groups are
derived from it, and where the optimizer is built with them. It prints each stack from ``run_pipeline`` down, then the modules the LR's path crosses
(the union of those stacks) and its climbs: calls from a module of a lower layer into one of a
higher layer (a registry's entry, a callback), by the layers of the import-linter contract in
``pyproject.toml``. Nothing is timed; the counts do not depend on the machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import tomllib
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nasrescale.config import parse_overrides  # noqa: E402
from nasrescale.executors.local import LocalExecutor  # noqa: E402
from nasrescale.pipeline.runner import run_pipeline  # noqa: E402
from nasrescale.pipeline.spec import load_pipeline  # noqa: E402

PACKAGE = ROOT / "nasrescale"
#: the quickstart, cut to one trained job
TINY = ["archs.count=2", "pipeline.seeds=[0]", "budget.epochs=1", "budget.train_subset=256",
        "budget.test_subset=256", "executor.kind=local", "executor.device=cpu", "executor.threads=1"]


def layers() -> dict[str, int]:
    """Top-level subpackage -> its layer (0: the top), from the ``nasrescale layers`` contract."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    order = next(c["layers"] for c in contracts if c["name"] == "nasrescale layers")
    return {name.strip(): i for i, group in enumerate(order) for name in group.split("|")}


def module_of(frame: FrameType) -> str | None:
    """``pipeline/runner.py`` for a frame in the package, else ``None``."""
    path = Path(frame.f_code.co_filename).resolve()
    return str(path.relative_to(PACKAGE)) if path.is_relative_to(PACKAGE) else None


def stack(frame: FrameType | None) -> list[str]:
    """The package's modules on the stack from ``run_pipeline`` down to ``frame`` (a module once
    per run of consecutive frames in it)."""
    out: list[str] = []
    while frame is not None:
        name = module_of(frame)
        if name is not None and (not out or out[-1] != name):
            out.append(name)
        if name == "pipeline/runner.py" and frame.f_code.co_name == "run_pipeline":
            return out[::-1]
        frame = frame.f_back
    return []  # not under run_pipeline


class Recorder:
    """A profile hook keeping the distinct stacks that reach the LR's three places."""

    def __init__(self) -> None:
        self.stacks: dict[tuple[str, ...], str] = {}

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        code, where = frame.f_code, module_of(frame)
        if code.co_name == "__init__" and code.co_filename.endswith("torch/optim/optimizer.py"):
            self._keep(frame.f_back, "the optimizer is built")
        elif where == "jobs/job.py" and code.co_name in ("__init__", "__post_init__"):
            self._keep(frame, "a job is made with its protocol")
        elif where == "scaling/lr.py" and code.co_name in ("lr_plan", "param_groups"):
            self._keep(frame, "the cell's LR and its per-parameter groups are derived")

    def _keep(self, frame: FrameType | None, what: str) -> None:
        found = tuple(stack(frame))
        if found:
            self.stacks.setdefault(found, what)


def climbs(path: tuple[str, ...], layer: dict[str, int]) -> list[str]:
    """The calls of ``path`` from a lower layer into a higher one."""
    def top(module: str) -> int:
        return layer.get(module.split("/")[0].removesuffix(".py"), len(layer))
    return [f"{a} -> {b}" for a, b in zip(path, path[1:]) if top(b) < top(a)]


def trace(name: str = "quickstart", sets: list[str] | None = None) -> dict[tuple[str, ...], str]:
    """The distinct stacks carrying the LR (module path -> what happens at its end) of a run of
    pipeline ``name`` (the quickstart: cut to :data:`TINY`) in a temporary results folder."""
    sets = [*TINY, *(sets or [])] if name == "quickstart" else list(sets or [])
    pipeline = load_pipeline(name, parse_overrides(sets))
    recorder = Recorder()
    with tempfile.TemporaryDirectory() as results:
        threading.setprofile(recorder)
        sys.setprofile(recorder)
        try:
            run_pipeline(pipeline, results, progress=False, executor=LocalExecutor(pipeline.executor))
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
    return recorder.stacks


def path_figures(stacks: dict[tuple[str, ...], str]) -> tuple[list[str], list[str]]:
    """The modules the stacks cross and their climbs, each sorted."""
    layer = layers()
    return (sorted({m for path in stacks for m in path}),
            sorted({c for path in stacks for c in climbs(path, layer)}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pipeline", nargs="?", default="quickstart")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    stacks = trace(args.pipeline, args.set)
    for path, what in stacks.items():
        print(f"{what}: " + " -> ".join(path))
    modules, up = path_figures(stacks)
    print(f"\n{len(modules)} modules on the LR's path: {', '.join(modules)}")
    print(f"{len(up)} climbs (a lower layer calling a higher one): {'; '.join(up) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
