"""Training throughput: reference loop, engine, fused groups, side by side (not a test).

Every configuration trains the same NB201 architecture with the NB201 protocol (same data,
batch size, epochs) and reports training images/s (evaluation excluded) and model-images/s
(images/s x the runs trained at once), once per precision it trains in (``--precisions``; the
CPU trains in fp32 whatever is asked, so there the rows are fp32's alone):

(a) the reference loop (``reference_loop.py``), built the way the paper's released code trains,
    in the row's precision (bf16 autocast on CUDA for bf16);
(b) the engine, one run: ``nasrescale.train.train`` -- uint8 data on the device, on-device
    crop+flip, no per-step host sync, pruned cells;
(c) fused groups of K = 2, 6, 12 runs (seeds 0..K-1) as one network
    (``nasrescale.train.train_fused``): model-images/s = K x images/s;
(d) ``jobs_per_gpu`` concurrent processes (``--jobs-per-gpu``): N single runs through the
    pipeline's pool executor on one device; on a CPU the N processes share the cores (a
    stand-in for the code path, labelled as such, not a GPU figure).

``--modes eager,compile,graphs`` repeats (b) and (c) per way of running the step: eager,
``torch.compile``, and ``torch.compile(mode="reduce-overhead")`` (CUDA graphs of the forward and
backward on CUDA). cuDNN's autotuner is on for the engine's CUDA runs (fixed shapes).

Against the machine's limit, in the same run (``machine_peak.py``): the peak of every precision
(exact fp32, TF32 on CUDA, bf16: a 2048^2 GEMM and a 3x3 convolution in NCHW and channels_last),
with the vendor's dense peak beside it for a known GPU; each row's model GFLOP/s (model-images/s x
3 x the pruned network's forward FLOPs) and ``peak_fraction`` against the peak of the precision
it trains in; ``epoch_s``, one run's epoch of ``--budget-images`` images at that rate.
``--memory-format measured`` (default) takes, per precision, the layout whose 3x3 convolution
measured faster (``nasrescale.train.memory_format.pick_memory_format``: on CUDA in exact fp32 NCHW
unless measured slower) and the table says which each row used.

Speed-ups compare like with like: ``ratio_<p>=`` is the best row in precision p over the
reference loop in p. A cross-precision speed-up (bf16 rows over the fp32 reference) is printed
only with ``--accuracy``, beside the engine's bf16-vs-fp32 verdict. With ``--accuracy`` each
configuration trains a short recipe (``--seeds`` seeds; a fused K: its K members) and gets the
verdict of ``parity.py`` against the reference in its precision (Welch's t, +-``--margin``
points; "undetermined (n too small)" under 10 seeds); a row found "different" does not count for
a speed-up. ``benchmarks/parity.py`` is the check with power: >= 10 seeds past the anneal.
The last lines read ``peak_fraction=`` (the fastest counted row's) and ``ratio=`` (its like-for-like).

Usage:
    python benchmarks/train_throughput.py                                   # CPU, small
    python benchmarks/train_throughput.py --width 4 --cells 1 --train-images 256 --epochs 1 --ks 2 \
        --jobs-per-gpu 1,2 --workers 0                                      # CPU smoke run (seconds)
    python benchmarks/train_throughput.py --device cuda --data .data/cifar10.npz --train-images 10000 \
        --precisions bf16,fp32 --modes eager,compile,graphs                # a GPU
    tools/gpu_allocation.sh bench modes      # full size in a time-limited GPU allocation (JSON)
"""

from __future__ import annotations

import argparse
import json
import os

import torch

from nasrescale.data import load_dataset, subset
from nasrescale.data.resize import downsample
from nasrescale.protocol import load_protocol
from nasrescale.space.family_loader import get_family
from nasrescale.train import RunOptions
from nasrescale.train.memory_format import pick_memory_format
from nasrescale.train.precision import trained_precision

from arms import ARCH, fresh_model, fused_train, ours_train
from bench_parts import Clock, Row, pool_train, with_peak
from bench_report import accuracy_text, print_ratios, print_table
from machine_peak import conv_rates, format_peaks, measure_peaks, peak_of, profile_top_ops, train_flops_per_image
from parity import verdict
from reference_loop import reference_train

