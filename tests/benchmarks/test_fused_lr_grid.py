"""benchmarks/fused_lr_grid.py: a landscape cell's LR grid x seeds timed fused and unfused, side by
side and against the machine's fp32 peak, on the shipped subset at a tiny size."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # the scripts import each other

import fused_lr_grid  # noqa: E402
import machine_peak  # noqa: E402


def test_both_ways_are_timed_and_set_against_the_peak(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    real = machine_peak.measure_peaks
    monkeypatch.setattr(fused_lr_grid, "_peaks", lambda: real("cpu", 4, 8, batch=4, n=32, seconds=0.0,
                                                               precisions=("fp32",)))
    out = tmp_path / "f.json"
    assert fused_lr_grid.main(["--lrs", "2", "--train-images", "100", "--threads", "1", "--json", str(out),
                               "--set", "data.name=cifar10-subset", "--set", "budget.width=4"]) == 0
    doc = json.loads(out.read_text())
    assert doc["members"] == 4 and len(doc["lrs"]) == 2 and doc["lrs"][0] < doc["lrs"][1]  # 2 LRs x 2 seeds
    row = doc["rows"][0]
    assert row["ratio"] == pytest.approx(row["unfused_s"] / row["fused_s"])
    assert row["fused_img_s"] == pytest.approx(4 * 100 / row["fused_s"])
    assert 0 < row["unfused_peak_fraction"] and row["peak_kernel"] in machine_peak.KERNELS
    assert "| 1 |" in capsys.readouterr().out
