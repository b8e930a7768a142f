"""The cell-structure interface leaves today's families alone: the stored keys of committed NB201
jobs are recomputed from their stored definitions, and the families' digests are pinned."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from nasrescale.jobs.job import DataSpec, TrainJob
from nasrescale.protocol import Protocol
from nasrescale.space.family_loader import get_family

STORE = Path(__file__).resolve().parents[2] / "results" / "nb201_cifar10_cpu" / "store.sqlite.gz"

#: digests of the shipped families before cell structures existed (they enter every job key)
DIGESTS = {"nb201": "c7a98db61193514a", "mlp_dag": "1b64b1934a7066ef", "cnn_dag": "13740dcaefafcda0",
           "mlp_chain": "3bb0b93330bafdf0"}


def _stored_jobs(tmp_path: Path, limit: int = 6) -> list[tuple[str, dict]]:
    db = tmp_path / "store.sqlite"
    with gzip.open(STORE, "rb") as src, db.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT key, job_json FROM jobs WHERE job_json IS NOT NULL ORDER BY key LIMIT ?",
                            (limit,)).fetchall()
    finally:
        conn.close()
    return [(key, json.loads(text)) for key, text in rows]


@pytest.mark.skipif(not STORE.exists(), reason="committed NB201 store not present")
def test_stored_nb201_job_keys_are_unchanged(tmp_path):
    jobs = _stored_jobs(tmp_path)
    assert len(jobs) == 6
    family = get_family("nb201")
    for key, doc in jobs:
        assert doc["family_digest"] == family.digest()
        job = TrainJob.from_arch(doc["arch"], family, DataSpec(**doc["data"]), Protocol(**doc["protocol"]), doc["seed"],
                       width=doc["width"], cells=doc["cells"])
        assert job.key() == key, doc["arch"]


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_shipped_family_digests_are_pinned(name):
    assert get_family(name).digest() == DIGESTS[name]
