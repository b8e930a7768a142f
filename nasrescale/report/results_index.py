"""``results/README.md``: an index of the committed runs under a results root, from their stores.

The index lists the runs whose store is versioned: a folder holding ``store.sqlite.gz`` (the form
committed results ship in, written by ``tools/pack_store.py``; read from its copy unpacked beside
it, :func:`~nasrescale.store.sqlite_store.unpack_gzipped`). A local run (``store.sqlite`` alone) is never
listed, so running and reporting it leaves the index, a versioned file, as it is: its own
``report.md`` is its page. For each listed run: the pipeline and its description, the data copy it
trained on, the hardware and software its finished jobs ran on (device, torch, CUDA, the
precision actually used: the CPU always trains in fp32), the dates, jobs done / total, the
slices recorded by :mod:`nasrescale.pipeline.slices`, and a ranking table (each protocol against
the benchmark reference, and the protocols against each other: Kendall tau over the
architectures finished so far), or what the run's kind shows instead
(:attr:`~nasrescale.report.kind_reports.KindReport.index`: an LR validation's or a landscape's headline). :func:`provenance_lines` is the same provenance as a few
Markdown lines for a run's own ``report.md``.

>>> from pathlib import Path
>>> import tempfile
>>> index_text(Path(tempfile.mkdtemp())).splitlines()[0]
'# Results'
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

from ..errors import NasRescaleError
from ..fileio import atomic_write_text
from ..ranking.compare import compare
from ..ranking.sources import store_source
from ..ranking.text import fmt
from ..store.job_status import FINAL, Status
from ..store.read import StoreData, read_store
from .common.markdown import md_table
from .common.provenance import _slice_table, _slices, provenance, provenance_lines  # noqa: F401
from .common.identical import identical_protocols
from .common.held_out import held_out, tuning_cells, without
from .kind_reports import REPORTS
from .common.reference import load_reference, protocol_order, reference_spec

__all__ = ["provenance", "provenance_lines", "index_text", "write_index", "refresh_index", "run_folders",
           "is_listed"]


def is_listed(run_dir: Path) -> bool:
    """Whether the index lists the run folder ``run_dir``: its store is versioned (module docstring)."""
    return (Path(run_dir) / "store.sqlite.gz").is_file()


def run_folders(root: Path) -> list[Path]:
    """The run folders under ``root`` that the index lists (:func:`is_listed`), by name."""
    root = Path(root)
    return sorted(p for p in root.iterdir() if p.is_dir() and is_listed(p)) if root.is_dir() else []


def _ranking_rows(store: StoreData) -> list[list[Any]]:
    """Per protocol: finished architectures, mean accuracy, tau against the reference; then each pair."""
    labels = protocol_order(store)
    same = identical_protocols(store.jobs, labels)  # one protocol under two labels counts once
    labels = [label for label in labels if label not in same]
    sources = {p: store_source(store, p, p) for p in labels}
    cells_out = held_out(tuning_cells(store), sorted({a for s in sources.values() for a in s.runs["arch"].astype(str)}),
                         store.record.family)  # the LR tuning's cells are out of the ranking, as in the run's report
    sources = {p: without(s, cells_out) for p, s in sources.items()}
    spec, nats_file = reference_spec(store.record)
    ref, _ = load_reference(spec, nats_file)
    rows = []
    for label, src in sources.items():
        if src.runs.empty:
            rows.append([label, ref.label if ref else "-" if spec else "no reference", 0, "-", "-"])
            continue
        if ref is None:
            rows.append([label, "-" if spec else "no reference", "-", "-", "-"])
            continue
        r = compare(ref, src, n_boot=0)[0]
        rows.append([label, ref.label, r["n"], fmt(r["mean_b"], 2), fmt(r["kendall_tau"])])
    for x, y in combinations(labels, 2):
        if sources[x].runs.empty or sources[y].runs.empty:
            continue
        r = compare(sources[x], sources[y], n_boot=0)[0]
        rows.append([y, x, r["n"], fmt(r["mean_b"], 2), fmt(r["kendall_tau"])])
    return rows


def _run_section(run_dir: Path) -> list[str]:
    try:
        store = read_store(run_dir / "store.sqlite")
    except NasRescaleError as err:
        return [f"## {run_dir.name}", "", f"Store not readable: {err}", ""]
    name = store.record.name or run_dir.name
    jobs = store.jobs
    done = int(jobs["status"].isin(FINAL).sum())
    last = jobs["updated_at"].dropna().max() if "updated_at" in jobs and done else None
    description = store.record.description
    report = "report.md" if (run_dir / "report.md").is_file() else None
    title = run_dir.name if name == run_dir.name else f"{run_dir.name} (pipeline {name})"
    lines = [f"## {title}", "", str(description), ""] if description else [f"## {title}", ""]
    lines += [f"Jobs done {done}/{len(jobs)} (failed {int((jobs['status'] == Status.FAILED).sum())}); "
              f"created {store.record.created_at or '?'}, last result {last or '-'}."
              + (f" Full report: [{run_dir.name}/report.md]({run_dir.name}/report.md)." if report else ""), ""]
    lines += md_table(["", ""], [[k, v] for k, v in provenance(store).items()]) + [""]
    slices = _slices(store)
    if slices:
        lines += ["Slices run:", "", *_slice_table(slices), ""]
    index = REPORTS.get(store.record.kind).index
    if index is not None:  # the kind's own headline in place of a ranking
        return lines + index(run_dir)
    lines += ["Ranking (Kendall tau-b over the architectures finished under both, the LR tuning's cells and "
              "their isomorphs left out; mean accuracy of B, %):", ""]
    lines += md_table(["B", "A", "architectures", "mean acc. B", "Kendall tau"], _ranking_rows(store)) + [""]
    return lines + _headline_lines(run_dir)


#: the report lines the index repeats: a calibration's choice, a re-evaluation's claims, a trend's direction
VERDICT_PREFIXES = ("**Interim:**", "**Tuning cells", "Left out of every statistic:", "- Highest tau", "- Goal tau", "- Mean gain of B",
                    "- Kendall tau between A", "- Split by the LR B used", "- Proxy validity", "- Against the budget")


def _headline_lines(run_dir: Path) -> list[str]:
    """The report's verdict bullets (a calibration's choice, a re-evaluation's claims, a trend's
    direction), if written."""
    report = run_dir / "report.md"
    if not report.is_file():
        return []
    text = report.read_text(encoding="utf-8").splitlines()
    heads = [ln for ln in text if ln.startswith(VERDICT_PREFIXES)]
    return heads + [""] if heads else []


def index_text(root: Path) -> str:
    """The Markdown of ``<root>/README.md``."""
    folders = run_folders(root)
    lines = ["# Results", "",
             "Generated by `nasrescale report` (or `nasrescale report --index`) from the stores below; do not edit "
             "by hand. It lists the committed runs: those whose store is versioned, gzipped as `store.sqlite.gz` (which "
             "any command unpacks beside it); a local run is not listed (its `report.md` is its page). Each run folder "
             "holds `store.sqlite` (every job, its record and provenance) and, once reported, `report.md` and "
             "`report.json`; `nasrescale report PIPELINE` redraws the figures.", ""]
    if not folders:
        return "\n".join(lines + ["No results yet.", ""])
    summary = []
    for run_dir in folders:
        try:
            store = read_store(run_dir / "store.sqlite")
        except NasRescaleError:
            summary.append([f"[{run_dir.name}]({run_dir.name}/)", "?", "?", "?"])
            continue
        jobs = store.jobs
        done = int(jobs["status"].isin(FINAL).sum())
        summary.append([f"[{run_dir.name}]({run_dir.name}/)", store.record.dataset or "?",
                        provenance(store)["device"], f"{done}/{len(jobs)}"])
    lines += md_table(["pipeline", "data", "device", "jobs done/total"], summary) + [""]
    for run_dir in folders:
        lines += _run_section(run_dir)
    return "\n".join(lines)


def write_index(root: str | Path) -> Path:
    """Write ``<root>/README.md`` (the folder must exist) and return its path."""
    root = Path(root)
    if not root.is_dir():
        raise NasRescaleError(f"no results folder {str(root)!r}: run a pipeline first, or pass --results DIR")
    path = root / "README.md"
    atomic_write_text(path, index_text(root))
    return path


def refresh_index(run_dir: str | Path) -> Path | None:
    """After a report of ``run_dir``: rewrite the index of its results root if it lists the run
    (:func:`is_listed`) and return its path; ``None`` for a local run, whose report leaves the
    index as it is."""
    run_dir = Path(run_dir)
    return write_index(run_dir.parent) if is_listed(run_dir) else None
