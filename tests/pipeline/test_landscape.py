"""The landscape pipeline kind end to end at toy size.

Training is replaced by a known landscape (accuracy exactly quadratic in log2 LR around an
optimum ``OPT0 * scale^BETA``, a small offset per seed), so the test knows every answer: each
cell's grid is extended past an edge best until its optimum is interior, and the report's
slope, headroom and tau(global, oracle) are recomputed here from the store rows alone.
"""

from __future__ import annotations

import hashlib
import json
import math
from itertools import permutations
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from nasrescale.jobs.job import TrainJob
from nasrescale.kinds.landscape.grid import cell_grid
from nasrescale.kinds.landscape.settings import LandscapeSettings
from nasrescale.pipeline.slices import visit_records
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.kinds.landscape.cells import read_cells, read_plan
from nasrescale.kinds.landscape.criterion import criterion_rows
from nasrescale.kinds.landscape.verdicts import TAU_MARGIN
from nasrescale.space.encodings import format_arch, parse_arch
from nasrescale.space.family_loader import get_family
from nasrescale.space.topology import lr_scale
from nasrescale.store.read import read_store

from pipeline_helpers import cli, landscape_pipeline, one_thread, tiny_budget  # noqa: F401  (fixtures, used by name)

NB201 = get_family("nb201")
# scales 1, 0.707, 0.333, 0.25, 0.134, 0.106 (and a spread in between)
ARCHS = ("1_21_010", "4_03_440", "0_20_414", "0_12_343", "4_22_413", "2_24_322", "3_14_012", "0_31_023",
         "4_24_141", "1_04_414", "2_30_141", "0_44_210")
OPT0, BETA = 0.8, 0.5  # each cell's optimum LR: OPT0 * scale^BETA (2^-(...) in log2)


def fake_accuracy(arch: str, lr: float, seed: int) -> float:
    scale = lr_scale(parse_arch(arch, NB201), NB201)
    opt = math.log2(OPT0 * scale ** BETA)
    height = 60 + 10 * scale + 0.37 * (int(hashlib.sha256(arch.encode()).hexdigest(), 16) % 5)  # cells differ in height, too
    return height - 2.0 * (math.log2(lr) - opt) ** 2 + 0.1 * seed


def fake_run(self: TrainJob, options=None) -> dict:
    acc = fake_accuracy(self.arch, self.protocol.lr, self.seed)
    return {"key": self.key(), "arch": self.arch, "lr": self.protocol.lr, "test_accuracy": acc, "test_loss": 1.0,
            "train_loss_last": 2.0 - acc / 100, "train_loss_tail": 2.0 - acc / 100, "diverged": False, "degenerate": False, "epochs": self.protocol.epochs,
            "seed": self.seed, "history": []}


def landscape_file(tmp_path: Path, table: str = "lr_min = 0.1\nlr_max = 0.2\npoints_per_octave = 2\nextend = 4\n"
                   "strata = [0.5]", archs=ARCHS) -> Path:
    path = tmp_path / "land.toml"
    path.write_text(landscape_pipeline("land", archs, table))
    return path


@pytest.fixture
def fake_training(monkeypatch):
    monkeypatch.setattr("nasrescale.kinds.landscape.verdicts.N_SIM", 20)  # the verdicts' own tests size theirs
    monkeypatch.setattr(TrainJob, "run", fake_run)
    monkeypatch.setattr(TrainJob, "fusion_key", lambda self: None)


def _curves(run_dir: Path) -> dict[str, dict[float, list[float]]]:
    jobs = read_store(run_dir / "store.sqlite").jobs
    out: dict[str, dict[float, list[float]]] = {}
    for row in jobs[jobs.status == "done"].sort_values("seed").to_dict("records"):
        out.setdefault(row["arch"], {}).setdefault(row["lr"], []).append(row["test_accuracy"])
    return out


def _loo_global(curves: dict[str, dict[float, list[float]]], arch: str) -> float:
    """The LR best on average over every other cell (on LRs every cell has), larger LR on ties."""
    common = sorted(set.intersection(*(set(c) for c in curves.values())))
    rest = [c for a, c in curves.items() if a != arch]
    return max(common, key=lambda lr: (np.mean([np.mean(c[lr]) for c in rest]), lr))


