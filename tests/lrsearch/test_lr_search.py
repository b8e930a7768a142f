"""The maximal-LR selection rule, the base-LR search as stored jobs, and base_lr = "search"."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from nasrescale.cli.main import main
from nasrescale.errors import ConfigError, DataError
from nasrescale.lrsearch.search import LrSearchSettings, search_table, losses_from_rows
from nasrescale.lrsearch.select import log_grid, select_lr
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.pipeline.runner import run_pipeline
from nasrescale.store.sqlite_store import Store

from pipeline_helpers import one_thread  # noqa: F401  (fixtures, used by name)


NAN = float("nan")


def select_within_tol(*args, **kwargs):
    """The earlier rule (largest LR within rel_tol of the best mean loss), which these tests pin."""
    return select_lr(*args, rule="within_tol", **kwargs)


# -- the selection rule on constructed losses ------------------------------------------------
def test_largest_of_the_tied_lrs_wins():
    # 0.2 is the best (1.400); 0.4 is 0.5% worse (tie at 1%), 0.8 is 3% worse (no tie)
    s = select_within_tol({0.1: [1.6, 1.6], 0.2: [1.40, 1.40], 0.4: [1.405, 1.409], 0.8: [1.44, 1.445]})
    assert (s.best_lr, s.chosen_lr, s.tied, s.edge) == (0.2, 0.4, [0.2, 0.4], None)
    assert s.mean_loss[0.4] == pytest.approx(1.407)
    # the same losses with a tolerance of 0: the best itself
    assert select_within_tol({0.1: [1.6], 0.2: [1.40], 0.4: [1.407]}, rel_tol=0.0).chosen_lr == 0.2
    # a wider tolerance admits 0.8
    assert select_within_tol({0.1: [1.6], 0.2: [1.40], 0.4: [1.407], 0.8: [1.442]}, rel_tol=0.05).chosen_lr == 0.8


def test_tie_uses_the_mean_over_seeds():
    # at 0.4 one seed is better than anything at 0.2 but the mean is 10% worse: no tie
    s = select_within_tol({0.2: [1.0, 1.0], 0.4: [0.9, 1.3]})
    assert s.mean_loss[0.4] == pytest.approx(1.1)
    assert s.chosen_lr == 0.2


@pytest.mark.parametrize("bad", [NAN, math.inf, None])
def test_divergence_at_high_lr_loses_even_with_one_bad_seed(bad):
    # 1.6 has one seed with the lowest loss of all, but its other seed diverged
    s = select_within_tol({0.1: [2.0, 2.0], 0.4: [1.5, 1.52], 1.6: [0.5, bad], 6.4: [bad, bad]})
    assert s.diverged == [1.6, 6.4]
    assert s.mean_loss[1.6] is None
    assert s.chosen_lr == 0.4
    assert s.edge is None
    assert "diverged" in search_table(s)


def test_the_argmin_table_states_its_rule_the_seeds_argmins_and_an_off_grid_choice():
    # seed 0's smallest loss is at 1.0, seed 1's at 0.316228: the geometric mean 0.562 is no grid point
    s = select_lr({0.1: [2.0, 1.2], 0.316228: [1.5, 1.0], 1.0: [1.0, 1.1], 3.16228: [2.5, 2.6]})
    text = search_table(s, [0, 1])
    assert "largest LR within" not in text  # the other rule's words
    assert "rule argmin (the paper's)" in text
    assert "seed 0 -> 1, seed 1 -> 0.316228; combined by their geometric mean" in text
    assert "chosen lr = 0.562342: no grid point (the seeds' argmins differ), between the grid's 0.316228 and 1" in text
    rows = {line.split()[0]: line for line in text.splitlines()[1:5]}
    assert rows["1"].endswith("<- argmin of seed 0; smallest mean loss")
    assert rows["0.3162"].endswith("<- argmin of seed 1")
    assert "chosen" not in " ".join(rows.values())  # no row claims the off-grid choice


def test_a_choice_on_the_grid_is_marked_under_either_rule():
    losses = {0.1: [2.0, 2.1], 0.316228: [1.0, 1.01], 1.0: [1.005, 1.012], 3.16228: [2.5, 2.6]}
    argmin = search_table(select_lr(losses), [3, 4])
    assert "seed 3 -> 0.316228, seed 4 -> 0.316228" in argmin
    assert "<- chosen; argmin of seeds 3, 4" in argmin
    assert "chosen lr = 0.316228 (a grid point, marked in the table)" in argmin
    tol = search_table(select_within_tol(losses))
    assert "rule within_tol: the largest LR whose mean loss over seeds is within 1% (relative)" in tol
    assert [ln.split()[0] for ln in tol.splitlines() if "<- chosen" in ln] == ["1"]


def test_the_selection_json_names_the_rule_and_each_seeds_argmin():
    from nasrescale.lrsearch.search import selection_json

    out = selection_json(select_lr({0.1: [2.0, 1.2], 0.316228: [1.5, 1.0], 1.0: [1.0, 1.1]}), [0, 1])
    assert (out["rule"], out["on_grid"], out["combined_by"]) == ("argmin", False, "geometric mean")
    assert out["seed_argmins"] == [{"seed": 0, "lr": 1.0}, {"seed": 1, "lr": 0.316228}]


def test_best_at_the_high_edge_is_flagged():
    s = select_within_tol({0.01: [2.0], 0.03: [1.5], 0.1: [1.2]})
    assert s.chosen_lr == 0.1
    assert s.edge == "high"
    assert "extend the grid upwards" in s.edge_message()
    assert "warning:" in search_table(s)


def test_best_at_the_low_edge_is_flagged():
    s = select_within_tol({0.01: [1.0], 0.03: [1.5], 0.1: [NAN]})
    assert s.chosen_lr == 0.01
    assert s.edge == "low"
    assert "downwards" in s.edge_message()


def test_everything_diverged_and_bad_grids():
    with pytest.raises(DataError, match="every LR of the grid diverged"):
        select_within_tol({0.1: [NAN], 1.0: [None]})
    with pytest.raises(ConfigError, match="empty"):
        select_within_tol({})
    with pytest.raises(ConfigError, match="rel_tol"):
        select_within_tol({0.1: [1.0]}, rel_tol=-0.1)
    with pytest.raises(ConfigError, match="no runs"):
        select_within_tol({0.1: [1.0], 0.2: []})


def test_log_grid_is_log_spaced():
    g = log_grid(0.001, 1.0, 7)
    ratios = [b / a for a, b in zip(g, g[1:])]
    assert g[0] == 0.001
    assert g[-1] == 1.0
    assert all(r == pytest.approx(10 ** 0.5, rel=1e-5) for r in ratios)
    with pytest.raises(ConfigError, match="lr_max"):
        log_grid(1.0, 0.1, 3)
    with pytest.raises(ConfigError, match="points"):
        LrSearchSettings(points=1)


def test_losses_from_rows_needs_every_run():
    rows = [{"key": "a", "status": "done", "train_loss_last": 1.0},
            {"key": "b", "status": "diverged", "train_loss_last": None},
            {"key": "c", "status": "failed", "train_loss_last": None}]
    assert losses_from_rows([(0.1, "a"), (1.0, "b")], rows) == {0.1: [1.0], 1.0: [None]}
    with pytest.raises(DataError, match="1 of 2 runs have no result"):
        losses_from_rows([(0.1, "a"), (1.0, "c")], rows)


# -- the search on CPU ----------------------------------------------------------------------
TINY_SEARCH = ["--family", "nb201", "--width", "4", "--cells", "1", "--train-subset", "120", "--test-subset", "50",
               "--batch-size", "40", "--lr-min", "0.01", "--lr-max", "100", "--points", "3", "--seeds", "0", "1",
               "--device", "cpu", "--quiet"]


def test_tiny_end_to_end_search_is_stored_and_resumable(tmp_path, capsys):
    args = ["lr-search", *TINY_SEARCH, "--results", str(tmp_path), "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["grid"] == [0.01, 1.0, 100.0]
    assert set(out["losses"]) == {"0.01", "1", "100"}
    assert all(len(v) == 2 for v in out["losses"].values())
    # the choice is what the rule says of the stored losses
    losses = {float(k): v for k, v in out["losses"].items()}
    assert out["chosen_lr"] == select_within_tol(losses, out["rel_tol"]).chosen_lr
    assert Path(out["plot"]).stat().st_size > 10_000
    store = Store(out["store"], readonly=True)
    try:
        rows = store.rows()
        assert len(rows) == 6
        assert {r["status"] for r in rows} <= {"done", "diverged"}
        assert sorted({r["lr"] for r in rows}) == pytest.approx([0.01, 1.0, 100.0])  # base scale 1
    finally:
        store.close()
    # a rerun trains nothing new and chooses the same LR
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["chosen_lr"] == out["chosen_lr"]


TINY_PIPELINE = """
[pipeline]
name = "tiny-search"
seeds = [0]

