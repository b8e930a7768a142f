"""The report of a proxy calibration (``kind = "calibration"``): how well each candidate budget
ranks the cells like the reference, what it costs, and how much of it is seed noise.

:func:`write_calibration_report` reads the run into its
:class:`~nasrescale.kinds.calibration.summary.CalibrationSummary` and writes the sections of
:data:`~nasrescale.kinds.calibration.sections.CALIBRATION_SECTIONS` into ``report.md`` (with its
figures) and the summary into ``report.json``; :func:`calibration_text` is what ``nasrescale
run`` prints at the end; :func:`proxy_validity` is one candidate's figures as another run's
report quotes them. Everything is recomputed from the store (``nasrescale report NAME``);
``nasrescale rank NAME:LABEL nb201:cifar10`` gives any one candidate's full table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ...errors import NasRescaleError
from ...ranking.sources import load_source
from ...store.read import read_store
from ...report.common.page import Section, assemble, write_markdown_json
from ...report.common.records import cpus_per_run
from ...report.common.reference import reference_spec
from .sections import CALIBRATION_SECTIONS, candidates_table, verdict_lines
from .summary import candidate_stats, summarize_calibration

__all__ = ["write_calibration_report", "calibration_text", "proxy_validity"]


def write_calibration_report(run_dir: Path, n_boot: int = 1000,
                             sections: Sequence[Section[Any]] = CALIBRATION_SECTIONS) -> Path:
    """Write ``run_dir/report.md`` with ``report.json`` and its figures; return the report's path
    (``sections``: the page's sections in order, where a new section is one entry)."""
    run = summarize_calibration(Path(run_dir), n_boot)
    lines, numbers = assemble(sections, run)
    return write_markdown_json(run.run_dir, lines, {**run.to_json(), **numbers})


def calibration_text(run_dir: Path, n_boot: int = 1000) -> str:
    """The candidates' table as text (what ``nasrescale run`` prints at the end)."""
    run = summarize_calibration(Path(run_dir), n_boot)
    return "\n".join([f"{run.name}: proxy validity against {run.reference or 'no reference'}", ""]
                     + candidates_table(run.candidates) + [""] + verdict_lines(run))


def proxy_validity(spec: str, results_root: Path, n_boot: int = 1000) -> dict[str, Any]:
    """The figures of calibration candidate ``spec`` (``RUN:LABEL``) from its store under
    ``results_root`` as JSON, with ``source`` = ``spec`` (what a study's claims and its
    ``report.json`` quote); ``{"source": spec, "missing": reason}`` when that run or candidate is
    not there."""
    name, _, label = spec.rpartition(":")
    try:
        store = read_store(Path(results_root) / name / "store.sqlite")
        if label not in store.protocols:
            return {"source": spec, "missing": f"{name} has no candidate {label!r}"}
        ref_spec, nats = reference_spec(store.record)
        reference = load_source(ref_spec, nats_file=nats) if ref_spec else None
        return {**candidate_stats(store, label, reference, cpus_per_run(store), n_boot).to_plain(), "source": spec}
    except NasRescaleError as err:
        return {"source": spec, "missing": str(err)}
