"""The budget shared among the steps, and the output folder they fill: ``allocation.json`` (each
step's status, seconds and share, the plan, the slice) and the limits on what comes back."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from . import MIB
from .plan import Plan
from .process import utc
from .sizes import KEEP, WANT
from .steps import RUNNERS

__all__ = ["share", "limit_problems", "run_steps"]


def share(args: argparse.Namespace, deadline: float, step: str, later: list[str],
          want: dict[str, float] | None = None) -> float:
    """Seconds for ``step``: what it wants, less what the later steps are kept (``want``, a plan's
    seconds: the later steps keep theirs); the last step the rest."""
    left = deadline - time.monotonic()
    if not later:
        return max(0.0, left - (2.0 if args.dry_run else 10.0))
    keep = KEEP if want is None else want
    return max(0.0, min((want or WANT)[step], left - sum(20.0 if args.dry_run else keep[s] for s in later)))


def limit_problems(out: Path, args: argparse.Namespace) -> list[str]:
    """How the output folder breaks the limits on what comes back (empty: it does not)."""
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    problems = [f"{len(files)} files (at most {args.max_files} come back)"] if len(files) > args.max_files else []
    for rel in files:
        if (out / rel).stat().st_size > args.max_file_mib * MIB:
            problems.append(f"{rel}: {(out / rel).stat().st_size / MIB:.1f} MiB (at most {args.max_file_mib:g} MiB)")
        if rel.count("/") > args.max_depth:
            problems.append(f"{rel}: more than {args.max_depth} folders down")
        if not re.fullmatch(r"[A-Za-z0-9._/-]+", rel):
            problems.append(f"{rel}: a name with characters other than letters, digits, '.', '_', '-'")
    return problems


def _write(out: Path, record: dict[str, Any]) -> None:
    (out / "allocation.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def run_steps(args: argparse.Namespace, steps: list[str], out: Path, plan: Plan | None = None,
              planned: bool = False) -> int:
    """Run the steps (``planned``: the plan's own steps, with its seconds; else the fixed shares),
    then write allocation.json (counted among what comes back, the plan in it); 0 if every step
    was ok and the output folder fits its limits, else 1."""
    deadline = time.monotonic() + args.budget
    record: dict[str, Any] = {"started_at": utc(), "dry_run": args.dry_run, "argv": sys.argv[1:], "steps": [],
                              **({} if plan is None else {"plan": plan.to_json()})}
    want = plan.wants() if plan is not None and planned else None
    for i, step in enumerate(steps):
        seconds, start = share(args, deadline, step, steps[i + 1:], want), time.monotonic()
        print(f"== gpu_allocation {step}: share {seconds:.0f} s ==", flush=True)
        try:
            status = RUNNERS[step](args, out, start + seconds, record) if seconds > 0 else "skipped: no time left"
        except Exception as err:  # noqa: BLE001 - one step's failure must not lose the others' output
            status = f"error: {type(err).__name__}: {err}"
        record["steps"].append({"step": step, "status": status, "seconds": round(time.monotonic() - start, 1),
                                "share": round(seconds)})
        print(f"== gpu_allocation {step}: {status} ==", flush=True)
    record["limit_problems"] = []
    _write(out, record)
    record["limit_problems"] = limit_problems(out, args)
    _write(out, record)
    for problem in record["limit_problems"]:
        print(f"gpu_allocation: over the output limits: {problem}", file=sys.stderr)
    ok = all(s["status"] == "ok" for s in record["steps"]) and not record["limit_problems"]
    print(f"gpu_allocation: {'all steps ok' if ok else 'some steps did not end ok'}; see {out / 'allocation.json'}")
    return 0 if ok else 1