#: ``--modes``: how (b) and (c) run the step -> (compile, compile_mode)
MODES = {"eager": (False, "default"), "compile": (True, "default"), "graphs": (True, "reduce-overhead")}


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = p.add_argument
    add("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    add("--data", help="an image pack (.npz, tools/pack_cifar10.py) loaded as cifar10; default: the shipped subset")
    add("--train-images", type=int, default=1024, help="training images of the timed runs")
    add("--epochs", type=int, default=2, help="timed epochs per configuration (after a warm-up epoch)")
    add("--width", type=int, default=16)
    add("--cells", type=int, default=5)
    add("--ks", default="2,6,12", help="fused group sizes")
    add("--workers", type=int, default=min(4, os.cpu_count() or 1), help="reference DataLoader workers")
    add("--modes", default="eager", help="how (b) and (c) run the step: eager, compile, graphs (comma separated)")
    add("--accuracy", action="store_true", help="also compare accuracy after a short recipe")
    add("--acc-images", type=int, default=None, help="training images of the recipe (default: all)")
    add("--acc-epochs", type=int, default=10)
    add("--seeds", type=int, default=3, help="seeds of the reference and engine recipes")
    add("--margin", type=float, default=0.5, help="accuracy equivalence margin in points")
    add("--jobs-per-gpu", default="2,4", help="(d): concurrent pool processes on one device")
    add("--precisions", default="bf16", help="precisions, e.g. bf16,fp32 (the CPU trains in fp32 whatever is asked)")
    add("--time-budget", type=float, default=None, help="seconds: skip what would not end in time")
    add("--resolution", type=int, default=None, help="box-downsample every image to this side first")
    add("--budget-images", type=int, default=None,
        help="training images per epoch of the study's budget, for epoch_s (default: --train-images)")
    add("--memory-format", default="measured", choices=["measured", "auto", "channels_last", "contiguous"],
        help="layout of (b)/(c): measured (the faster conv of this run's table), auto (the engine's rule), or fixed")
    add("--split-convs", action="store_true", help="(c): K plain convolutions, not one grouped one")
    add("--threads", type=int, default=None, help="torch.set_num_threads for this process")
    add("--profile", type=int, default=0, metavar="N", help="print torch.profiler's N busiest ops of one engine epoch")
    add("--json", help="also write every figure to this JSON file")
    args = p.parse_args(argv)
    bad = [m for m in _split(args.modes) if m not in MODES]
    if bad:
        p.error(f"--modes: {bad[0]!r} is unknown; use {', '.join(MODES)}")
    return args


class Bench:
    """The configurations of one benchmark run (see the module docstring)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args, self.family = args, get_family("nb201")
        data = load_dataset("cifar10", args.data) if args.data else load_dataset("cifar10-subset")
        self.data = downsample(data, args.resolution) if args.resolution else data
        self.timing_data = subset(self.data, args.train_images, 256, seed=0)
        self.side = self.data.train_images.shape[-1]
        self.cuda = args.device.startswith("cuda")
        self.clock = Clock(args.time_budget)
        self.rows: list[Row] = []
        self.asked = _split(args.precisions)
        self.precisions = list(dict.fromkeys(trained_precision(p, args.device) for p in self.asked))
        self.modes = _split(args.modes) or ["eager"]
        self.formats: dict[str, str] = {}

    def model(self, d, seed: int) -> torch.nn.Module:  # noqa: ANN001
        return fresh_model(self.family, d, self.args.width, self.args.cells, seed)

    def protocol(self, epochs: int, precision: str = "fp32"):  # noqa: ANN201
        return load_protocol("nb201", [f"epochs={epochs}", f"precision={precision}"])

    def options(self, precision: str, mode: str = "eager") -> RunOptions:
        compile_, compile_mode = MODES[mode]
        return RunOptions(device=self.args.device, compile=compile_, compile_mode=compile_mode,
                          memory_format=self.formats.get(precision, "auto"), split_convs=self.args.split_convs)

    def limits(self) -> None:
        """Every precision's measured peaks, the memory format per precision, the FLOPs per image."""
        a = self.args
        self.peaks = measure_peaks(a.device, a.width, self.side)
        self.flops = train_flops_per_image(ARCH, self.family, self.data.num_classes, a.width, a.cells, self.side)
        self.device_name = torch.cuda.get_device_name(a.device) if self.cuda else "cpu"
        print("\n".join(format_peaks(self.peaks, self.device_name)), flush=True)
        print(f"model: {self.flops / 6e6:,.2f} M MACs per image forward, {self.side}x{self.side} images", flush=True)
        dev = "cuda" if self.cuda else "cpu"
        for p in self.precisions:
            rates = conv_rates(self.peaks, p)
            self.formats[p] = (pick_memory_format(dev, p, rates) if a.memory_format == "measured" else
                               pick_memory_format(dev, p) if a.memory_format == "auto" else a.memory_format)
            shown = ", ".join(f"{k} {v:,.1f}" for k, v in rates.items())
            print(f"memory format {p}: {self.formats[p]} ({a.memory_format}; 3x3 conv GFLOP/s: {shown})", flush=True)

    def add(self, label: str, fn, runs: int, precision: str, fmt: str = "contiguous") -> None:  # noqa: ANN001
        """Time one configuration (a warm-up inside ``fn``) and print it."""
        got = self.clock.run(label, lambda: with_peak(fn, self.cuda))
        if got is None:
            return
        ips, peak = got
        self.rows.append(Row(label, ips, runs, precision, peak, memory_format=fmt))
        mem = f", peak {peak:,.0f} MiB" if peak is not None else ""
        print(f"  {label}: {ips:,.1f} img/s = {runs * ips:,.1f} model-img/s{mem}", flush=True)

    def timing(self) -> None:
        """Rows (a)-(d) per precision; (b) and (c) per mode."""
        a = self.args
        if self.asked != self.precisions:
            print(f"precisions {','.join(self.asked)} train as {','.join(self.precisions)} on this device", flush=True)
        for p in self.precisions:
            warm, timed = self.protocol(1, p), self.protocol(a.epochs, p)
            self.add(f"(a) reference loop {p}", self._reference(warm, timed, p), 1, p)
            for mode in self.modes:
                o, tag = self.options(p, mode), "" if mode == "eager" else f" {mode}"
                self.add(f"(b) engine, 1 run {p}{tag}", self._engine(warm, timed, o), 1, p, self.formats[p])
                for k in (int(k) for k in _split(a.ks)):
                    self.add(f"(c) fused K={k} {p}{tag}", self._fused(k, warm, timed, o), k, p, self.formats[p])
            for n in (int(n) for n in _split(a.jobs_per_gpu)):
                self._pool_row(n, timed, p)

    def _reference(self, warm, timed, precision: str):  # noqa: ANN001, ANN202
        a, d = self.args, self.timing_data
        return lambda: (reference_train(self.model(d, 0), d, warm, a.device, a.workers, 0, precision),
                        reference_train(self.model(d, 0), d, timed, a.device, a.workers, 0, precision)[0])[1]

    def _engine(self, warm, timed, o: RunOptions):  # noqa: ANN001, ANN202
        d = self.timing_data
        return lambda: (ours_train(self.model(d, 0), d, warm, 0, o), ours_train(self.model(d, 0), d, timed, 0, o)[0])[1]

    def _fused(self, k: int, warm, timed, o: RunOptions):  # noqa: ANN001, ANN202
        a, d = self.args, self.timing_data
        return lambda: (fused_train(k, self.family, d, warm, a.width, a.cells, o),
                        fused_train(k, self.family, d, timed, a.width, a.cells, o)[0])[1]

    def _pool_row(self, n: int, timed, precision: str) -> None:  # noqa: ANN001
        """(d): each process warms up in its own first epoch (counted: a pipeline job does too)."""
        label = (f"(d) jobs_per_gpu={n}" if self.cuda else f"(d) {n} CPU proc*") + f" {precision}"
        got = self.clock.run(label, lambda: pool_train(n, self.family, self.args, timed, self.cuda))
        if got is None:
            return
        ips, wall_ips = got
        note = f"pool wall clock {wall_ips:,.1f} img/s incl. spawn, data, eval; memory: separate processes"
        self.rows.append(Row(label, ips, n, precision, None, note=note, memory_format="auto"))
        print(f"  {label}: {ips:,.1f} img/s per process = {n * ips:,.1f} model-img/s ({note})", flush=True)

    def profile(self) -> None:
        """``--profile N``: the busiest ops of one engine epoch in the first precision, on the timed images."""
        d, p = self.timing_data, self.precisions[0]
        protocol, o = self.protocol(1, p), self.options(p)
        ours_train(self.model(d, 0), d, protocol, 0, o)  # warm-up
        print(profile_top_ops(lambda: ours_train(self.model(d, 0), d, protocol, 0, o), self.args.profile, self.cuda),
              flush=True)

    def accuracy(self) -> dict:
        """Each eager row's accuracy after a short recipe and its verdict against the reference in
        its precision; other modes and (d) take their eager engine's; the engine's bf16 vs fp32."""
        a = self.args
        data = subset(self.data, a.acc_images, None, seed=0) if a.acc_images else self.data
        refs: dict[str, list[float]] = {}
        engine: dict[str, list[float]] = {}
        order = sorted(self.rows, key=lambda r: r.label[:3])  # (a), (b), (c), (d): a cut budget drops the least needed
        for row in order:
            accs = self._row_accuracies(row, data, refs, engine)
            if accs is None:
                continue
            if row.label.startswith("(a)"):
                refs[row.precision], row.accuracy = accs, accuracy_text(accs, None)
            elif row.precision in refs:
                v = verdict(accs, refs[row.precision], a.margin)
                row.verdict, row.accuracy = v.verdict, accuracy_text(accs, v)
        for row in order:  # other modes and (d): their eager engine's verdict
            eager = next((r for r in self.rows if r.label == f"(b) engine, 1 run {row.precision}"), None)
            if row.verdict is None and row.accuracy == "-" and eager is not None and eager.verdict is not None:
                row.verdict, row.accuracy = eager.verdict, "as (b) eager: the same engine"
        print(f"accuracy: {a.acc_epochs} epochs on {data.train_images.shape[0]} images, "
              f"test {data.test_images.shape[0]} images", flush=True)
        if "bf16" in engine and "fp32" in engine:
            v = verdict(engine["bf16"], engine["fp32"], a.margin)
            return {"bf16_vs_fp32": v.text(), "bf16_vs_fp32_verdict": v.verdict}
        return {}

    def _row_accuracies(self, row: Row, data, refs: dict, engine: dict) -> list[float] | None:  # noqa: ANN001
        a, recipe = self.args, self.protocol(self.args.acc_epochs, row.precision)
        p, eager = row.precision, not any(row.label.endswith(f" {m}") for m in MODES if m != "eager")
        if row.label.startswith("(a)"):
            return self.clock.run(f"accuracy {row.label}", lambda: [
                reference_train(self.model(data, s), data, recipe, a.device, a.workers, s, p)[1]
                for s in range(a.seeds)])
        if row.label.startswith("(d)") or not eager:
            return None
        if row.label.startswith("(b)"):
            accs = self.clock.run(f"accuracy {row.label}", lambda: [
                ours_train(self.model(data, s), data, recipe, s, self.options(p))[1] for s in range(a.seeds)])
            if accs is not None:  # skipped for the time budget: no verdict, and no bf16-vs-fp32 one
                engine[p] = accs
            return accs
        return self.clock.run(f"accuracy {row.label}", lambda: fused_train(
            row.runs, self.family, data, recipe, a.width, a.cells, self.options(p))[1])

    def against_limits(self, r: Row) -> None:
        """A row's model GFLOP/s, its share of its own precision's peak, one run's epoch cost."""
        model_ips = r.ips * r.runs
        r.gflops = model_ips * self.flops / 1e9
        r.peak_fraction = r.gflops / peak_of(self.peaks, r.precision)[1]
        r.epoch_s = (self.args.budget_images or self.args.train_images) / model_ips

    def table(self, extra: dict) -> dict:
        """Print the table, the speed-ups and the last lines; return everything as JSON-ready data."""
        for r in self.rows:
            self.against_limits(r)
        print_table(self.rows, self.args.budget_images or self.args.train_images, self.cuda)
        for key, value in extra.items():
            print(f"{key}: {value}")
        if self.clock.skipped:
            print(f"skipped for the time budget: {', '.join(self.clock.skipped)}")
        return {"rows": [r.to_json() for r in self.rows], "skipped": self.clock.skipped, "peaks": self.peaks,
                "memory_formats": self.formats, "train_flops_per_image": self.flops, **extra,
                **print_ratios(self.rows, self.precisions, extra.get("bf16_vs_fp32"))}


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    bench = Bench(args)
    name = torch.cuda.get_device_name() if bench.cuda else f"CPU ({torch.get_num_threads()} threads)"
    header = (f"device: {name}; torch {torch.__version__}; CUDA {torch.version.cuda}; arch {ARCH}; C={args.width}, "
              f"N={args.cells}; {args.train_images} images of {bench.side}x{bench.side} x {args.epochs} epochs, "
              f"batch 256; precisions {','.join(bench.precisions)}; modes {','.join(bench.modes)}; reference "
              f"workers {args.workers}; load average {os.getloadavg()[0]:.1f}")
    print(header, flush=True)
    bench.limits()
    if args.profile:
        bench.profile()
    bench.timing()
    extra = bench.accuracy() if args.accuracy else {}
    result = {"header": header, "device": name, "torch": torch.__version__, "cuda": torch.version.cuda,
              "args": vars(args), **bench.table(extra)}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    return result


if __name__ == "__main__":
    main()
