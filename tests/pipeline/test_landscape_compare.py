"""``landscape.compare``: the same cells in another landscape (e.g. another budget), end to end at
toy size, with training replaced by known landscapes: accuracy exactly quadratic in log2 LR
around ``0.8 x scale^beta``, so each cell's best LR is known in both runs, and the slope of the
shift on log(path-depth scale) is the difference of the two betas."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from nasrescale.jobs.job import TrainJob
from nasrescale.kinds.landscape.compare import compare_landscapes
from nasrescale.kinds.landscape.cells import read_cells, read_plan
from nasrescale.space.encodings import parse_arch
from nasrescale.space.family_loader import get_family
from nasrescale.space.topology import lr_scale
from nasrescale.store.read import read_store

from pipeline_helpers import TINY_BUDGET, cli, landscape_pipeline, one_thread  # noqa: F401  (fixtures, used by name)

NB201 = get_family("nb201")
ARCHS = ("1_21_010", "4_03_440", "0_20_414", "0_12_343", "4_22_413", "2_24_322", "3_14_012", "0_31_023",
         "4_24_141", "1_04_414", "2_30_141", "0_44_210")  # path-depth scales 1 to 0.106
BETA = {"short": 0.0, "long": 0.5}  # per run: the optimum's power of the scale


def _fake_run(self: TrainJob, options=None) -> dict:
    scale = lr_scale(parse_arch(self.arch, NB201), NB201)
    beta = BETA["long" if self.protocol.epochs == 2 else "short"]
    acc = 60 + 10 * scale - 2.0 * (math.log2(self.protocol.lr) - math.log2(0.8 * scale ** beta)) ** 2 + 0.1 * self.seed
    return {"key": self.key(), "arch": self.arch, "lr": self.protocol.lr, "test_accuracy": acc, "test_loss": 1.0,
            "train_loss_last": 1.0, "train_loss_tail": 1.0, "diverged": False, "degenerate": False,
            "epochs": self.protocol.epochs, "seed": self.seed, "history": []}


@pytest.fixture
def known(monkeypatch):
    monkeypatch.setattr("nasrescale.kinds.landscape.verdicts.N_SIM", 0)  # no verdicts: not what is tested here
    monkeypatch.setattr(TrainJob, "run", _fake_run)
    monkeypatch.setattr(TrainJob, "fusion_key", lambda self: None)


def _file(tmp_path: Path, name: str, epochs: int, extra: str = "") -> Path:
    path = tmp_path / f"{name}.toml"
    table = f"lr_min = 0.1\nlr_max = 0.4\npoints_per_octave = 2\nextend = 4\n{extra}"
    path.write_text(landscape_pipeline(name, ARCHS, table, TINY_BUDGET.replace("epochs = 1", f"epochs = {epochs}"),
                                       reference="none"))
    return path


def test_the_shift_between_two_landscapes_follows_the_known_betas(tmp_path, capsys, known):
    results = str(tmp_path / "res")
    code, _, err = cli(capsys, "run", str(_file(tmp_path, "short", 1)), "--results", results, "--quiet")
    assert code == 0, err
    code, _, err = cli(capsys, "run", str(_file(tmp_path, "long", 2, 'compare = "short"')), "--results", results,
                       "--quiet")
    assert code == 0, err
    run_dir = tmp_path / "res" / "long"
    c = json.loads((run_dir / "report.json").read_text())["compare"]
    assert (c["run"], c["epochs"], c["n"]) == ("short", 1, len(ARCHS))
    assert c["slope_there"] == pytest.approx(0.0, abs=1e-6) and c["slope_here"] == pytest.approx(0.5, abs=1e-6)
    assert c["slope_diff"] == pytest.approx(0.5, abs=1e-6) and c["slope_diff_ci"][0] > 0
    for cell in c["cells"]:  # each best LR is the known optimum; the shift its log2 ratio
        assert cell["other_best_lr"] == pytest.approx(0.8, rel=1e-6)
        assert cell["best_lr"] == pytest.approx(0.8 * cell["lr_scale"] ** 0.5, rel=1e-6)
        assert cell["shift"] == pytest.approx(0.5 * math.log2(cell["lr_scale"]), abs=1e-6)
    text = (run_dir / "report.md").read_text()
    assert "## The same cells in short (1 epoch)" in text
    assert "**The budget moves the best LR with path depth.**" in text and (run_dir / "landscape_compare.png").is_file()


def test_alike_shifts_show_no_change_with_path_depth_and_a_missing_run_is_said(tmp_path, capsys, known):
    results = str(tmp_path / "res")
    for name, epochs in (("short", 1), ("long", 2)):
        BETA_BEFORE = dict(BETA)
        BETA.update({"short": 0.5, "long": 0.5})  # the same optimum in both: no shift at all
        try:
            code, _, err = cli(capsys, "run", str(_file(tmp_path, name, epochs)), "--results", results, "--quiet")
        finally:
            BETA.update(BETA_BEFORE)
        assert code == 0, err
    here, there = (read_store(tmp_path / "res" / n / "store.sqlite") for n in ("long", "short"))
    lr = read_plan(here)[1].lr
    c = compare_landscapes("short", 1, read_cells(here, 0)[0], lr, read_cells(there, 0)[0], lr, n_boot=0)
    assert c["slope_diff"] == pytest.approx(0.0, abs=1e-6) and c["shift_mean"] == pytest.approx(0.0, abs=1e-6)
    code, _, err = cli(capsys, "run", str(_file(tmp_path, "long", 2, 'compare = "nosuch"')), "--results", results,
                       "--quiet")
    assert code == 0, err
    text = (tmp_path / "res" / "long" / "report.md").read_text()
    assert "## The same cells in nosuch" in text and "Not compared:" in text