[archs]
select = "list"
names = ["3_11_111", "1_01_001"]

[protocols.default]
protocol = "nb201"

[protocols.rescaled]
protocol = "rescaled"
base_lr = "search"

[lr_search]
lr_min = 0.01
lr_max = 1.0
points = 2
seeds = [0]
extend = 0

[budget]
epochs = 1
batch_size = 40
width = 4
cells = 1
train_subset = 80
test_subset = 40

[executor]
device = "cpu"
"""


def test_base_lr_search_in_a_pipeline(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(TINY_PIPELINE)
    p = load_pipeline(path)
    assert p.needs_search()
    assert {e.label: e.search for e in p.protocols} == {"default": False, "rescaled": True}
    with pytest.raises(ConfigError, match="resolved by the run's LR search"):
        p.jobs()
    summary = run_pipeline(p, tmp_path / "results", progress=False)
    assert summary.total == 2 + 4
    assert summary.counts["failed"] == 0  # 2 search runs, 2 archs x 2 protocols
    store = Store(summary.run_dir / "store.sqlite", readonly=True)
    try:
        chosen = json.loads(store.get_meta("base_lr:rescaled"))
        search = json.loads(store.get_meta("lr_search:rescaled"))
        assert chosen == search["chosen_lr"]
        assert chosen in (0.01, 1.0)
        assert json.loads(store.get_meta("base_lr:default")) == 0.1  # a number is used as given
        rows = store.rows()
        assert sorted(r["protocol"] for r in rows) == ["default", "default", "lr-search:rescaled",
                                                       "lr-search:rescaled", "rescaled", "rescaled"]
        for r in rows:
            if r["protocol"] == "rescaled":  # trained at the searched base LR times the arch's scale
                assert store.record(r["key"])["base_lr"] == chosen
                assert r["lr"] == pytest.approx(chosen * r["lr_scale"])
        assert json.loads(store.get_meta("identity"))["protocols"]["rescaled"]["base_lr"] == "search"
    finally:
        store.close()
    assert (summary.run_dir / "lr_search_rescaled.png").is_file()
    from nasrescale.kinds.retrain.write import write_report

    md = write_report(summary.run_dir, n_boot=10).read_text()  # the search runs are no protocol of the report
    assert "rescaled" in md
    assert "lr-search:" not in md
    assert f"rescaled: base LR {chosen:g}, found by the LR search" in md  # the LR found, not "search"
    assert "![LR search of rescaled](lr_search_rescaled.png)" in md
    assert "| architectures | 2 |" in md
    assert "searched only" not in md  # the base architecture 1_01_001 is also one of the two ranked
    again = run_pipeline(load_pipeline(path), tmp_path / "results", progress=False)
    assert again.ran == 0
    assert again.new == 0
    assert again.total == 6


def test_search_is_refused_where_it_makes_no_sense(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(TINY_PIPELINE.replace('base_lr = "search"', 'base_lr = "serch"'))
    with pytest.raises(ConfigError, match='protocols.rescaled.base_lr: expected a number or "search"'):
        load_pipeline(path)
    path.write_text(TINY_PIPELINE.replace("points = 2", "points = 0"))
    with pytest.raises(ConfigError, match="lr_search.points"):
        load_pipeline(path)