def test_landscape_end_to_end_extends_edges_and_recomputes(tmp_path, capsys, fake_training):
    code, _, err = cli(capsys, "run", str(landscape_file(tmp_path)), "--results", str(tmp_path / "res"), "--quiet")
    assert code == 0, err
    run_dir = tmp_path / "res" / "land"
    curves = _curves(run_dir)
    settings = LandscapeSettings(lr_min=0.1, lr_max=0.2, points_per_octave=2, extend=4, strata=(0.5,))
    for arch, curve in curves.items():
        by_k = {round(settings.k_of(lr)): v for lr, v in curve.items()}
        assert sorted(by_k) == cell_grid(settings, by_k)  # the rule's grid, no more, no less
        best = max(curve, key=lambda lr: np.mean(curve[lr]))
        assert min(curve) < best < max(curve), f"{arch}: best LR {best} still at an edge of {sorted(curve)}"
    assert max(len(c) for c in curves.values()) > len(settings.ks())  # some cell's grid was extended
    # the run's record counts the extensions with the planned grid: every stored run, all finished
    (visit,) = visit_records(run_dir / "store.sqlite")
    runs = sum(len(seeds) for c in curves.values() for seeds in c.values())
    assert visit["jobs_done"] == visit["jobs_total"] == runs > len(load_pipeline(landscape_file(tmp_path)).jobs())
    res = json.loads((run_dir / "report.json").read_text())
    # the slope: each cell's vertex from its own 3 points around the best, here
    scales, vertices = [], []
    for arch, curve in curves.items():
        lrs = sorted(curve)
        i = max(range(len(lrs)), key=lambda j: np.mean(curve[lrs[j]]))
        x = np.log2(lrs[i - 1:i + 2])
        a, b, _ = np.polyfit(x, [np.mean(curve[lr]) for lr in lrs[i - 1:i + 2]], 2)
        scales.append(lr_scale(parse_arch(arch, NB201), NB201))
        vertices.append(2 ** (-b / (2 * a)))
    fit = stats.linregress(np.log(scales), np.log(vertices))
    assert res["slope"]["slope"] == pytest.approx(fit.slope, abs=1e-9)
    assert res["slope"]["slope"] == pytest.approx(BETA, abs=1e-6)  # the known landscape
    assert res["slope"]["rule_in_ci"] is False
    # headroom and tau(global, oracle), recomputed from the rows
    order = [c["arch"] for c in res["per_cell"]]
    glob = [np.mean(curves[a][_loo_global(curves, a)]) for a in order]
    oracle = []
    for a in order:
        c = curves[a]
        picks = [max(c, key=lambda lr: (c[lr][1 - s], lr)) for s in (0, 1)]  # chosen on the other seed
        oracle.append(np.mean([c[picks[s]][s] for s in (0, 1)]))
    assert res["headroom"]["mean"]["global"] == pytest.approx(np.mean(glob), abs=1e-9)
    assert res["headroom"]["mean"]["oracle"] == pytest.approx(np.mean(oracle), abs=1e-9)
    assert res["headroom"]["oracle-global"]["mean"] == pytest.approx(np.mean(oracle) - np.mean(glob), abs=1e-9)
    assert res["headroom"]["oracle-global"]["mean"] > 0
    tau = stats.kendalltau(glob, oracle).statistic
    assert res["ranking"]["global-oracle"]["tau"] == pytest.approx(tau, abs=1e-12)
    assert "## Does each cell's best LR follow the path-depth rule?" in (run_dir / "report.md").read_text()
    # each stratum's median best LR moves with its median scale as the known landscape's BETA says
    low, high = res["strata"]
    assert low["n"] + high["n"] == len(curves) and high["n"] > 0
    assert low["median_best_lr"] == pytest.approx(np.median([v for v, s in zip(vertices, scales) if s < 0.5]), rel=1e-9)
    assert "By path-depth stratum: scale < 0.5 (" in (run_dir / "report.md").read_text()


