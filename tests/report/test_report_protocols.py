"""The report of a run of several protocols (synthetic store): Kendall tau between every pair of
protocols in one matrix, and ELR spread per protocol against accuracy."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from nasrescale.ranking.compare import compare
from nasrescale.ranking.rank import kendall_tau
from nasrescale.ranking.sources import load_source
from nasrescale.kinds.retrain.elr_section import run_spreads
from nasrescale.kinds.retrain.write import write_report
from nasrescale.store.read import read_store

from rank_store_builder import DEGENERATE, build_store, spread_of

PROTOCOLS = ("default", "rescaled", "mup", "spectral", "elr_warmup")
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reports") / "five"
    run, truth = build_store(folder, n_archs=10, seeds=(0, 1), protocols=PROTOCOLS, elr=True)
    path = write_report(run.parent, n_boot=0)
    return path, json.loads((run.parent / "report.json").read_text()), truth, folder


def test_the_tau_matrix_holds_every_pair_and_the_seed_noise(report):
    path, numbers, _, folder = report
    matrix = numbers["tau_matrix"]
    labels = matrix["labels"]
    assert labels[:5] == list(PROTOCOLS) and labels[5] == "nb201:cifar10"
    tau = pd.DataFrame(matrix["kendall_tau"], index=labels, columns=labels, dtype=float)
    for i, a in enumerate(PROTOCOLS):
        for b in PROTOCOLS[i + 1:]:
            expected = compare(load_source(f"{folder}:{a}"), load_source(f"{folder}:{b}"), n_boot=0)[0]
            assert tau.loc[a, b] == tau.loc[b, a] == pytest.approx(expected["kendall_tau"]), (a, b)
        noise = compare(load_source(f"{folder}:{a}"), load_source(f"{folder}:{a}"), n_boot=0)[0]["seed_noise"]["a"]
        assert tau.loc[a, a] == pytest.approx(noise["kendall_tau"])
        ref = compare(load_source("nb201:cifar10"), load_source(f"{folder}:{a}"), n_boot=0)[0]
        assert tau.loc[a, "nb201:cifar10"] == pytest.approx(ref["kendall_tau"])
    text = path.read_text()
    section = text.split("## Rank agreement between protocols")[1].split("\n## ")[0]
    header = next(line for line in section.splitlines() if line.startswith("|  |"))
    assert header == "|  | " + " | ".join(labels) + " |"
    assert "![Kendall tau between protocols](tau_matrix.png)" in section
    pair_n = [v for i, row in enumerate(matrix["n"]) for j, v in enumerate(row) if i != j]  # the diagonal holds none
    assert f"(n from {min(pair_n)} to {max(pair_n)})" in section and min(pair_n) > 0
    assert (path.parent / "tau_matrix.png").read_bytes()[:8] == PNG
    assert text.index("## Rank agreement between protocols") < text.index("## rescaled vs default")


def test_elr_spread_per_protocol_against_accuracy(report):
    path, numbers, truth, folder = report
    runs = run_spreads(read_store(folder / "store.sqlite"), list(PROTOCOLS))
    for index, label in enumerate(PROTOCOLS):
        accuracies = [a for arch, accs in truth[label].items() if arch != DEGENERATE for a in accs]
        mine = runs[runs["protocol"] == label]
        assert sorted(mine["accuracy"]) == pytest.approx(sorted(accuracies))
        assert sorted(mine["spread"]) == pytest.approx(sorted(spread_of(a, index) for a in accuracies))
        per_arch = {arch: np.mean(accs) for arch, accs in truth[label].items() if arch != DEGENERATE}
        spread = pd.Series({arch: np.mean([spread_of(a, index) for a in truth[label][arch]]) for arch in per_arch})
        expected = kendall_tau(spread, pd.Series(per_arch))
        entry = numbers["elr"][label]
        assert entry["runs"] == len(accuracies)
        assert entry["kendall_tau_spread_accuracy"] == pytest.approx(expected) == -1.0  # spread falls as accuracy rises
    section = path.read_text().split("## Effective learning rates")[1].split("\n## ")[0]
    rows = [line for line in section.splitlines() if re.match(r"\| (default|rescaled|mup|spectral|elr_warmup) \|", line)]
    assert len(rows) == 5
    assert (path.parent / "elr_spread.png").read_bytes()[:8] == PNG


def test_runs_without_elrs_and_two_protocols_add_neither_section(tmp_path):
    run, _ = build_store(tmp_path / "two", n_archs=8, seeds=(0,))
    text = write_report(run.parent, n_boot=0).read_text()
    assert "## Rank agreement between protocols" not in text  # one pair: its own section says it
    assert "## Effective learning rates" not in text


def test_the_claims_read_the_baseline_against_the_path_depth_protocol(tmp_path):
    """With protocols listed in any order (a saved pipeline's keys come back sorted), the claims
    section compares the baseline with the paper's rescaled protocol (LR rule path_depth)."""
    labels = ("default", "elr_warmup", "rescaled")
    rules = {"default": "fixed", "elr_warmup": "fixed", "rescaled": "path_depth"}
    pipeline = {"pipeline": {"name": "three", "family": "nb201", "seeds": [0, 1], "reference": "nb201:cifar10"},
                "data": {"name": "cifar10-subset", "path": None, "test_split": None},
                "protocols": {p: {"source": p, "lr_rule": rules[p]} for p in labels}}
    run, _ = build_store(tmp_path / "three", n_archs=8, protocols=labels, pipeline=pipeline)
    text = write_report(run.parent, n_boot=0).read_text()
    claims = text.split("## What this budget can say about the paper's claims")[1].split("\n## ")[0]
    assert "A = default, B = rescaled;" in claims
    assert text.index("## elr_warmup vs default") < text.index("## rescaled vs default")  # the pairs keep their order
