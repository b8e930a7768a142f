"""report.md on synthetic stores with the pipeline's schema (partial, failed, diverged, degenerate)."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from nasrescale.cli.main import main
from nasrescale.ranking.compare import compare
from nasrescale.report.report import protocol_order, reference_spec, write_report
from nasrescale.ranking.sources import load_source
from nasrescale.store.read import read_store

from rank_store_builder import build_store

PNG = b"\x89PNG\r\n\x1a\n"


def _images(report: Path) -> list[Path]:
    names = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", report.read_text())
    return [report.parent / n for n in names]


def test_report_two_protocols(tmp_path):
    run, _ = build_store(tmp_path / "syn", n_archs=16, seeds=(0, 1))
    report = write_report(run.parent, n_boot=50)
    text = report.read_text()
    assert report == run.parent / "report.md"
    images = _images(report)
    names = {p.name for p in images}
    assert {"scatter_default_vs_rescaled.png", "topk_default_vs_rescaled.png", "gain_default_vs_rescaled.png",
            "reference_scatter.png", "reference_topk.png", "gaps.png", "curves.png"} <= names
    for image in images:
        assert image.read_bytes()[:8] == PNG
        assert image.stat().st_size > 5000
    assert "## rescaled vs default" in text
    assert "## Against the benchmark (nb201:cifar10)" in text
    assert "RuntimeError: boom" in text  # the failed job's error
    numbers = json.loads((run.parent / "report.json").read_text())
    expected, _ = compare(load_source("syn:default", results=tmp_path), load_source("syn:rescaled", results=tmp_path),
                          n_boot=50)
    got = numbers["pairs"]["rescaled vs default"]
    assert got["kendall_tau"] == pytest.approx(expected["kendall_tau"])
    assert got["counts"] == expected["counts"]
    assert got["counts"]["degenerate"] == 1
    assert f"| {expected['kendall_tau']:.3f} |" in text  # the table shows the computed value
    assert set(numbers["reference"]) == {"default", "rescaled"}


def test_report_three_protocols_compares_each_pair(tmp_path):
    run, _ = build_store(tmp_path / "three", n_archs=8, seeds=(0,), protocols=("default", "rescaled", "halfdepth"))
    text = write_report(run.parent, n_boot=20).read_text()
    for header in ("## rescaled vs default", "## halfdepth vs default", "## halfdepth vs rescaled"):
        assert header in text


def test_report_partial_run_and_odd_metadata(tmp_path):
    run, _ = build_store(tmp_path / "odd", n_archs=6, seeds=(0,), pipeline={"something": "else"})
    conn = sqlite3.connect(run)
    conn.execute("UPDATE jobs SET status='pending', test_accuracy=NULL WHERE protocol='rescaled'")
    conn.execute("DELETE FROM meta WHERE key='name'")
    conn.commit()
    conn.close()
    text = write_report(run.parent, n_boot=20).read_text()
    assert "# Report: odd" in text
    assert "No architecture has a finished run under both protocols yet." in text
    assert "The pipeline names no reference." in text
    assert "curves.png" in text
    for image in _images(run.parent / "report.md"):
        assert image.is_file()


def test_reference_spec_reads_what_is_there():
    assert reference_spec({"reference": "nb201:cifar100"}) == ("nb201:cifar100", None)
    assert reference_spec({"reference": "ImageNet16-120"}) == ("nb201:imagenet16_120", None)
    assert reference_spec({"reference": "none", "dataset": "cifar10"}) == (None, None)
    assert reference_spec({"reference": {"kind": "nats", "dataset": "cifar10", "path": "/b"}}) == ("nats:cifar10", "/b")
    assert reference_spec({"data": {"name": "imagenet16-120"}}) == ("nb201:imagenet16_120", None)
    assert reference_spec({"family": "mlp_dag", "dataset": "cifar10"}) == (None, None)
    assert reference_spec({}) == (None, None)


def test_protocol_order_puts_the_baseline_first(tmp_path):
    run, _ = build_store(tmp_path / "order", n_archs=6, seeds=(0,), protocols=("rescaled", "default"))
    assert protocol_order(read_store(run)) == ["default", "rescaled"]


def test_report_cli(tmp_path, capsys):
    build_store(tmp_path / "cli", n_archs=6, seeds=(0,))
    assert main(["report", "cli", "--results", str(tmp_path), "--bootstrap", "10"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"wrote {tmp_path / 'cli' / 'report.md'}",
                                                    f"wrote {tmp_path / 'README.md'}"]  # the results index
    assert "## cli" in (tmp_path / "README.md").read_text()
    assert "## Provenance" in (tmp_path / "cli" / "report.md").read_text()
    assert main(["report", "--index", "--results", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {tmp_path / 'README.md'}"
    assert main(["report", "--results", str(tmp_path)]) == 2
    assert "--index" in capsys.readouterr().err
    assert main(["report", "missing", "--results", str(tmp_path)]) == 2
    assert "no result store" in capsys.readouterr().err


def test_report_by_pipeline_file(tmp_path, capsys, monkeypatch):
    build_store(tmp_path / "results" / "named", n_archs=6, seeds=(0,))
    toml = tmp_path / "my_pipeline.toml"
    toml.write_text('[pipeline]\nname = "named"\n')
    monkeypatch.chdir(tmp_path)  # default results folder: ./results
    assert main(["report", str(toml), "--bootstrap", "0"]) == 0
    assert (tmp_path / "results" / "named" / "report.md").is_file()
    assert main(["rank", f"{toml}:default", "named:rescaled", "--bootstrap", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.splitlines()[-1])
    expected, _ = compare(load_source("named:default"), load_source("named:rescaled"), n_boot=0)
    assert out["n"] == expected["n"] > 0
    assert out["a"] == "named:default"


def test_ranking_text_for_the_end_of_a_run(tmp_path):
    run, _ = build_store(tmp_path / "txt", n_archs=8, seeds=(0, 1))
    from nasrescale.report.report import ranking_text

    text = ranking_text(run.parent, n_boot=0)
    expected, _ = compare(load_source("txt:default", results=tmp_path), load_source("txt:rescaled", results=tmp_path),
                          n_boot=0)
    assert "A = default    B = rescaled" in text
    assert f"{'Kendall tau-b':<22}{expected['kendall_tau']:>10.3f}" in text
    assert "rescaled vs nb201:cifar10: n 8" in text


def test_rank_and_report_leave_the_store_untouched(tmp_path, capsys):
    run, _ = build_store(tmp_path / "ro", n_archs=6, seeds=(0,))
    before = run.read_bytes()
    assert main(["rank", "ro:default", "ro:rescaled", "--results", str(tmp_path), "--bootstrap", "0"]) == 0
    write_report(run.parent, n_boot=0)
    # SQLite may create the WAL index files for a reader of a WAL database; nothing is written
    assert run.read_bytes() == before
    wal = run.with_name("store.sqlite-wal")
    assert not wal.exists() or wal.stat().st_size == 0


def test_training_curves_are_labelled_with_role_and_arch_and_mapped_in_report_json(tmp_path, monkeypatch):
    import nasrescale.report.plots as plots

    run, truth = build_store(tmp_path / "curves", n_archs=10, seeds=(0,))
    seen = {}
    real = plots.curves_plot
    monkeypatch.setattr(plots, "curves_plot", lambda curves, names, path: seen.update(names) or real(curves, names, path))
    write_report(run.parent, n_boot=0)
    mapped = json.loads((run.parent / "report.json").read_text())["curves"]
    roles = {e["role"]: e["arch"] for e in mapped if e["role"] != "diverged"}
    assert set(roles) == {"best", "median", "worst"}
    means = {a: sum(v) / len(v) for a, v in truth["rescaled"].items() if a in roles.values()}
    assert means[roles["best"]] == max(means.values())
    assert means[roles["worst"]] == min(means.values())
    for entry in mapped:  # the legend drawn names the role and the whole arch string
        assert seen[entry["key"]] == entry["legend"]
        assert entry["legend"].startswith(f"{entry['role']}: {entry['arch']} / {entry['protocol']} / seed ")


def test_report_states_its_budget_and_what_it_cannot_show(tmp_path):
    pipeline = {"pipeline": {"name": "budget", "family": "nb201", "seeds": [0], "reference": "nb201:cifar10"},
                "data": {"name": "cifar10-subset"}, "budget": {"epochs": 4, "width": 8, "cells": 1,
                                                               "train_subset": 2000, "test_subset": 500},
                "protocols": {"default": {"source": "nb201", "lr": 0.1, "lr_rule": "fixed", "init": "default"},
                              "rescaled": {"source": "rescaled", "lr": 0.46, "lr_rule": "path_depth",
                                           "init": "in_degree"}}}
    run, _ = build_store(tmp_path / "budget", n_archs=8, seeds=(0,), pipeline=pipeline)
    text = write_report(run.parent, n_boot=0).read_text()
    for row in ("| epochs | 4 |", "| width (C) | 8 |", "| cells per stage (N) | 1 |", "| seeds | 0 |",
                "| images | train 2000, test 500 images |",
                "| learning rates | default: LR 0.1 (fixed); rescaled: base LR 0.46 (path_depth) |"):
        assert row in text, row
    assert "What this budget cannot show" in text
    assert "4 epochs, not the benchmark's 200" in text
    assert "one seed" in text
    assert "it says nothing about whether one protocol" in text
    budget = json.loads((run.parent / "report.json").read_text())["budget"]
    assert budget["epochs"] == 4
    assert len(budget["limits"]) == 5


def _captured_figures(monkeypatch) -> list:
    import nasrescale.report.plots as plots

    figures = []
    real = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, path: figures.append((Path(path).name, fig)) or real(fig, path))
    return figures


def test_runs_far_below_the_benchmark_are_plotted_by_rank(tmp_path, monkeypatch):
    run, _ = build_store(tmp_path / "low", n_archs=12, seeds=(0,))
    with sqlite3.connect(run) as conn:  # a short run: 20-30 % where the benchmark has 85-95 %
        conn.execute("UPDATE jobs SET test_accuracy = test_accuracy - 62 WHERE degenerate = 0")
    captured = _captured_figures(monkeypatch)
    write_report(run.parent, n_boot=0)
    figures = dict(captured)
    scatter, gaps = figures["reference_scatter.png"].axes[0], figures["gaps.png"].axes[0]
    assert "rank" in scatter.get_xlabel()
    assert "rank" in scatter.get_ylabel()
    assert "rank change" in gaps.get_xlabel()


def test_runs_on_the_benchmark_scale_keep_accuracy_axes(tmp_path, monkeypatch):
    run, _ = build_store(tmp_path / "near", n_archs=12, seeds=(0,))
    captured = _captured_figures(monkeypatch)
    write_report(run.parent, n_boot=0)
    figures = dict(captured)
    assert "accuracy (%)" in figures["reference_scatter.png"].axes[0].get_xlabel()
    assert "accuracy difference" in figures["gaps.png"].axes[0].get_xlabel()