def test_a_rerun_brings_the_plans_analysis_settings_up_to_date_and_reads_the_recipe(tmp_path, capsys, fake_training):
    """Analysis-only keys changed between runs (criterion, recipe) reach the stored plan without
    touching a stored result; the recipe arm is read from the named run's protocol label, and a
    name that cannot be read is reported, not fatal."""
    table = "lr_min = 0.1\nlr_max = 0.2\npoints_per_octave = 2\nextend = 4\nstrata = [0.5]"
    results = str(tmp_path / "res")
    code, _, err = cli(capsys, "run", str(landscape_file(tmp_path, table)), "--results", results, "--quiet")
    assert code == 0, err
    run_dir = tmp_path / "res" / "land"
    before = read_store(run_dir / "store.sqlite").jobs[["key", "test_accuracy"]].sort_values("key").to_dict("records")
    recipe = table + '\nrecipe = ["land:flat", "nosuch"]'
    code, _, err = cli(capsys, "run", str(landscape_file(tmp_path, recipe)), "--results", results, "--quiet")
    assert code == 0, err
    store = read_store(run_dir / "store.sqlite")
    assert read_plan(store)[1].recipe == ("land:flat", "nosuch")
    assert store.jobs[["key", "test_accuracy"]].sort_values("key").to_dict("records") == before
    res = json.loads((run_dir / "report.json").read_text())
    assert "RUN:LABEL" in res["verdicts"]["recipe"]["error"]  # 'nosuch' names no protocol label
    code, _, err = cli(capsys, "run", str(landscape_file(tmp_path, table + '\nrecipe = ["land:flat"]')),
                       "--results", results, "--quiet")
    assert code == 0, err
    r = json.loads((run_dir / "report.json").read_text())["verdicts"]["recipe"]
    assert r["n"] == len(ARCHS)
    assert r["verdict"] in ("distorted", "undetermined at this design", f"equivalent within {TAU_MARGIN:g}")
    assert "the benchmark's recipe (land:flat; 12 cells)" in (run_dir / "report.md").read_text()
    code, out, err = cli(capsys, "report", "land", "--results", results, "--json")
    assert code == 0, err
    printed = json.loads(out)  # stdout is the report's figures only; the paths written go to stderr
    assert printed["verdicts"]["recipe"]["n"] == len(ARCHS) and "wrote" in err
    assert {"bracket", "distortion", "controls", "power_curve", "detectable", "plan"} <= set(printed["verdicts"])
    # a named run not started yet is left out of the arm and named; the stored ones still make the arm
    code, _, err = cli(capsys, "run", str(landscape_file(tmp_path, table + '\nrecipe = ["land:flat", "later:default"]')),
                       "--results", results, "--quiet")
    assert code == 0, err
    r = json.loads((run_dir / "report.json").read_text())["verdicts"]["recipe"]
    assert r["n"] == len(ARCHS) and r["names"] == ["land:flat"] and r["missing"] == ["later:default"]
    assert "The recipe arm leaves out later:default: no store yet" in (run_dir / "report.md").read_text()


def test_a_time_limited_rerun_brings_the_plans_analysis_settings_up_to_date(tmp_path, capsys, fake_training):
    """A slice binds the store as a whole run does: analysis-only keys changed since (here the
    criterion and the recipe) reach the stored plan, and the report, whether or not a chunk runs."""
    table = "lr_min = 0.1\nlr_max = 0.2\npoints_per_octave = 2\nextend = 4\nstrata = [0.5]"
    results = str(tmp_path / "res")
    code, _, err = cli(capsys, "run", str(landscape_file(tmp_path, table)), "--results", results, "--quiet")
    assert code == 0, err
    changed = table + '\nrecipe = ["land:flat"]\ncriterion = ["nosuch_validation"]'
    code, _, err = cli(capsys, "run", str(landscape_file(tmp_path, changed)), "--results", results, "--quiet",
                       "--time-limit", "1h")
    assert code == 0, err
    run_dir = tmp_path / "res" / "land"
    settings = read_plan(read_store(run_dir / "store.sqlite"))[1]
    assert settings.recipe == ("land:flat",) and settings.criterion == ("nosuch_validation",)
    assert json.loads((run_dir / "report.json").read_text())["settings"]["recipe"] == ["land:flat"]


def test_a_time_limited_run_extends_each_chunk_of_cells(tmp_path, capsys, fake_training):
    path = landscape_file(tmp_path, archs=ARCHS[:4])
    code, _, err = cli(capsys, "run", str(path), "--results", str(tmp_path / "res"), "--max-cells", "1", "--quiet")
    assert code == 0, err
    curves = _curves(tmp_path / "res" / "land")
    assert len(curves) == 1
    (curve,) = curves.values()
    best = max(curve, key=lambda lr: np.mean(curve[lr]))
    assert min(curve) < best < max(curve) and len(curve) > 2  # extended within the slice
    (visit,) = visit_records(tmp_path / "res" / "land" / "store.sqlite")  # the slice's record counts them
    planned = len(load_pipeline(path).jobs())
    assert visit["jobs_done"] == sum(len(seeds) for seeds in curve.values())
    assert visit["jobs_total"] == planned + visit["jobs_done"] - planned // 4 > planned  # 4 cells' equal grids


