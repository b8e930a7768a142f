"""Sources (store, benchmark, CSV, NATS-Bench), source comparison and the rank CLI."""

from __future__ import annotations

import json
import sqlite3
import sys
import types

import numpy as np
import pandas as pd
import pytest

from nasrescale.cli.main import main
from nasrescale.ranking.compare import aggregate, compare
from nasrescale.space.encodings import format_arch, parse_arch
from nasrescale.errors import ConfigError, DataError
from nasrescale.ranking.rank import kendall_tau
from nasrescale.ranking.text import interval_note
from nasrescale.space.benchmark import benchmark_accuracies, nats_bench_accuracies, read_accuracy_csv
from nasrescale.ranking.sources import load_source

from rank_store_builder import DEGENERATE, build_store


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    path, truth = build_store(results / "syn")
    return results, path, truth


def test_store_source_means_done_runs_and_counts_the_rest(run):
    results, _, truth = run
    src = load_source("syn:default", results=results)
    assert src.kind == "store"
    assert src.family == "nb201"
    assert src.chance == pytest.approx(10.0)
    assert src.skipped == {"failed": 1, "running": 1}
    agg = aggregate(src)
    expected = {arch: np.mean(v) for arch, v in truth["default"].items()}
    assert set(agg.index) == set(expected)
    for arch, acc in expected.items():
        assert agg.loc[arch, "accuracy"] == pytest.approx(acc)
    assert bool(agg.loc[DEGENERATE, "degenerate"])
    assert agg.loc[DEGENERATE, "accuracy"] == pytest.approx(10.0)


def test_diverged_runs_count_as_chance_or_are_dropped(run):
    results, _, truth = run
    src = load_source("syn:rescaled", results=results)
    bad = src.runs[src.runs["diverged"]]
    assert len(bad) == 1
    arch = bad["arch"].iloc[0]
    done = truth["rescaled"][arch]
    chance = aggregate(src, "chance").loc[arch]
    assert chance["accuracy"] == pytest.approx(np.mean(done + [10.0]))
    assert chance["diverged"] == 1
    assert aggregate(src, "drop").loc[arch, "accuracy"] == pytest.approx(np.mean(done))


def test_compare_store_protocols(run):
    results, _, truth = run
    a, b = load_source("syn:default", results=results), load_source("syn:rescaled", results=results)
    result, merged = compare(a, b, n_boot=100, policy="drop")
    common = sorted((set(truth["default"]) & set(truth["rescaled"])) - {DEGENERATE})
    x = [np.mean(truth["default"][k]) for k in common]
    y = [np.mean(truth["rescaled"][k]) for k in common]
    assert result["n"] == len(common) == result["counts"]["matched"] - 1 == len(merged)
    assert result["counts"]["degenerate_excluded"] == 1
    assert result["kendall_tau"] == pytest.approx(kendall_tau(x, y))
    assert result["mean_diff"] == pytest.approx(np.mean(np.subtract(y, x)))
    assert result["counts"]["degenerate"] == 1
    assert result["counts"]["diverged_b"] == 1
    assert result["seed_noise"]["a"]["pairs"] == 1
    assert result["per_run_kendall_tau"]["pairs"] == 4
    assert len(result["topk"]) == 12
    assert result["ci"]["kendall_tau"] is not None


def test_degenerate_cells_are_left_out_of_every_statistic_unless_asked(run):
    results, _, truth = run
    a, b = load_source("syn:default", results=results), load_source("syn:rescaled", results=results)
    common = sorted(set(truth["default"]) & set(truth["rescaled"]))
    mean = {p: {k: np.mean(truth[p][k]) for k in common} for p in truth}
    live = [k for k in common if k != DEGENERATE]
    out, frame = compare(a, b, n_boot=0, policy="drop")
    assert DEGENERATE not in frame.index
    assert out["kendall_tau"] == pytest.approx(kendall_tau([mean["default"][k] for k in live],
                                                           [mean["rescaled"][k] for k in live]))
    assert out["topk"][0]["n"] == len(live)  # top 100%: every ranked architecture
    assert out["seed_noise"]["a"]["topk"][0]["kendall_tau"] is not None
    both, frame = compare(a, b, n_boot=0, policy="drop", include_degenerate=True)
    assert (both["n"], both["counts"]["degenerate_excluded"], both["settings"]["include_degenerate"]) == \
        (len(common), 0, True)
    assert DEGENERATE in frame.index
    assert both["kendall_tau"] == pytest.approx(kendall_tau([mean["default"][k] for k in common],
                                                            [mean["rescaled"][k] for k in common]))
    assert both["kendall_tau"] != pytest.approx(out["kendall_tau"])


