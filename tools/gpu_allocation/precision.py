"""The science's precision (docs/gpu_allocation.md, "Precision by verdict"): bf16 only after the
parity verdict committed for the GPU kind and code is "equivalent" (and its control arm, where it
ran, came out "different": the check could fail), fp32 otherwise; and one study never mixes the
two: a store that holds fp32 results gets no bf16 slice, and one that holds bf16 results no fp32
slice.

>>> verdict = ParityVerdict("20270101T000000Z", bf16="equivalent", control="different")
>>> choice = choose_precision(verdict, "H100", stored=[], ran=False, setting={"flat": "fp32"})
>>> choice.precision, choice.settings, choice.refused
('bf16', ['protocols.flat.precision=bf16'], None)
>>> choose_precision(verdict, "H100", stored=["fp32"], ran=True, setting={"flat": "fp32"}).precision
'fp32'
>>> refused = choose_precision(None, "H100", stored=["bf16"], ran=True, setting={"flat": "bf16"}).refused
>>> refused.startswith("the store holds 1 finished job(s) trained in bf16, and bf16 is not allowed")
True
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .committed import OUTPUT, committed_steps

__all__ = ["PRECISIONS", "ParityVerdict", "PrecisionChoice", "read_verdict", "committed_verdict",
           "stored_precisions", "choose_precision"]

PRECISIONS = ("fp32", "bf16")
#: a comparison's line in parity.txt: ``parity A vs B: <figures>: <verdict>``
_LINE = re.compile(r"^parity (?P<a>.+?) vs (?P<b>[^:]+): .*: (?P<verdict>[^:]+)$")


@dataclass(frozen=True)
class ParityVerdict:
    """The verdicts of one committed parity step: bf16 against fp32 (the engine's), and the control
    arm (a shifted LR) against fp32; ``None`` where the comparison was not run."""

    folder: str
    bf16: str | None = None
    control: str | None = None

    @property
    def allows_bf16(self) -> bool:
        """Whether science may train in bf16: "equivalent", by a check that could tell a difference."""
        return self.bf16 == "equivalent" and self.control in (None, "different")

    def text(self, kind: str) -> str:
        """The verdict as the plan prints it."""
        control = "" if self.control is None else f", control {self.control}"
        return f"parity committed in {self.folder} for an {kind} at this code: bf16 vs fp32 {self.bf16}{control}"


@dataclass
class PrecisionChoice:
    """The science's precision, why, the ``--set`` options that make the pipeline train in it, and
    why no science slice may run (``refused``; ``None``: it may)."""

    precision: str
    reason: str
    refused: str | None = None
    settings: list[str] = field(default_factory=list)


def read_verdict(parity_txt: Path, folder: str) -> ParityVerdict:
    """The bf16 and control verdicts of a parity.txt (``benchmarks/parity.py``'s output)."""
    bf16 = control = None
    for line in parity_txt.read_text(errors="replace").splitlines():
        match = _LINE.match(line.strip())
        if match and match["b"].strip() == "engine fp32":
            if match["a"] == "engine bf16":
                bf16 = match["verdict"].strip()
            elif match["a"].startswith("control"):
                control = match["verdict"].strip()
    return ParityVerdict(folder, bf16, control)


def committed_verdict(alloc_dir: Path, kind: str, code: str) -> ParityVerdict | None:
    """The newest parity verdict committed ``ok`` for GPU ``kind`` at ``code``, or ``None``."""
    folder = committed_steps(alloc_dir, kind, code).get("parity")
    return None if folder is None else read_verdict(alloc_dir / folder / OUTPUT["parity"], folder)


def stored_precisions(run_dir: Path) -> tuple[dict[str, str], bool]:
    """``key -> precision`` of each finished job of the run folder's store (its record's ``precision``,
    the one it trained in; else its protocol's setting; else ``unknown``), and whether any job ran at
    all (is not pending); ``({}, False)`` without a store."""
    from nasrescale.store.job_status import FINAL, Status
    from nasrescale.store.read import reading

    if not any((run_dir / name).is_file() for name in ("store.sqlite", "store.sqlite.gz")):
        return {}, False
    with reading(run_dir) as store:
        rows = store.rows()
        found = {}
        for key in (r["key"] for r in rows if r["status"] in FINAL):
            record = store.record(key) or {}
            setting = (store.job_json(key).get("protocol") or {}).get("precision")
            found[key] = str(record.get("precision") or setting or "unknown")
        return found, any(r["status"] != Status.PENDING for r in rows)


def _allowed(verdict: ParityVerdict | None, kind: str) -> tuple[set[str], str]:
    """The precisions science may train in on ``kind``, and why."""
    if verdict is None:
        return {"fp32"}, f"no parity verdict committed for an {kind} at this code"
    return ({"fp32", "bf16"} if verdict.allows_bf16 else {"fp32"}), verdict.text(kind)


def _held(stored: list[str], allowed: set[str], why: str, asked: str) -> tuple[str | None, str]:
    """The precision a store's finished jobs bind the study to (``None``: refused), and why."""
    counts = Counter(stored)
    if len(counts) > 1:
        held = ", ".join(f"{n} in {p}" for p, n in sorted(counts.items()))
        return None, f"the store already mixes precisions ({held}): no slice is added to it"
    (held, n), = counts.items()
    if held not in allowed:
        other = "an fp32 slice" if held == "bf16" else "a slice"
        return None, (f"the store holds {n} finished job(s) trained in {held}, and {held} is not allowed ({why}): "
                      f"{other} would mix precisions in one study")
    if asked not in ("auto", held):
        return None, f"--precision {asked}, but the store holds {n} finished job(s) trained in {held}: one study " \
                     "never mixes precisions (start the other precision under another pipeline name)"
    kept = " (bf16 is allowed, but one study never mixes precisions)" if held == "fp32" and "bf16" in allowed else ""
    return held, f"the store's {n} finished job(s) trained in {held}{kept}; {why}"


def choose_precision(verdict: ParityVerdict | None, kind: str, *, stored: Iterable[str], ran: bool,
                     setting: dict[str, str], asked: str = "auto") -> PrecisionChoice:
    """The science's precision on GPU ``kind`` (module docstring): ``verdict`` the committed parity
    verdict, ``stored`` the precisions of the store's finished jobs, ``ran`` whether any of its jobs
    ran, ``setting`` each protocol label's precision in the pipeline, ``asked`` ``--precision``."""
    allowed, why = _allowed(verdict, kind)
    finished = list(stored)
    if asked != "auto" and asked not in allowed:
        return PrecisionChoice(asked, why, refused=f"--precision {asked}, but {asked} is not allowed ({why})")
    if finished:
        precision, reason = _held(finished, allowed, why, asked)
        if precision is None:
            return PrecisionChoice("none", why, refused=reason)
    else:
        precision = asked if asked != "auto" else ("bf16" if "bf16" in allowed else "fp32")
        reason = why if asked == "auto" else f"--precision {asked}; {why}"
    settings = [f"protocols.{label}.precision={precision}" for label, p in setting.items() if p != precision]
    if settings and ran:
        return PrecisionChoice(precision, reason, refused=(
            f"the pipeline sets {', '.join(sorted(set(setting.values())))} but the science must train in {precision}: "
            "another precision setting is another pipeline, which its store (some jobs ran) refuses; run it under "
            "another pipeline name"))
    return PrecisionChoice(precision, reason, settings=settings)
