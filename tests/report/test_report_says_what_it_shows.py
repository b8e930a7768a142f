"""A retrain report says only what its numbers show: the same cells under every top-K% column,
isomorphic duplicates counted once, protocols identical run by run left out, an interim study
marked so, a Method table of its departures from the paper's text, the comparison split by the
LR B used, and figures that read the LRs actually used."""

from __future__ import annotations

import json
import sqlite3

import pytest

from nasrescale.kinds.retrain.write import write_report

from rank_store_builder import build_store

TWINS = ("|none~0|+|skip_connect~0|none~1|+|nor_conv_1x1~0|skip_connect~1|skip_connect~2|",
         "|skip_connect~0|+|skip_connect~0|none~1|+|none~0|nor_conv_1x1~1|skip_connect~2|")


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A synthetic study: 24 cells x 3 protocols x 2 seeds; ``copy`` trains exactly as
    ``default``; the rescaled LRs straddle default's 0.1; two isomorphic cells train alike; the
    pipeline declares 40 cells (an interim study)."""
    run, _ = build_store(tmp_path_factory.mktemp("res") / "study", n_archs=24, seeds=(0, 1),
                         protocols=("default", "rescaled", "copy"))
    conn = sqlite3.connect(run)
    pipeline = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'pipeline'").fetchone()[0])
    archs = [r[0] for r in conn.execute("SELECT DISTINCT arch FROM jobs ORDER BY arch")]
    pipeline["arch_list"] = archs + [f"{d}_00_001" for d in range(1, 5)] * 4  # declared, not run yet
    pipeline["protocols"] = {"default": {"lr_rule": "fixed", "init": "default", "epochs": 4},
                             "rescaled": {"lr_rule": "path_depth", "init": "in_degree_source",
                                          "kernel_rule": "family", "epochs": 4},
                             "copy": {"lr_rule": "fixed", "init": "default", "epochs": 4}}
    conn.execute("UPDATE meta SET value = ? WHERE key = 'pipeline'", (json.dumps(pipeline),))
    conn.execute("UPDATE jobs SET test_accuracy = (SELECT d.test_accuracy FROM jobs d WHERE d.protocol = 'default' "
                 "AND d.arch = jobs.arch AND d.seed = jobs.seed), status = (SELECT d.status FROM jobs d WHERE "
                 "d.protocol = 'default' AND d.arch = jobs.arch AND d.seed = jobs.seed) WHERE protocol = 'copy'")
    conn.execute("UPDATE jobs SET lr = lr * 4 WHERE protocol = 'rescaled' AND rowid % 2 = 0")
    for old, new in zip(archs[5:7], TWINS):  # two cells that compute one function, trained alike
        conn.execute("UPDATE jobs SET arch = ? WHERE arch = ?", (new, old))
    for column in ("test_accuracy", "lr", "status"):  # one function, one LR: trained alike
        conn.execute(f"UPDATE jobs SET {column} = (SELECT t.{column} FROM jobs t WHERE t.arch = ? AND "
                     "t.protocol = jobs.protocol AND t.seed = jobs.seed) WHERE arch = ?", TWINS)
    conn.commit()
    conn.close()
    report = write_report(run.parent, n_boot=100)
    return report.read_text(), json.loads((run.parent / "report.json").read_text())


def test_identical_protocols_are_left_out_and_said_so(study):
    text, numbers = study
    assert "`copy`, identical to `default` run by run" in text
    assert not any("copy" in pair for pair in numbers["pairs"])


def test_isomorphic_duplicates_count_once(study):
    text, numbers = study
    pair = numbers["pairs"]["rescaled vs default"]
    assert len(pair["counts"]["isomorphic_dropped"]) == 1
    assert "1 duplicate dropped" in text


def test_an_unfinished_study_is_marked_interim(study):
    text, _ = study
    assert "**Interim:** 24 of 40 cells" in text


def test_the_method_table_lists_the_departures_from_the_text(study):
    text, _ = study
    assert "## Method" in text
    for aspect in ("path depth (eq. 8)", "kernel factor (eq. 9)", "init (§3.2)", "training length"):
        assert f"| {aspect} |" in text


def test_the_comparison_is_split_by_the_lr_b_used(study):
    text, numbers = study
    assert "### Split by the learning rate rescaled used" in text
    split = numbers["lr_split"]["rescaled vs default"]
    assert split["reference_lr"] == pytest.approx(0.1)
    assert sum(g["n"] for g in split["groups"].values()) == numbers["pairs"]["rescaled vs default"]["n"]
    assert "Split by the LR B used" in text


def test_top_k_rows_under_10_cells_are_not_tabled(study):
    text, _ = study
    table = text.split("| top K% | n | tau A,B | 95% band |")[1].split("\n\n")[0]
    assert "\n| 10 | 3 |" not in table and "\n| 100 | " in table
    assert "fewer than 10 cells" in text


def test_the_figures_read_the_lrs_used(study):
    text, _ = study
    assert "![gain vs the LR used](gain_default_vs_rescaled.png)" in text
    assert "![per-cell differences](paired_default_vs_rescaled.png)" in text


def test_the_per_architecture_table_marks_a_duplicate_with_the_cell_kept(study):
    text, numbers = study
    kept, dropped = sorted(TWINS)  # the first in string order stands for the class
    rows = {r["arch"]: r for r in numbers["archs"]}
    assert rows[dropped]["same_as"] == kept and rows[kept]["same_as"] is None
    assert sum(r["same_as"] is not None for r in rows.values()) == 1
    short = {r["arch"]: r["short"] for r in numbers["archs"]}
    table = text.split("## Per architecture")[1]
    assert f"| `{short[dropped]}` (= `{short[kept]}`) |" in table
    assert "1 cell marked (= X) computes the same function as X" in table


def test_the_benchmark_section_says_its_duplicates_once_with_the_runs_name(study):
    text, _ = study
    section = text.split("## Against the benchmark")[1].split("\n## ")[0]
    notes = [line for line in section.splitlines() if line.startswith("Statistics count each isomorphism class")]
    assert len(notes) == 1, notes
    assert "PIPELINE:" not in notes[0] and ":PROTOCOL --include-isomorphic" in notes[0]