@pytest.mark.parametrize(("table", "fragment"), [
    ("lr_min = 0.1\nlr_max = 0.12", "a landscape needs at least 3"),
    ("lr_min = 0.1\nlr_max = 0.4\nextend = -1", "landscape.extend: the extension cap must be >= 0"),
    ("lr_min = 0.1\nlr_max = 0.4\nstrata = [0.05]", "landscape.strata: no selected cell has a path-depth scale [0, 0.05)"),
])
def test_bad_landscape_input_exits_2_before_anything_is_stored(tmp_path, capsys, table, fragment):
    code, _, err = cli(capsys, "run", str(landscape_file(tmp_path, table)), "--results", str(tmp_path / "res"))
    assert code == 2 and fragment in err, err
    assert not (tmp_path / "res" / "land" / "store.sqlite").exists()


def test_a_landscape_table_belongs_to_its_kind():
    with pytest.raises(Exception, match=r"landscape: this table belongs to kind = \"landscape\""):
        load_pipeline("quickstart", {"landscape.lr_min": 0.2})


def test_a_landscape_job_at_the_study_lr_is_the_study_job():
    land = load_pipeline("landscape_nb201_cpu")
    study = load_pipeline("nb201_cifar10_cpu")
    flat = next(e for e in study.protocols if e.label == "flat")
    study_flat = study.with_base_lrs({**{e.label: 1.0 for e in study.protocols}, "flat": 0.4})  # flat's tuned LR
    archs = land.arch_list()[:2]
    flat_keys = {j.key() for j in study_flat.jobs(archs) if j.label == "flat"}
    assert flat.tune and flat_keys <= {j.key() for j in land.jobs(archs)}


def test_single_run_tau_and_oracle_are_like_for_like():
    from nasrescale.kinds.landscape.stats import _single_run_tau

    a = [[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]]
    expected = np.mean([stats.kendalltau([x[s] for x in a], [x[t] for x in a]).statistic
                        for s, t in permutations(range(2), 2)])
    assert _single_run_tau(a, a) == pytest.approx(expected, abs=1e-12)


def test_the_paper_criterion_is_shown_beside_on_the_shared_cells(tmp_path, capsys, fake_training):
    """An lr_validation run of 3 of the cells (its one-epoch argmin of the training loss) beside the landscape."""
    names = ", ".join(f'"{a}"' for a in ARCHS[:3])
    val = tmp_path / "val.toml"
    val.write_text(f"""
[pipeline]
name = "val"
kind = "lr_validation"
reference = "none"
[archs]
select = "list"
names = [{names}]
[protocols.flat]
protocol = "nb201"
init = "in_degree_source"
[lr_search]
lr_min = 0.1
lr_max = 0.4
points = 5
seeds = [0, 1]
rule = "argmin"
extend = 4
{tiny_budget(schedule=False)}""")
    assert cli(capsys, "run", str(val), "--results", str(tmp_path / "res"), "--quiet")[0] == 0
    land = landscape_file(tmp_path, "lr_min = 0.1\nlr_max = 0.2\nextend = 4\ncriterion = [\"val\"]", ARCHS[:6])
    assert cli(capsys, "run", str(land), "--results", str(tmp_path / "res"), "--quiet")[0] == 0
    res = json.loads((tmp_path / "res" / "land" / "report.json").read_text())
    mine, theirs = res["criterion"]
    assert theirs["n"] == mine["n"] == 3
    # the fake training loss falls as accuracy rises: the argmin sits at each cell's optimum too
    store = read_store(tmp_path / "res" / "val" / "store.sqlite")
    by = store.jobs[store.jobs.status == "done"].groupby(["arch", "lr"])["train_loss_last"].mean().reset_index()
    argmin = by.loc[by.groupby("arch")["train_loss_last"].idxmin()]
    argmin = argmin[argmin["arch"] != format_arch(parse_arch(NB201.base, NB201), NB201)]  # the base is no landscape cell
    scales = [lr_scale(parse_arch(a, NB201), NB201) for a in argmin["arch"]]
    assert theirs["slope"] == pytest.approx(stats.linregress(np.log(scales), np.log(argmin["lr"])).slope, abs=1e-4)
    assert "The paper's one-epoch criterion" in (tmp_path / "res" / "land" / "report.md").read_text()
    # two criterion runs on the same cells: the landscape's row once, before them
    land_store = read_store(tmp_path / "res" / "land" / "store.sqlite")
    cells, _ = read_cells(land_store)
    rows = criterion_rows(["val", "val"], cells, read_plan(land_store)[1].lr, tmp_path / "res")
    assert [r["source"].split(" ")[0] for r in rows] == ["landscape", "val", "val"]
    assert rows[2]["n"] == 3 and rows[2]["slope"] == pytest.approx(theirs["slope"])


