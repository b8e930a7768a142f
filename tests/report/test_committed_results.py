"""The committed results agree with their committed stores: every accuracy a run's report.json
lists is a finished job of its ``store.sqlite.gz``, and every finished job is in the report.

A report written from a live store and committed beside an older snapshot of it would show
figures nobody can recompute; this test catches it on a clean checkout.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from nasrescale.kinds.landscape.plan import ANALYSIS_SETTINGS

RESULTS = Path(__file__).resolve().parents[2] / "results"


def _per_architecture(run: Path) -> bool:
    """A run whose report lists accuracies per architecture, protocol and seed; a run without
    a report.json is kept, so that its test fails naming it rather than the module's collection
    (which would take ``pytest -m gpu`` down with it)."""
    report = run / "report.json"
    return not report.exists() or "archs" in json.loads(report.read_text())


#: committed runs whose report lists accuracies per architecture, protocol and seed
RUNS = sorted(p.parent for p in RESULTS.glob("*/store.sqlite.gz") if _per_architecture(p.parent))


def query(gz: Path, tmp_path: Path, sql: str) -> list[tuple]:
    """The rows ``sql`` selects from the packed store ``gz`` (unpacked into ``tmp_path``)."""
    db = tmp_path / "store.sqlite"
    with gzip.open(gz, "rb") as src, db.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def finished_jobs(gz: Path, tmp_path: Path) -> dict[tuple[str, str, str], float]:
    """``{(arch, protocol, seed): test accuracy}`` of the store's done jobs."""
    rows = query(gz, tmp_path, "SELECT arch, protocol, seed, test_accuracy FROM jobs WHERE status = 'done'")
    return {(a, p, str(s)): acc for a, p, s, acc in rows}


def first_grid(db: Path) -> list[float]:
    """The stored pipeline's first tuning grid (``tuning.multipliers``; empty without one)."""
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'pipeline'").fetchone()
    finally:
        conn.close()
    return [float(m) for m in (json.loads(row[0]).get("tuning") or {}).get("multipliers", [])] if row else []


def tuning_runs(finished: dict[tuple[str, str, str], float], grid: list[float]) -> dict[tuple[str, float], list[float]]:
    """The tuning runs' accuracies by protocol and multiplier, as the report averages them: at the
    first grid's multipliers only the cells finished at every one of them that has a run (a
    tuning cell still running weighs none), past it (an extension) every run."""
    runs: dict[tuple[str, float], dict[str, list[float]]] = {}
    for (arch, label, _), acc in finished.items():
        if label.startswith("tune:"):
            arm, _, m = label[len("tune:"):].rpartition("@x")
            runs.setdefault((arm, float(m)), {}).setdefault(arch, []).append(acc)
    out = {}
    for arm in {a for a, _ in runs}:
        first = [m for m in grid if (arm, m) in runs]
        whole = set.intersection(*(set(runs[(arm, m)]) for m in first)) if first else set()
        for (a, m), by_cell in runs.items():
            if a == arm:
                out[(a, m)] = [acc for cell, accs in by_cell.items() if m not in first or cell in whole for acc in accs]
    return {key: accs for key, accs in out.items() if accs}


def reported_accuracies(report: dict) -> dict[tuple[str, str, str], float]:
    return {(row["arch"], label, seed): acc for row in report["archs"]
            for label, entry in row["protocols"].items() for seed, acc in entry["seeds"].items() if acc is not None}


def test_there_are_committed_runs_to_check():
    assert RUNS, "no committed run with a per-architecture report under results/"


def _stage(label: str) -> bool:
    """An LR-search or tuning run: reported by the search and tuning sections, not per architecture."""
    return label.startswith(("lr-search:", "tune:"))


@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_a_committed_report_is_recomputable_from_its_committed_store(run, tmp_path):
    everything = finished_jobs(run / "store.sqlite.gz", tmp_path)
    stored = {k: acc for k, acc in everything.items() if not _stage(k[1])}
    assert (run / "report.json").exists(), f"{run.name}: store.sqlite.gz without report.json; run `nasrescale report {run.name}`"
    report = json.loads((run / "report.json").read_text())
    reported = reported_accuracies(report)
    tuned = tuning_runs(everything, first_grid(tmp_path / "store.sqlite"))
    means = {(arm, float(m)): v for arm, t in (report.get("tuning") or {}).items() for m, v in t["means"].items()}
    assert set(means) == set(tuned), f"{run.name}: the tuning in report.json is not the store's; report again"
    for key, accs in tuned.items():
        assert means[key] == pytest.approx(sum(accs) / len(accs), abs=1e-9), key
    missing = sorted(set(reported) - set(stored))
    assert not missing, (f"{run.name}: report.json lists {len(missing)} runs the committed store does not hold "
                         f"(e.g. {missing[0]}); pack the store after the last job (tools/pack_store.py) and report again")
    unreported = sorted(set(stored) - set(reported))
    assert not unreported, f"{run.name}: {len(unreported)} finished runs are not in report.json; report again"
    for key, acc in reported.items():
        assert acc == pytest.approx(stored[key], abs=0.006), key


#: committed landscape runs: their report.json records the plan settings it was written under
LANDSCAPES = sorted(p.parent for p in RESULTS.glob("*/store.sqlite.gz")
                    if (p.parent / "report.json").exists()
                    and "settings" in json.loads((p.parent / "report.json").read_text()))


@pytest.mark.parametrize("run", LANDSCAPES, ids=lambda p: p.name)
def test_landscape_report_settings_are_the_committed_stores(run: Path, tmp_path: Path) -> None:
    """A landscape's analysis-only settings (its ``recipe`` and ``criterion`` arms, ...) live in
    its stored plan, refreshed by each ``run``: a report written from a refreshed live store and
    committed beside an older pack would lose those arms when regenerated from the pack."""
    rows = query(run / "store.sqlite.gz", tmp_path, "SELECT value FROM meta WHERE key = 'landscape_plan'")
    assert rows, f"{run.name}: its committed store holds no landscape plan"
    stored = json.loads(rows[0][0])["settings"]
    reported = json.loads((run / "report.json").read_text())["settings"]
    analysis = [k for k in ANALYSIS_SETTINGS if k in reported]
    assert analysis, f"{run.name}: its report.json names none of {ANALYSIS_SETTINGS}"
    assert {k: stored.get(k) for k in analysis} == {k: reported[k] for k in analysis}, \
        f"{run.name}: report.json was written under other settings than its store.sqlite.gz holds: repack it"
