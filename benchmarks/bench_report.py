"""What ``train_throughput.py`` prints at its end (not a test): the table of rows, the like-for-like
speed-ups per precision, the cross-precision one beside its accuracy check, and the last lines
``peak_fraction=`` and ``ratio=``."""

from __future__ import annotations

import statistics

from bench_parts import Row
from parity import Verdict

__all__ = ["accuracy_text", "print_table", "like_for_like", "print_ratios"]


def accuracy_text(accs: list[float], v: Verdict | None) -> str:
    """Mean +- sample sd of a row's accuracies, and its verdict against its reference.

    >>> accuracy_text([60.0, 62.0], None)
    '61.00 +- 1.41 (n=2, the baseline)'
    """
    sd = statistics.stdev(accs) if len(accs) > 1 else 0.0
    tail = "the baseline" if v is None else f"vs (a): {v.text()}"
    return f"{statistics.mean(accs):.2f} +- {sd:.2f} (n={len(accs)}, {tail})"


def print_table(rows: list[Row], budget: int, cuda: bool) -> None:
    """The rows, with the precision whose peak each ``peak_frac`` is against and its memory format."""
    print(f"{'configuration':<30} {'images/s':>10} {'model-img/s':>12} {'peak MiB':>9} {'GFLOP/s':>8} "
          f"{'peak_frac':>9} {'of peak':>7} {'format':>13} {'epoch_s':>8}  accuracy   "
          f"(epoch_s: one run's epoch of {budget:,} images)")
    for r in rows:
        peak = f"{r.peak_mib:>9,.0f}" if r.peak_mib is not None else f"{'-':>9}"
        print(f"{r.label:<30} {r.ips:>10,.1f} {r.ips * r.runs:>12,.1f} {peak} {r.gflops:>8,.1f} "
              f"{r.peak_fraction:>9.3f} {r.precision:>7} {r.memory_format:>13} {r.epoch_s:>8,.1f}  {r.accuracy}")
    if not cuda:
        print("* (d) on the CPU: N processes share the cores (devices ['cpu'] * N), a stand-in for the "
              "jobs_per_gpu code path, not a GPU figure; the CPU trains in fp32 whatever the precision says")
    for r in (r for r in rows if r.note):
        print(f"  {r.label}: {r.note}")


def like_for_like(rows: list[Row], precision: str) -> tuple[Row, Row] | None:
    """``(best row, reference row)`` in ``precision``: the fastest row that counts (its accuracy not
    shown to differ) against the reference loop in the same precision; ``None`` if one is missing.

    >>> ref, fast = Row("(a) reference loop fp32", 100.0, 1, "fp32"), Row("(c) fused K=2 fp32", 90.0, 2, "fp32")
    >>> other = Row("(b) engine, 1 run bf16", 500.0, 1, "bf16")
    >>> [r.label for r in like_for_like([ref, fast, other], "fp32")]
    ['(c) fused K=2 fp32', '(a) reference loop fp32']
    """
    ref = next((r for r in rows if r.label.startswith("(a)") and r.precision == precision), None)
    ours = [r for r in rows if not r.label.startswith("(a)") and r.precision == precision and r.counts]
    if ref is None or not ours:
        return None
    return max(ours, key=lambda r: r.ips * r.runs), ref


def _checked(row: Row) -> str:
    return f"accuracy {row.verdict}" if row.verdict is not None else "accuracy not checked"


def print_ratios(rows: list[Row], precisions: list[str], bf16_vs_fp32: str | None) -> dict:
    """Print each precision's like-for-like speed-up, the cross-precision one only with its
    accuracy check, then ``peak_fraction=`` and ``ratio=`` of the fastest counted row; return them."""
    out: dict = {"ratios": {}}
    best: tuple[Row, Row] | None = None
    for p in precisions:
        pair = like_for_like(rows, p)
        if pair is None:
            print(f"ratio_{p}: not measured (the reference or every engine row in {p} is missing)")
            continue
        row, ref = pair
        out["ratios"][p] = row.ips * row.runs / ref.ips
        print(f"ratio_{p}={out['ratios'][p]:.2f}: {row.label} {row.ips * row.runs:,.1f} model-img/s over "
              f"{ref.label} {ref.ips:,.1f} img/s ({_checked(row)})")
        if best is None or row.ips * row.runs > best[0].ips * best[0].runs:
            best = pair
    cross = like_for_like(rows, "bf16") if "fp32" in precisions else None
    fp32_ref = next((r for r in rows if r.label == "(a) reference loop fp32"), None)
    if cross is not None and fp32_ref is not None:
        if bf16_vs_fp32 is None:
            print("cross-precision (bf16 over the fp32 reference): not reported, its accuracy was not checked "
                  "(--accuracy)")
        else:
            out["cross_precision_ratio"] = cross[0].ips * cross[0].runs / fp32_ref.ips
            print(f"cross-precision: {cross[0].label} over {fp32_ref.label}: {out['cross_precision_ratio']:.2f} "
                  f"(engine bf16 vs fp32 accuracy: {bf16_vs_fp32})")
    if best is None:
        print("ratio: not measured (reference or every configuration missing)")
        return {**out, "ratio": None}
    row, ref = best
    print(f"best: {row.label} ({row.ips * row.runs:,.1f} model-img/s, {_checked(row)})")
    print(f"peak_fraction={row.peak_fraction:.3f}")
    print(f"ratio={row.ips * row.runs / ref.ips:.2f}")
    return {**out, "best": row.label, "ratio": row.ips * row.runs / ref.ips, "best_verdict": row.verdict,
            "peak_fraction": row.peak_fraction, "peak_precision": row.precision}