def test_rank_says_how_many_degenerate_cells_it_left_out_and_the_switch(run, capsys):
    results, _, _ = run
    args = ["rank", "syn:default", "syn:rescaled", "--results", str(results), "--bootstrap", "0"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "Statistics leave out 1 degenerate cell" in text
    assert "`nasrescale rank --include-degenerate` counts it" in text
    assert main([*args, "--include-degenerate", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["counts"]["degenerate_excluded"], out["n"]) == (0, out["counts"]["matched"])
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["degenerate_excluded"] == 1


def test_benchmark_source_degenerate_from_topology(run):
    results, _, _ = run
    result, merged = compare(load_source("syn:default", results=results), load_source("nb201:cifar10"), n_boot=0,
                             include_degenerate=True)
    assert result["counts"]["only_b"] == 15625 - result["n"]
    assert result["counts"]["degenerate"] == 1
    assert bool(merged.loc[DEGENERATE, "degenerate"])
    assert merged.loc[DEGENERATE, "b"] == pytest.approx(10.0)


def test_partial_run_with_few_rows_gives_nulls(tmp_path):
    path, _ = build_store(tmp_path / "tiny", n_archs=5, seeds=(0,))
    conn = sqlite3.connect(path)
    conn.execute("UPDATE jobs SET status='pending', test_accuracy=NULL WHERE arch != ? AND rowid % 2 = 0", (DEGENERATE,))
    conn.commit()
    conn.close()
    result, _ = compare(load_source("tiny:default", results=tmp_path), load_source("tiny:rescaled", results=tmp_path),
                        n_boot=50)
    assert result["n"] < 3
    assert result["kendall_tau"] is None
    assert result["ci"]["kendall_tau"] is None
    assert all(e["kendall_tau"] is None for e in result["topk"])


def test_csv_source_in_any_encoding(tmp_path, nb201):
    acc = benchmark_accuracies("cifar10")
    archs = list(acc)[:40]
    digits = [format_arch(parse_arch(a, nb201), nb201, "digits") for a in archs]
    csv = tmp_path / "mine.csv"
    pd.DataFrame({"cell": digits, "top1": [acc[a] + 1 for a in archs]}).to_csv(csv, index=False)
    frame = read_accuracy_csv(csv, nb201, arch_column="cell", accuracy_column="top1")
    assert frame["arch"].tolist() == archs
    src = load_source(str(csv), arch_column="cell", accuracy_column="top1")
    result, _ = compare(src, load_source("nb201:cifar10"), n_boot=0)
    assert (result["n"], result["counts"]["degenerate_excluded"]) == (35, 2)  # two of the 40 have no path
    assert len(result["counts"]["isomorphic_dropped"]) == 3  # and 3 compute what another of them does
    assert compare(src, load_source("nb201:cifar10"), n_boot=0, include_isomorphic=True)[0]["n"] == 38
    assert result["kendall_tau"] == pytest.approx(1.0)
    assert result["mean_diff"] == pytest.approx(-1)
    with pytest.raises(ConfigError, match="no accuracy column 'accuracy'; its columns: cell, top1"):
        load_source(str(csv), arch_column="cell")
    bad = tmp_path / "bad.csv"
    bad.write_text("arch,accuracy\n3_33_333,ninety\n")
    with pytest.raises(DataError, match="row 2: accuracy 'ninety'"):
        load_source(str(bad))


def test_csv_export_with_protocols(tmp_path):
    arch = list(benchmark_accuracies("cifar10"))[:4]
    csv = tmp_path / "export.csv"
    pd.DataFrame({"arch": arch * 2, "protocol": ["default"] * 4 + ["rescaled"] * 4, "seed": 0,
                  "status": ["done", "done", "failed", "diverged"] * 2,
                  "test_accuracy": [90, 91, None, None, 92, 90, None, None]}).to_csv(csv, index=False)
    with pytest.raises(ConfigError, match="pick one: .*export.csv:default"):
        load_source(str(csv))
    src = load_source(f"{csv}:rescaled", classes=10)
    assert src.skipped == {"failed": 1}
    assert src.runs["diverged"].sum() == 1
    assert src.chance == 10.0
    with pytest.raises(DataError, match="--classes N or --diverged drop"):
        aggregate(load_source(f"{csv}:rescaled"))


def test_nats_bench_missing_package_message(monkeypatch, tmp_path, nb201):
    monkeypatch.setitem(sys.modules, "nats_bench", None)  # import fails as if not installed
    with pytest.raises(DataError, match="pip install nats_bench"):
        nats_bench_accuracies(tmp_path, "cifar10", nb201)


def test_nats_bench_api_is_read_with_mean_over_seeds(monkeypatch, tmp_path, nb201):
    archs = list(benchmark_accuracies("cifar100"))[:3]
    calls = []

    class FakeAPI:
        meta_archs = archs

        def get_more_info(self, index, dataset, hp, is_random):
            calls.append((index, dataset, hp, is_random))
            return {"test-accuracy": 50.0 + index}

    fake = types.SimpleNamespace(create=lambda path, space, fast_mode, verbose: FakeAPI())
    monkeypatch.setitem(sys.modules, "nats_bench", fake)
    got = nats_bench_accuracies(tmp_path, "imagenet16-120", nb201, archs=archs[1:])
    assert got == {archs[1]: 51.0, archs[2]: 52.0}
    assert calls == [(1, "ImageNet16-120", "200", False), (2, "ImageNet16-120", "200", False)]
    with pytest.raises(DataError, match="does not exist"):
        nats_bench_accuracies(tmp_path / "nope", "cifar10", nb201)


def test_cli_json_and_table(run, capsys):
    results, _, _ = run
    assert main(["rank", "syn:default", "syn:rescaled", "--results", str(results), "--json", "--bootstrap", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("n", "kendall_tau", "spearman", "pearson", "topk", "precision_at_k", "mean_diff", "ci", "counts"):
        assert key in out
    assert {"k_percent", "n", "kendall_tau"} <= set(out["topk"][0])
    assert main(["rank", "syn:default", "nb201:cifar10", "--results", str(results), "--bootstrap", "0",
                 "--topk-by", "both", "--diverged", "drop"]) == 0
    text = capsys.readouterr().out
    assert "matched" in text
    assert "degenerate 1" in text
    assert "subset by both" in text


def test_the_table_says_what_its_ci_and_its_band_are(run, capsys):
    """`rank` prints tau with a CI and, in the top-K% table, with a band: the output says which is
    which, and that at K = 100 they are intervals of the same tau (issue 63)."""
    results, _, _ = run
    assert main(["rank", "syn:default", "syn:rescaled", "--results", str(results), "--bootstrap", "50"]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(line.split() for line in lines if line.split()[:1] == ["100"])  # top 100%: every cell ranked
    n = int(row[1])
    assert any(line.endswith("95% CI (BCa, 50 bootstrap resamples)") for line in lines)
    assert lines[-1] == interval_note(n) and lines[-1].startswith(f"CI: the 95% BCa bootstrap interval of a statistic "
                                                                  f"over all {n} architectures")
    tau = next(line for line in lines if line.startswith("Kendall tau-b")).split()[2]
    assert row[2] == tau  # the K = 100 row is the same tau: band and CI differ only by their method
    assert main(["rank", "syn:default", "syn:rescaled", "--results", str(results), "--bootstrap", "0"]) == 0
    assert "band:" not in capsys.readouterr().out  # no bootstrap, no intervals to explain


@pytest.mark.parametrize("args, message", [
    (["nope:default", "nb201:cifar10"], "no result store"),
    (["syn:bogus", "nb201:cifar10"], "no protocol 'bogus'; its protocols: default, rescaled"),
    (["syn:default", "nb201:mnist"], "allowed: cifar10, cifar100, imagenet16-120"),
    (["syn:default", "nats:cifar10"], "--nats-file"),
])
def test_cli_errors_exit_2(run, capsys, args, message):
    results, _, _ = run
    assert main(["rank", *args, "--results", str(results)]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("content", ["", "\n"])
def test_an_empty_csv_exits_2_saying_what_a_csv_needs(run, capsys, tmp_path, content):
    results, _, _ = run
    empty = tmp_path / "empty.csv"
    empty.write_text(content)
    assert main(["rank", str(empty), "nb201:cifar10", "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert f"cannot read {str(empty)!r} as CSV" in err and "it needs a header row" in err and "Traceback" not in err