def test_elr_stats_tell_a_constant_effective_lr_from_a_varying_nominal_one():
    from nasrescale.kinds.landscape.cells import CellLandscape
    from nasrescale.kinds.landscape.stats import elr_stats

    settings = LandscapeSettings(lr_min=0.1, lr_max=1.6)
    cells = [CellLandscape(f"a{i}", scale, 1.0, {k: [50.0]}, k, float(k), None, None, None, {k: (0.02, 0.01)})
             for i, (scale, k) in enumerate([(1.0, 6), (0.5, 4), (0.25, 2), (0.125, 0)])]
    out = elr_stats(cells, settings.lr)
    assert out["nominal"]["slope"] == pytest.approx(1.0, abs=1e-12)  # best LR = 0.8 x scale, here
    assert out["elr_first"]["sd_log"] == 0.0 and out["nominal"]["sd_log"] > 0.5
    assert elr_stats(cells[:2], settings.lr) is None


def test_elr_stats_set_the_best_lrs_effective_step_against_one_fixed_lr():
    """The control: effective steps equal at each cell's best LR and spread at one fixed LR read as
    'more nearly constant at the best', with a bootstrap interval of the spreads' difference below 0."""
    from nasrescale.kinds.landscape.cells import CellLandscape
    from nasrescale.kinds.landscape.stats import elr_stats

    settings = LandscapeSettings(lr_min=0.1, lr_max=1.6)
    cells = [CellLandscape(f"a{i}", 2.0 ** -i, 1.0, {k: [50.0], 3: [49.0]}, k, float(k), None, None, None,
                           {k: (0.05 * (1 + 0.01 * i), 0.01), 3: (0.05 * 2.0 ** (i - k), 0.01 * 1.5 ** i)})
             for i, k in enumerate([8, 7, 6, 5, 4, 2, 1, 0])]
    out = elr_stats(cells, settings.lr, fixed_k=3)
    assert out["fixed_lr"] == settings.lr(3) and out["n"] == 8
    assert out["elr_first"]["sd_log"] < 0.05 < out["fixed_first"]["sd_log"]
    assert out["spread_diff_first"]["ci"][1] < 0
    assert out["spread_diff_last"]["ci"][1] < 0  # constant at the best, spread by 1.5x per cell at the fixed LR
    assert elr_stats(cells, settings.lr, fixed_k=9) is None  # no cell has a run at that LR


def _grid_lr(lr: float, settings: LandscapeSettings) -> float:
    """The grid LR nearest ``lr``."""
    return settings.lr(round(settings.k_of(lr)))


