"""report.md on synthetic stores with the pipeline's schema (partial, failed, diverged, degenerate)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
from pathlib import Path

import pytest

from nasrescale.cli.main import main
from nasrescale.ranking.compare import compare
from nasrescale.report.common.reference import protocol_order, reference_spec
from nasrescale.kinds.retrain.write import write_report
from nasrescale.ranking.sources import load_source
from nasrescale.store.migration import parse_record
from nasrescale.store.read import read_store

from rank_store_builder import DEGENERATE, build_store

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
    def spec_of(pipeline: dict) -> tuple:  # a stored pipeline, former spellings migrated
        return reference_spec(parse_record({"pipeline": pipeline}))

    assert spec_of({"reference": "nb201:cifar100"}) == ("nb201:cifar100", None)
    assert spec_of({"reference": "ImageNet16-120"}) == ("nb201:imagenet16-120", None)
    assert spec_of({"reference": "none", "dataset": "cifar10"}) == (None, None)
    assert spec_of({"reference": {"kind": "nats", "dataset": "cifar10", "path": "/b"}}) == ("nats:cifar10", "/b")
    assert spec_of({"data": {"name": "imagenet16-120"}}) == ("nb201:imagenet16-120", None)
    assert spec_of({"family": "mlp_dag", "dataset": "cifar10"}) == (None, None)
    assert spec_of({}) == (None, None)


def test_protocol_order_puts_the_baseline_first(tmp_path):
    run, _ = build_store(tmp_path / "order", n_archs=6, seeds=(0,), protocols=("rescaled", "default"))
    assert protocol_order(read_store(run)) == ["default", "rescaled"]


def test_report_cli(tmp_path, capsys):
    build_store(tmp_path / "cli", n_archs=6, seeds=(0,))
    assert main(["report", "cli", "--results", str(tmp_path), "--bootstrap", "10"]) == 0
    # a local run: its report, and the results index left as it is (it lists committed runs only)
    assert capsys.readouterr().out.splitlines() == [f"wrote {tmp_path / 'cli' / 'report.md'}"]
    assert not (tmp_path / "README.md").exists()
    assert "## Provenance" in (tmp_path / "cli" / "report.md").read_text()
    assert main(["report", "--index", "--results", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {tmp_path / 'README.md'}"
    assert "## cli" not in (tmp_path / "README.md").read_text()
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
    from nasrescale.kinds.retrain.write import ranking_text

    text = ranking_text(run.parent, n_boot=0)
    expected, _ = compare(load_source("txt:default", results=tmp_path), load_source("txt:rescaled", results=tmp_path),
                          n_boot=0)
    assert "A = default    B = rescaled" in text
    assert f"{'Kendall tau-b':<22}{expected['kendall_tau']:>10.3f}" in text
    assert "rescaled vs nb201:cifar10: n 7, " in text  # 8 matched, the degenerate cell left out
    assert text.endswith("(1 degenerate left out)")


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
    import nasrescale.kinds.retrain.plots as plots

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
    short = {row["arch"]: row["short"] for row in json.loads((run.parent / "report.json").read_text())["archs"]}
    for entry in mapped:  # the legend names the role, the protocol that ranked it, the arch and its own rank
        assert seen[entry["key"]] == entry["legend"]
        if entry["role"] == "diverged":
            continue
        own = {a: sum(v) / len(v) for a, v in truth[entry["protocol"]].items() if a != DEGENERATE}
        place = 1 + sum(m > own[entry["arch"]] for m in own.values())
        assert entry["legend"] == (f"{entry['role']} by rescaled: {short[entry['arch']]} / {entry['protocol']} "
                                   f"(rank {place} of {len(own)} under {entry['protocol']}) / seed {entry['seed']}")
        assert "|" not in entry["legend"]


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
    import nasrescale.kinds.retrain.plots as plots

    figures = []
    real = plots.save_png
    monkeypatch.setattr(plots, "save_png", lambda fig, path: figures.append((Path(path).name, fig)) or real(fig, path))
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


def test_a_newcomer_reads_what_a_and_b_are_and_a_table_per_architecture(tmp_path):
    old = os.umask(0o022)
    try:
        run, truth = build_store(tmp_path / "page", n_archs=10, seeds=(0, 1))
        text = write_report(run.parent, n_boot=0).read_text()
    finally:
        os.umask(old)
    assert "A = default, B = rescaled: every difference is B - A" in text
    assert "Here A = the reference nb201:cifar10 and B = each protocol" in text
    numbers = json.loads((run.parent / "report.json").read_text())
    pair = numbers["pairs"]["rescaled vs default"]
    assert (pair["n"], pair["counts"]["matched"], pair["counts"]["degenerate_excluded"]) == (9, 10, 1)
    assert "Statistics leave out 1 degenerate cell" in text
    assert "`nasrescale report page --include-degenerate` counts it" in text
    assert "## Accuracy gaps (9 architectures)" in text
    assert ("9 architectures: those with a finished run under every protocol and an accuracy in nb201:cifar10; "
            "1 degenerate") in text
    table = text.split("## Per architecture")[1].split("\n## ")[0]
    head = [ln for ln in table.splitlines() if ln.startswith("| architecture")][0]
    assert head == ("| architecture | default s0 | default s1 | default mean | default LR | rescaled s0 | rescaled s1 | "
                    "rescaled mean | rescaled LR | nb201:cifar10 |")
    rows = {r["arch"]: r for r in numbers["archs"]}
    assert set(rows) == set(truth["default"]) | set(truth["rescaled"])
    for arch, accs in truth["default"].items():  # seed 0 first where it finished
        assert rows[arch]["protocols"]["default"]["seeds"].get(0) in (None, *accs)
    assert rows[DEGENERATE]["short"] == "0_00_000" and rows[DEGENERATE]["degenerate"]
    assert table.rstrip().splitlines()[-1].startswith("| `0_00_000` (degenerate) | 10.00 |")  # last
    assert all(len(r["short"]) == 8 for r in rows.values())  # the digit form, not 90-character strings
    assert "0 none, 1 skip_connect, 2 nor_conv_1x1, 3 nor_conv_3x3, 4 avg_pool_3x3" in table
    for name in ("report.md", "report.json", "gaps.png"):
        assert stat.S_IMODE((run.parent / name).stat().st_mode) == 0o644, name


def test_report_include_degenerate_counts_the_cell_everywhere(tmp_path, capsys):
    build_store(tmp_path / "all", n_archs=8, seeds=(0,))
    assert main(["report", "all", "--results", str(tmp_path), "--bootstrap", "0", "--include-degenerate"]) == 0
    capsys.readouterr()
    text = (tmp_path / "all" / "report.md").read_text()
    numbers = json.loads((tmp_path / "all" / "report.json").read_text())
    assert numbers["include_degenerate"] is True
    assert numbers["pairs"]["rescaled vs default"]["n"] == numbers["pairs"]["rescaled vs default"]["counts"]["matched"]
    assert all(r["counts"]["degenerate_excluded"] == 0 for r in numbers["reference"].values())
    assert "Statistics count 1 degenerate cell" in text
    assert "degenerate cells are counted in every statistic" in text
    gaps = text.split("## Accuracy gaps")[1].split("![")[0]
    assert gaps.startswith(" (5 architectures)")  # 8 less 3 with a failed, pending or running job; none left out
    assert "3 lack a finished run under some protocol." in gaps and "degenerate" not in gaps


def test_the_gap_figure_keeps_its_legends_off_the_bars_and_counts_whole_architectures():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from nasrescale.kinds.retrain.plots import gap_figure

    accs = {"default": [80.0, 82.0, 85.0], "rescaled": [81.0, 82.5, 84.0]}
    fig = gap_figure(accs, {"rescaled - default": [1.0, 0.5, -1.0]})
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    for ax in fig.axes:
        legend = ax.get_legend().get_window_extent(renderer)
        assert not legend.overlaps(ax.get_window_extent(renderer))  # below the axes, never over a bar
    left = fig.axes[0]
    ticks = [t for t in left.get_yticks() if left.get_ylim()[0] <= t <= left.get_ylim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks)


def test_a_searched_base_lr_is_stated_linked_and_not_counted_as_an_architecture(tmp_path):
    pipeline = {"pipeline": {"name": "found", "family": "nb201", "seeds": [0], "reference": "nb201:cifar10"},
                "data": {"name": "cifar10-subset"}, "budget": {"epochs": 4},
                "protocols": {"default": {"source": "nb201", "lr": 0.1, "lr_rule": "fixed", "init": "default"},
                              "rescaled": {"source": "rescaled", "lr": 0.1, "lr_rule": "path_depth",
                                           "init": "in_degree", "base_lr": "search"}}}
    run, _ = build_store(tmp_path / "found", n_archs=8, seeds=(0,), pipeline=pipeline)
    base = "|skip_connect~0|+|none~0|skip_connect~1|+|none~0|none~1|skip_connect~2|"
    selection = {"chosen_lr": 0.965489, "rule": "argmin", "arch": base, "grid": [0.1, 0.965489, 3.0],
                 "rule_text": ["rule argmin (the paper's): per seed, the LR of the smallest final training loss: "
                               "seed 0 -> 0.965489; the only seed's argmin", "chosen lr = 0.965489 (a grid point)"],
                 "plot": "/elsewhere/lr_search_rescaled.png"}
    with sqlite3.connect(run) as conn:
        conn.executemany("INSERT INTO meta VALUES (?, ?)", [("base_lr:rescaled", "0.965489"),
                                                            ("lr_search:rescaled", json.dumps(selection))])
        conn.executemany("INSERT INTO jobs (key, arch, protocol, seed, status, degenerate, test_accuracy, lr) "
                         "VALUES (?, ?, 'lr-search:rescaled', 0, 'done', 0, 30.0, ?)",
                         [(f"search{i}", base, lr) for i, lr in enumerate(selection["grid"])])
    (run.parent / "lr_search_rescaled.png").write_bytes(PNG)
    text = write_report(run.parent, n_boot=0).read_text()
    assert "rescaled: base LR 0.965489, found by the LR search (path_depth)" in text
    assert "Protocol **rescaled** trained at base LR **0.965489**, found by the LR search on " in text
    assert "(searched only: not one of the architectures ranked below)" in text
    assert "![LR search of rescaled](lr_search_rescaled.png)" in text
    assert "| architectures | 8 |" in text  # the 8 ranked, not the searched base architecture too
    numbers = json.loads((run.parent / "report.json").read_text())
    assert base not in [r["arch"] for r in numbers["archs"]]
    assert numbers["lr_search"]["rescaled"] == {"chosen_lr": 0.965489, "arch": base, "plot": "lr_search_rescaled.png"}


def test_a_long_per_architecture_table_is_folded(tmp_path, monkeypatch):
    import nasrescale.kinds.retrain.archs as archs
    from nasrescale.ranking.sources import store_source
    from nasrescale.report.common.names import short_names

    run, _ = build_store(tmp_path / "long", n_archs=6, seeds=(0,))
    store = read_store(run)
    sources = {p: store_source(store, p, p) for p in ("default", "rescaled")}
    names, key = short_names(sorted(set(store.jobs["arch"])), "nb201")
    rows = archs.arch_rows(store, sources, names)
    lines = archs.arch_lines(store, rows, list(sources), names, key)
    assert "<details>" not in "\n".join(lines)
    monkeypatch.setattr(archs, "FOLD_ROWS", 5)
    lines = archs.arch_lines(store, rows, list(sources), names, key)
    assert "<details><summary>6 architectures</summary>" in lines
    assert lines[-2] == "</details>"
