"""Every stored job reruns from one command: ``nasrescale status --commands`` (and ``export``'s
``train_command`` column) print the ``nasrescale train`` command of each job, which trains it
under the same key and, on the same machine, to the same record."""

from __future__ import annotations

import csv
import json
import shlex
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from nasrescale.cli.main import build_parser
from nasrescale.cli.train_cmd import train_job
from nasrescale.config import parse_override
from nasrescale.pipeline.files import pipeline_names
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.store.reproduce import not_rerunnable, toml_literal, train_command

from pipeline_helpers import cli, one_thread, private_cache, tiny_pipeline  # noqa: F401  (fixtures, used by name)

#: record fields that say when, where and how fast a run went, not what it computed
_CIRCUMSTANCES = {"wall_time_s", "images_per_s", "provenance", "device", "run_key", "protocol", "resumed_from",
                 "checkpoint_discarded"}


def _job_of(words: list[str]):
    """The job ``nasrescale train`` builds from a printed command (words after ``nasrescale``)."""
    return train_job(build_parser().parse_args(words))


_LEAVES = st.one_of(st.booleans(), st.integers(-2**63, 2**63 - 1), st.floats(allow_nan=False), st.text(max_size=20))


@settings(max_examples=200, deadline=None)
@given(st.recursive(_LEAVES, lambda inner: st.lists(inner, max_size=3), max_leaves=6))
def test_fuzz_toml_literal_reads_back_through_set(value):
    """A literal of every JSON-like value reads back through ``--set`` equal, floats exactly."""
    assert parse_override(f"k={toml_literal(value)}")[1] == value


def test_a_stored_job_reruns_from_its_printed_command(capsys, tmp_path):
    text = tiny_pipeline("again", archs=["3_11_111"]).replace("test_subset = 100", "test_subset = 100\nresolution = 16")
    (tmp_path / "again.toml").write_text(text)
    results = str(tmp_path / "res")
    code, _, err = cli(capsys, "run", str(tmp_path / "again.toml"), "--results", results, "--quiet")
    assert code == 0, err
    code, out, err = cli(capsys, "status", "again", "--results", results, "--commands")
    assert code == 0, err
    lines = out.splitlines()
    store = sqlite3.connect(tmp_path / "res" / "again" / "store.sqlite")
    stored = {k: json.loads(r) for k, r in store.execute("SELECT key, record_json FROM jobs")}
    assert len(lines) == 2 * len(stored) == 4
    for comment, command in zip(lines[::2], lines[1::2]):
        key = comment.split()[1].rstrip(":")
        words = shlex.split(command)
        assert words[:2] == ["nasrescale", "train"] and "--resolution" in words
        assert _job_of(words[1:]).key() == key
    key = next(k for k, r in stored.items() if r["protocol"] == "rescaled")
    words = shlex.split(lines[lines.index(next(c for c in lines if c.startswith(f"# {key}"))) + 1])
    code, _, err = cli(capsys, *words[1:], "--out", str(tmp_path / "again.json"), "--quiet")
    assert code == 0, err
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["run_key"] == key and again["history"]
    assert {k: v for k, v in again.items() if k not in _CIRCUMSTANCES} == \
        {k: v for k, v in stored[key].items() if k not in _CIRCUMSTANCES}
    code, _, err = cli(capsys, "export", "again", "--results", results, "--out", str(tmp_path / "again.csv"))
    assert code == 0, err
    with open(tmp_path / "again.csv", newline="") as f:
        exported = {row["key"]: row["train_command"] for row in csv.DictReader(f)}
    assert exported[key] == lines[lines.index(f"# {key}: {stored[key]['arch']}, rescaled, seed 0, done") + 1]


@pytest.mark.parametrize("name", pipeline_names())
def test_every_shipped_pipelines_jobs_have_a_command_of_the_same_key(name):
    """No training: the command of each protocol's first jobs builds a job of the stored key."""
    pipeline = load_pipeline(name)
    pipeline = pipeline.with_base_lrs({e.label: 0.05 for e in pipeline.protocols if e.search})
    resolved = pipeline.resolved([])
    landscape = dict(pipeline.own).get("landscape")  # the kind's own table, where it has one
    # a landscape centred per cell plans only its own cells; every other kind plans any cell, the base here
    archs = pipeline.arch_list()[:1] if landscape is not None and landscape.centers else [pipeline.family().base]
    jobs = pipeline.kind.plan(pipeline, archs)[0]
    firsts = {job.label: job for job in reversed(jobs)}
    for job in firsts.values():
        words = train_command(job.to_json(), resolved)
        if not_rerunnable(job.to_json(), resolved):  # a kernel variant: train has no option for it
            assert name.startswith("lr_validation_cnn") and "@k3" not in job.label
            continue
        assert _job_of(words[1:]).key() == job.key(), shlex.join(words)
