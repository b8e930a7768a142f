"""benchmarks/train_throughput.py and machine_peak.py: peaks per precision, each row against its
own precision's peak, like-for-like speed-ups, the cross-precision one only with its accuracy check."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # the scripts import each other

import bench_report  # noqa: E402
import machine_peak  # noqa: E402
import train_throughput  # noqa: E402
from bench_parts import Clock, Row  # noqa: E402

TINY = ["--device", "cpu", "--width", "4", "--cells", "1", "--train-images", "128", "--epochs", "1", "--ks", "2",
        "--jobs-per-gpu", "", "--workers", "0", "--acc-images", "128", "--acc-epochs", "1", "--seeds", "2",
        "--precisions", "bf16,fp32", "--resolution", "8"]


@pytest.fixture
def small_peaks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench's peaks at a tiny size (the real sizes take seconds per kernel)."""
    real = machine_peak.measure_peaks
    monkeypatch.setattr(train_throughput, "measure_peaks",
                        lambda device, channels, side: real(device, channels, side, batch=4, n=32, seconds=0.0))


def test_peaks_are_measured_per_precision_and_named_beside_the_vendors() -> None:
    peaks = machine_peak.measure_peaks("cpu", 4, 8, batch=4, n=32, seconds=0.0)
    assert set(peaks) == {f"{k}_{p}" for k in machine_peak.KERNELS for p in ("fp32", "bf16")}
    assert all(v > 0 for v in peaks.values())
    gpu = {"gemm_fp32": 45_600.0, "gemm_tf32": 300_000.0, "gemm_bf16": 600_000.0}
    lines = machine_peak.format_peaks(gpu, "NVIDIA H200")
    assert lines[0].startswith("peak fp32 (exact, TF32 off): 45,600.0 GFLOP/s (gemm)")
    assert "vendor dense peak 989,400 (0.606 of it measured)" in lines[2]
    assert "not known for this device" in machine_peak.format_peaks(peaks, "cpu")[0]


def test_a_row_is_against_the_peak_of_its_own_precision() -> None:
    """The same GFLOP/s is 0.5 of a 200-GFLOP/s fp32 peak and 0.05 of a 2,000-GFLOP/s bf16 one."""
    bench = object.__new__(train_throughput.Bench)
    bench.peaks = {"gemm_fp32": 200.0, "conv3x3_nchw_fp32": 150.0, "gemm_bf16": 2000.0}
    bench.flops, bench.args = 1e9, type("A", (), {"budget_images": None, "train_images": 100})()
    fp32, bf16 = Row("(b) engine, 1 run fp32", 100.0, 1, "fp32"), Row("(b) engine, 1 run bf16", 100.0, 1, "bf16")
    for row in (fp32, bf16):
        bench.against_limits(row)
    assert fp32.peak_fraction == pytest.approx(0.5) and bf16.peak_fraction == pytest.approx(0.05)


def _rows() -> list[Row]:
    return [Row("(a) reference loop fp32", 100.0, 1, "fp32"), Row("(b) engine, 1 run fp32", 300.0, 1, "fp32"),
            Row("(a) reference loop bf16", 150.0, 1, "bf16"), Row("(c) fused K=2 bf16", 600.0, 2, "bf16")]


def test_speed_ups_compare_like_with_like_and_cross_precision_only_with_its_check(capsys) -> None:
    rows = _rows()
    for r in rows:
        r.peak_fraction = 0.1
    out = bench_report.print_ratios(rows, ["fp32", "bf16"], None)
    text = capsys.readouterr().out
    assert out["ratios"] == {"fp32": pytest.approx(3.0), "bf16": pytest.approx(8.0)}
    assert "cross_precision_ratio" not in out and "not reported, its accuracy was not checked" in text
    assert out["best"] == "(c) fused K=2 bf16" and out["ratio"] == pytest.approx(8.0)
    out = bench_report.print_ratios(rows, ["fp32", "bf16"], "+0.10 points ...: undetermined (n too small)")
    assert out["cross_precision_ratio"] == pytest.approx(12.0)
    assert "(engine bf16 vs fp32 accuracy: +0.10 points ...: undetermined (n too small))" in capsys.readouterr().out
    rows[3].verdict = "different"  # a row whose accuracy differs does not count for a speed-up
    assert bench_report.print_ratios(rows, ["fp32", "bf16"], None)["ratios"] == {"fp32": pytest.approx(3.0)}


def test_the_cpu_bench_prints_peaks_formats_verdicts_and_ratios(small_peaks, capsys) -> None:
    """On the CPU bf16 trains as fp32: one precision's rows, each with the memory format it used
    and a verdict that two seeds cannot decide; the like-for-like ratio; no cross-precision one."""
    result = train_throughput.main(TINY + ["--accuracy"])
    text = capsys.readouterr().out
    assert "peak fp32 (exact, TF32 off)" in text and "peak bf16" in text
    assert "memory format fp32: channels_last (measured" in text or "memory format fp32: contiguous (measured" in text
    assert "precisions bf16,fp32 train as fp32 on this device" in text
    labels = [r["label"] for r in result["rows"]]
    assert labels == ["(a) reference loop fp32", "(b) engine, 1 run fp32", "(c) fused K=2 fp32"]
    assert {r["verdict"] for r in result["rows"][1:]} == {"undetermined (n too small)"}
    assert result["rows"][1]["memory_format"] == result["memory_formats"]["fp32"]
    assert "ratio_fp32=" in text and result["ratio"] > 0 and "cross-precision" not in text


def test_a_time_budget_that_skips_an_accuracy_leaves_that_row_unchecked_and_the_table_written(
        small_peaks, capsys) -> None:
    bench = train_throughput.Bench(train_throughput.parse_args(TINY + ["--ks", ""]))
    bench.limits()
    bench.timing()

    class SkipsEngineAccuracy(Clock):
        def run(self, label, fn):  # noqa: ANN001, ANN201
            if label.startswith("accuracy (b)"):
                self.skipped.append(label)
                return None
            return fn()

    bench.clock = SkipsEngineAccuracy(None)
    extra = bench.accuracy()
    assert extra == {} and bench.clock.skipped == ["accuracy (b) engine, 1 run fp32"]
    table = bench.table(extra)
    assert [r["verdict"] for r in table["rows"]] == [None, None]
    assert table["rows"][0]["accuracy"].endswith("(n=2, the baseline)")
    assert "accuracy not checked" in capsys.readouterr().out


def test_an_unknown_mode_is_refused(capsys) -> None:
    with pytest.raises(SystemExit):
        train_throughput.parse_args(["--modes", "eager,jit"])
    assert "'jit' is unknown" in capsys.readouterr().err
