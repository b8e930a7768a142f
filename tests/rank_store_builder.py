"""Builds synthetic result stores with the pipeline's SQLite schema, for the rank/report tests.

Not a test module (no ``test_`` prefix); tests load it with :func:`load_builder`.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np

from nasrescale.space.benchmark import benchmark_table

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE jobs(key TEXT PRIMARY KEY, arch TEXT, protocol TEXT, seed INTEGER, status TEXT,
     attempts INTEGER, error TEXT, degenerate INTEGER, test_accuracy REAL, test_loss REAL,
     train_loss_last REAL, lr REAL, lr_scale REAL, epochs INTEGER, wall_time_s REAL,
     job_json TEXT, record_json TEXT, updated_at TEXT);
CREATE TABLE curves(key TEXT, epoch INTEGER, train_loss REAL, train_acc REAL, lr REAL, PRIMARY KEY(key, epoch));
"""

DEGENERATE = "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"


def build_store(folder: Path, *, n_archs: int = 24, seeds=(0, 1), protocols=("default", "rescaled"),
                pipeline: dict | None = None, seed: int = 0, epochs: int = 4, elr: bool = False) -> tuple[Path, dict]:
    """Write ``folder/store.sqlite``: ``n_archs`` NB201 cells (one degenerate) x protocols x
    seeds. Accuracies follow the benchmark's CIFAR-10 value plus seed noise; each further
    protocol adds +1 point. Also one pending, one running, one failed and one diverged job.
    With ``elr``, each done run's history holds an ``elr_spread`` per epoch whose mean is
    ``spread_of(accuracy, protocol index)`` (falling with accuracy).

    Returns the store path and the truth: ``{protocol: {arch: [accuracies of done runs]}}``.
    """
    rng = np.random.default_rng(seed)
    table = benchmark_table()
    live = table[table["cifar10"] > 50].sample(n_archs - 1, random_state=seed)
    archs = [DEGENERATE] + live["arch"].tolist()
    bench = dict(zip(table["arch"], table["cifar10"]))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "store.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.execute("PRAGMA journal_mode=WAL")
    pipeline = pipeline if pipeline is not None else {  # the shape nasrescale.pipeline.spec saves
        "pipeline": {"name": folder.name, "family": "nb201", "seeds": list(seeds), "reference": "nb201:cifar10"},
        "data": {"name": "cifar10-subset", "path": None, "test_split": None},
        "protocols": {p: {"source": p} for p in protocols}}
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [("pipeline", json.dumps(pipeline)), ("name", folder.name),
                                                       ("created_at", "2026-01-01T00:00:00Z")])
    truth: dict = {p: {} for p in protocols}
    special = {(archs[1], protocols[-1], seeds[0]): "diverged", (archs[2], protocols[0], seeds[-1]): "failed",
               (archs[3], protocols[-1], seeds[-1]): "pending", (archs[4], protocols[0], seeds[0]): "running"}
    for i, arch in enumerate(archs):
        scale = float(rng.uniform(0.1, 1.0))
        for p_index, protocol in enumerate(protocols):
            for s in seeds:
                key = f"{i:03d}{p_index}{s}".ljust(16, "0")
                status = special.get((arch, protocol, s), "done")
                degenerate = arch == DEGENERATE
                acc = None
                if status == "done":
                    acc = 10.0 if degenerate else float(bench[arch] - 5 + p_index + rng.normal(0, 0.7))
                    truth[protocol].setdefault(arch, []).append(acc)
                lr = 0.1 * (scale if p_index else 1.0)
                record = {"arch": arch, "protocol": protocol, "seed": s, "num_classes": 10, "test_accuracy": acc}
                if elr and acc is not None:
                    mean = spread_of(acc, p_index)
                    record["history"] = [{"epoch": e + 1, "elr_spread": mean + 0.01 * (e - (epochs - 1) / 2)}
                                         for e in range(epochs)]
                conn.execute(
                    "INSERT INTO jobs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (key, arch, protocol, s, status, 1, "RuntimeError: boom" if status == "failed" else None,
                     int(degenerate), acc, 0.5 if acc else None, 0.4 if acc else None, lr,
                     scale if p_index else 1.0, epochs, 12.5 if acc else None, "{}", json.dumps(record),
                     "2026-01-01T00:00:00Z"))
                if status in ("done", "diverged") and not degenerate:
                    rate = 0.2 + 0.4 * (acc or 50.0) / 100 + 0.05 * s  # a different curve per job
                    for e in range(epochs if status == "done" else 2):
                        loss = 2.3 * np.exp(-rate * e) if status == "done" else [2.3, float("nan")][e]
                        conn.execute("INSERT INTO curves VALUES (?,?,?,?,?)",
                                     (key, e + 1, loss, 100 * (1 - 0.85 * np.exp(-rate * (e + 1))),
                                      lr * 0.5 * (1 + np.cos(np.pi * e / epochs))))
    conn.commit()
    conn.close()
    return path, truth


def spread_of(accuracy: float, protocol_index: int) -> float:
    """The mean ELR spread ``build_store(elr=True)`` gives a run."""
    return 3.0 - accuracy / 50 + 0.2 * protocol_index


def load_builder():
    return build_store