def test_a_centred_landscape_starts_each_cell_around_its_own_lr(tmp_path, capsys, fake_training):
    """``centers``: each cell's first grid is center_points LRs around its centre, extended at edges."""
    archs = ARCHS[:4]
    base = LandscapeSettings(lr_min=0.1, points_per_octave=2)
    # centres one grid step above each cell's known optimum: the centred grid still holds it
    centers = {a: _grid_lr(OPT0 * lr_scale(parse_arch(a, NB201), NB201) ** BETA * 2 ** 0.5, base) for a in archs}
    table = "lr_min = 0.1\npoints_per_octave = 2\nextend = 4\ncenter_points = 4\n[landscape.centers]\n" + "\n".join(
        f'"{a}" = {lr!r}' for a, lr in centers.items())
    code, _, err = cli(capsys, "run", str(landscape_file(tmp_path, table, archs)), "--results", str(tmp_path / "res"),
                       "--quiet")
    assert code == 0, err
    canonical = {format_arch(parse_arch(a, NB201), NB201): lr for a, lr in centers.items()}  # as the plan keys them
    settings = LandscapeSettings(lr_min=0.1, points_per_octave=2, extend=4, centers=canonical, center_points=4)
    curves = _curves(tmp_path / "res" / "land")
    assert set(curves) == set(canonical)
    for arch, curve in curves.items():
        by_k = {round(settings.k_of(lr)): v for lr, v in curve.items()}
        k0 = round(settings.k_of(canonical[arch]))
        assert set(range(k0 - 1, k0 + 3)) <= set(by_k)  # 1 below the centre, 2 above
        assert sorted(by_k) == cell_grid(settings, by_k, arch)
        best = max(curve, key=lambda lr: np.mean(curve[lr]))
        assert min(curve) < best < max(curve)
    assert any(len(c) == 4 for c in curves.values())  # a cell whose optimum was interior needed no more
    # the global LR is chosen among the LRs every cell's grid has, and the report says which
    res = json.loads((tmp_path / "res" / "land" / "report.json").read_text())
    common = sorted(set.intersection(*(set(c) for c in curves.values())))
    assert res["arms"]["global"]["options"] == pytest.approx(common, rel=1e-9)  # report.json holds 12 digits
    assert set(res["arms"]["global"]["lr"]) <= set(res["arms"]["global"]["options"])
    report = (tmp_path / "res" / "land" / "report.md").read_text()
    assert f"among the {len(common)} grid LRs every cell has" in report
    assert "each cell at 4 LRs of the log grid 0.1 x 2^(k/2) around its own centre LR (1 below, 2 above" in report
    # the table the finished landscape writes for a longer run: each cell's argmax grid LR
    from tool_helpers import load_tool

    code = load_tool("landscape_centers").main([str(tmp_path / "res" / "land"), "--cells", *archs[:2]])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and lines[0].startswith("[landscape.centers]") and len(lines) == 3
    for arch, line in zip(archs[:2], lines[1:]):
        curve = curves[format_arch(parse_arch(arch, NB201), NB201)]
        assert line.startswith(f'"{arch}" = {max(curve, key=lambda lr: np.mean(curve[lr]))!r}  #')


@pytest.mark.parametrize(("table", "fragment"), [
    ('lr_min = 0.1\n[landscape.centers]\n"1_21_010" = 0.3', "landscape.centers.1_21_010: 0.3 is not an LR of the grid"),
    ('lr_min = 0.1\ncenter_points = 2\n[landscape.centers]\n"1_21_010" = 0.4', "landscape.center_points: a centred grid"),
    ('lr_min = 0.1\n[landscape.centers]\n"1_21_010" = 0.4', "landscape.centers: no centre LR for cell '|avg_pool_3x3~0|+|none~0|nor_conv_3x3~1|"),
    ('lr_min = 0.1\n[landscape.centers]\n"1_21_010" = 0.4\n"4_03_44" = 0.4', "landscape.centers.4_03_44: "),
])
def test_bad_centres_exit_2_before_anything_is_stored(tmp_path, capsys, table, fragment):
    path = landscape_file(tmp_path, table, ARCHS[:2])
    code, _, err = cli(capsys, "run", str(path), "--results", str(tmp_path / "res"))
    assert code == 2 and fragment in err, err
    assert not (tmp_path / "res" / "land" / "store.sqlite").exists()


def test_the_24_epoch_landscape_is_centred_on_each_cells_6_epoch_best():
    """pipelines/landscape_nb201_24ep_cpu.toml: 16 cells of the committed 6-epoch landscape (>= 4 at
    path-depth scale >= 0.5), each on 6 grid LRs around its 6-epoch argmax, 2 seeds."""
    from nasrescale.kinds.landscape.plan import resolved_settings
    from nasrescale.store.read import store_path

    long = load_pipeline("landscape_nb201_24ep_cpu")
    settings = resolved_settings(long)
    short = read_store(store_path(Path(__file__).resolve().parents[2] / "results" / "landscape_nb201_cpu"))
    best = {c.arch: c.best for c in read_cells(short)[0]}
    archs = long.arch_list()
    assert len(archs) == 16 and set(archs) <= set(best)
    assert sum(lr_scale(parse_arch(a, NB201), NB201) >= 0.5 for a in archs) >= 4
    assert long.protocols[0].protocol.epochs == 24 and long.pipeline.seeds == (0, 1)
    jobs = long.jobs(archs)
    assert len(jobs) == 16 * 6 * 2
    for arch in archs:
        assert settings.centers[arch] == pytest.approx(settings.lr(best[arch]), rel=1e-12), arch
        ks = sorted({round(settings.k_of(j.protocol.lr)) for j in jobs if j.arch == arch})
        assert ks == list(range(best[arch] - 2, best[arch] + 4)), arch
