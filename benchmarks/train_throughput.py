"""Training throughput: reference loop, engine, fused groups, side by side (not a test).

Every configuration trains the same NB201 architecture with the NB201 protocol (same data,
batch size, epochs) and reports training images/s (evaluation excluded) and model-images/s
(images/s x the runs trained at once):

(a) reference, built the way the paper's released code trains: a torchvision-style dataset
    turning each HWC uint8 array into a PIL image, PIL transforms (flip, crop pad 4, ToTensor,
    Normalize) in DataLoader worker processes, fp32 eager NCHW, per-step ``.item()`` calls;
(b) the engine, one run: ``nasrescale.train.train`` -- uint8 data on the device, on-device
    crop+flip, channels_last, the protocol's precision (bf16 autocast on CUDA), no per-step
    host sync, pruned cells;
(c) fused groups of K = 2, 6, 12 runs (seeds 0..K-1) as one network
    (``nasrescale.train.train_fused``): model-images/s = K x images/s;
(d) ``jobs_per_gpu`` concurrent processes (``--jobs-per-gpu``): N single runs (seeds 0..N-1) as
    TrainJobs through the pipeline's pool executor (``nasrescale.executors.pool``, fusion off),
    N processes sharing one GPU; model-images/s = N x the processes' mean training images/s
    (each process's own training time). On a CPU the N processes share the cores (devices
    ``["cpu"] * N``): a stand-in for the code path, labelled as such, not a GPU figure;
(e) CUDA graphs: not implemented (not measured on a GPU yet).

Against the machine's limit, in the same run (``benchmarks/machine_peak.py``): the device's
measured fp32 GEMM (2048^2) and 3x3-convolution (C = ``--width``, the images' side, batch 256;
NCHW and channels_last) GFLOP/s; each configuration's achieved model GFLOP/s (model-images/s x
3 x the pruned network's forward FLOPs, :func:`nasrescale.models.cost.model_cost`) and
``peak_fraction`` (its share of the best measured kernel: the GEMM or a 3x3 conv, whichever is
faster; FLOPs are nominal, and oneDNN may run a 3x3 conv by Winograd with fewer multiply-adds
than counted, so a conv's nominal rate can pass the GEMM's); and ``epoch_s``, the seconds one run's epoch
of ``--budget-images`` training images costs at that rate (the study's budget per epoch).
``--resolution R`` box-downsamples every image to R x R first (the data's ``resolution`` knob).
The last lines read ``peak_fraction=<best engine configuration's>`` and ``ratio=``.

Speed settings under trial (defaults: today's behaviour): ``--memory-format contiguous``
(NCHW instead of channels_last), ``--split-convs`` (fused groups: K plain convolutions instead of
one grouped one), ``--compile`` (``torch.compile``; inductor caches compiled graphs on disk),
``--threads N`` (``torch.set_num_threads``); ``--profile N`` prints ``torch.profiler``'s N
busiest ops of one engine epoch (fp32, the timed images).

(b)-(d) run once per ``--precisions`` entry (``bf16,fp32``: the protocol's ``precision``; the
CPU always trains in fp32); (a) is fp32, as the released code. On CUDA every in-process
configuration reports its peak GPU memory (``torch.cuda.max_memory_allocated``; (d)'s
processes are not measured). ``--time-budget S`` skips what would not end within S seconds
(the table is printed either way); ``--json FILE`` writes every figure.

With ``--accuracy`` each configuration also trains a short recipe and reports the mean test
accuracy of its runs (reference and engine: ``--seeds`` seeds; fused K: its K members); a
configuration counts for the ratio only at parity, i.e. its mean within the larger of 1 point
and Welch's 95 % band (t quantile x the standard error of the difference of means, each group's
own seed spread) of the reference's. The last line reads
``ratio=<best nasrescale model-images/s / reference images/s>``.

Usage:
    python benchmarks/train_throughput.py                                   # CPU, small
    python benchmarks/train_throughput.py --width 8 --cells 1 --accuracy    # CPU, with accuracy
    python benchmarks/train_throughput.py --device cuda --train-images 10000 --epochs 2 \
        --accuracy --acc-images 50000 --acc-epochs 5 --data .data/cifar10.npz  # H100, full size
    python benchmarks/train_throughput.py --width 4 --cells 1 --train-images 256 --epochs 1 --ks 2 \
        --jobs-per-gpu 1,2 --workers 0                                      # CPU smoke run (seconds)
    python benchmarks/train_throughput.py --width 8 --cells 1 --train-images 2048 --epochs 1 --ks 2,6 \
        --jobs-per-gpu "" --precisions fp32 --budget-images 10000 --profile 15  # the CPU study's budget
    tools/gpu_allocation.sh bench            # full size in a time-limited GPU allocation (bf16 and fp32, JSON)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from dataclasses import dataclass

import scipy.stats
import torch
from PIL import Image
from torch import nn
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

from nasrescale.data import load_dataset, subset
from nasrescale.data.resize import downsample
from nasrescale.executors.base import ExecutorSettings
from nasrescale.executors.pool import PoolExecutor
from nasrescale.jobs.job import DataSpec, TrainJob
from nasrescale.models import build_model
from nasrescale.protocol import load_protocol
from nasrescale.space.registry import get_family
from nasrescale.scaling import param_groups
from nasrescale.jobs.fusion import build_member
from nasrescale.train import RunOptions, train, train_fused

from machine_peak import measure_peaks, profile_top_ops, train_flops_per_image

START = time.perf_counter()  # --time-budget counts from here (data loading included)
ARCH = "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|"


class ArrayImages(Dataset):
    """CIFAR-style dataset: HWC uint8 arrays turned into PIL images in ``__getitem__``."""

    def __init__(self, images: torch.Tensor, labels: torch.Tensor, transform: transforms.Compose) -> None:
        self.images = images.permute(0, 2, 3, 1).contiguous().numpy()  # NCHW -> HWC, as CIFAR's arrays
        self.labels = labels.tolist()
        self.transform = transform

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        return self.transform(Image.fromarray(self.images[i])), self.labels[i]


def reference_train(model: nn.Module, data, protocol, device: str, workers: int, seed: int) -> tuple[float, float]:  # noqa: ANN001
    """Train like the released code; return (training images/s, test accuracy %)."""
    torch.manual_seed(seed)
    mean, std = list(data.mean), list(data.std)
    side = data.train_images.shape[-1]
    train_tf = transforms.Compose([transforms.RandomHorizontalFlip(), transforms.RandomCrop(side, padding=data.crop_padding),
                                   transforms.ToTensor(), transforms.Normalize(mean, std)])
    test_tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean, std)])
    cuda = device.startswith("cuda")
    loader = DataLoader(ArrayImages(data.train_images, data.train_labels, train_tf), batch_size=protocol.batch_size,
                        shuffle=True, num_workers=workers, pin_memory=cuda)
    test_loader = DataLoader(ArrayImages(data.test_images, data.test_labels, test_tf), batch_size=protocol.batch_size,
                             shuffle=False, num_workers=workers, pin_memory=cuda)
    model.to(device)
    tf32 = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32  # restored at the end
    if cuda:  # the released code's fp32 (no TF32 convolutions, cuDNN's default), as the engine's fp32
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    optimizer = torch.optim.SGD(model.parameters(), lr=protocol.lr, momentum=protocol.momentum,
                                nesterov=protocol.nesterov, weight_decay=protocol.weight_decay)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, protocol.epochs, eta_min=0)
    criterion = nn.CrossEntropyLoss()
    images, train_time = 0, 0.0
    for _ in range(protocol.epochs):
        model.train()
        start = time.perf_counter()
        loss_sum = correct = 0.0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            out = model(x)
            loss = criterion(out, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += loss.item() * y.shape[0]  # per-step host syncs, as the released code's meters
            correct += (out.argmax(1) == y).sum().item()
            images += y.shape[0]
        if cuda:
            torch.cuda.synchronize()
        train_time += time.perf_counter() - start
        scheduler.step()
    model.eval()
    hits = 0
    with torch.no_grad():
        for x, y in test_loader:
            hits += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = tf32
    return images / train_time, 100.0 * hits / len(data.test_labels)


def fresh_model(family, data, width: int, cells: int, seed: int) -> nn.Module:  # noqa: ANN001
    torch.manual_seed(seed)
    side = data.train_images.shape[-1]
    return build_model(ARCH, family, data.num_classes, in_shape=(3, side, side), width=width, cells=cells)


def run_options(args: argparse.Namespace) -> RunOptions:
    """The engine's options of every (b) and (c) configuration."""
    return RunOptions(device=args.device, compile=args.compile, memory_format=args.memory_format,
                      split_convs=args.split_convs)


def ours_train(model: nn.Module, data, protocol, seed: int, options: RunOptions) -> tuple[float, float]:  # noqa: ANN001
    result = train(model, data, protocol, param_groups(model, protocol), options, seed=seed)
    return result.images_per_s, result.test_accuracy


def fused_train(k: int, family, data, protocol, width: int, cells: int,  # noqa: ANN001
                options: RunOptions) -> tuple[float, list[float]]:
    """K runs (seeds 0..K-1) as one fused network: (images/s per member, members' test accuracies)."""
    members = [build_member(ARCH, family, data, protocol, seed, width=width, cells=cells)[0] for seed in range(k)]
    results = train_fused(members, data, options)
    return results[0].images_per_s, [r.test_accuracy for r in results]


def pool_train(n: int, family, args, protocol, cuda: bool) -> tuple[float, float]:  # noqa: ANN001
    """N single runs (seeds 0..N-1) as N concurrent pool processes on one device: (mean training
    images/s per process, wall-clock images/s of the whole pool, spawn, data and evaluation included)."""
    name = "cifar10" if args.data else "cifar10-subset"
    data = DataSpec(name, args.data, None, args.train_images, 256, args.resolution)  # the timed images
    jobs = [TrainJob(ARCH, family, data, protocol, seed=s, width=args.width, cells=args.cells) for s in range(n)]
    devices = ["cuda:0" if cuda else "cpu"] * n  # one GPU, N processes (CPU: N processes share the cores)
    pool = PoolExecutor(ExecutorSettings(device="cuda" if cuda else "cpu", jobs_per_gpu=n, fuse=False),
                        devices=devices, progress=False)
    outcomes = []
    start = time.perf_counter()
    pool.run(jobs, outcomes.append)
    wall = time.perf_counter() - start
    failed = [o for o in outcomes if o.status != "done"]
    if failed:
        raise RuntimeError(f"pool run failed: {failed[0].error}")
    rates = [o.record["images_per_s"] for o in outcomes]
    total = sum(o.record["train_images"] * o.record["epochs_run"] for o in outcomes)
    return statistics.mean(rates), total / wall


def parity(accs: list[float], ref: list[float]) -> tuple[bool, str]:
    """Within seed noise of the reference: Welch's t-test at 5 % does not tell the means apart,
    and a difference of 1 point or less always counts as parity.

    The band is t(0.975, Welch-Satterthwaite df) x sqrt(s_a^2/n_a + s_r^2/n_r), each s the sample
    std within one group: the gap between the groups does not widen it, and with few seeds the t
    quantile does (about 4.3 standard errors at 2 seeds a side). A group of one run has no spread
    to estimate: then the 1-point floor alone decides.

    >>> parity([60.0, 61.0], [60.2, 60.6])[0], parity([63.5, 64.0], [58.0, 58.5])[0]
    (True, False)
    """
    diff = statistics.mean(accs) - statistics.mean(ref)
    terms = [statistics.variance(xs) / len(xs) for xs in (accs, ref) if len(xs) > 1]
    band = 1.0
    if len(terms) == 2 and sum(terms) > 0:
        df = sum(terms) ** 2 / sum(t * t / (len(xs) - 1) for t, xs in zip(terms, (accs, ref)))
        band = max(float(scipy.stats.t.ppf(0.975, df)) * sum(terms) ** 0.5, 1.0)
    ok = abs(diff) <= band
    return ok, f"{statistics.mean(accs):6.2f} +- {statistics.pstdev(accs):.2f} (n={len(accs)}, {diff:+.2f}, " \
               f"band {band:.2f}, {'parity' if ok else 'NO parity'})"


@dataclass
class Row:
    """One configuration's measurement (and, with ``--accuracy``, its verdict)."""

    label: str
    ips: float
    runs: int
    precision: str
    peak_mib: float | None = None
    accuracy: str = "-"
    counts: bool = True
    checked: bool = False
    note: str = ""
    gflops: float | None = None
    peak_fraction: float | None = None
    epoch_s: float | None = None

    def to_json(self) -> dict:
        return {**self.__dict__, "model_ips": self.ips * self.runs}


class Clock:
    """``--time-budget``: a step is skipped when the budget is spent or would be by a step as
    long as the longest so far, so the script ends (with its table) inside its time share."""

    def __init__(self, budget: float | None) -> None:
        self.start, self.budget, self.longest, self.skipped = START, budget, 0.0, []

    def run(self, label: str, fn):  # noqa: ANN001, ANN201 - any callable, its result or None
        elapsed = time.perf_counter() - self.start
        if self.budget is not None and elapsed + self.longest > self.budget:
            self.skipped.append(label)
            print(f"  {label}: skipped (time budget {self.budget:.0f} s: {elapsed:.0f} s used)", flush=True)
            return None
        t0 = time.perf_counter()
        out = fn()
        self.longest = max(self.longest, time.perf_counter() - t0)
        return out


def with_peak(fn, cuda: bool):  # noqa: ANN001, ANN201
    """``(fn(), peak GPU memory in MiB)`` (``None`` on the CPU)."""
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    out = fn()
    return out, (torch.cuda.max_memory_allocated() / 2**20 if cuda else None)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--data", help="dataset: an image pack (.npz, tools/pack_cifar10.py) loaded as cifar10; "
                                       "default: the shipped CIFAR-10 subset")
    parser.add_argument("--train-images", type=int, default=1024, help="training images of the timed runs")
    parser.add_argument("--epochs", type=int, default=2, help="timed epochs per configuration (after a warm-up epoch)")
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--cells", type=int, default=5)
    parser.add_argument("--ks", default="2,6,12", help="fused group sizes")
    parser.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1), help="reference DataLoader workers")
    parser.add_argument("--compile", action="store_true", help="torch.compile our models")
    parser.add_argument("--accuracy", action="store_true", help="also compare accuracy after a short recipe")
    parser.add_argument("--acc-images", type=int, default=None, help="training images of the recipe (default: all)")
    parser.add_argument("--acc-epochs", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=3, help="seeds of the reference and engine recipes")
    parser.add_argument("--jobs-per-gpu", default="2,4", help="(d): concurrent pool processes on one device")
    parser.add_argument("--precisions", default="bf16", help="precisions of (b)-(d), e.g. bf16,fp32 (the CPU always "
                                                             "trains in fp32); (a) is fp32, as the released code")
    parser.add_argument("--time-budget", type=float, default=None, help="seconds: skip what would not end in time")
    parser.add_argument("--resolution", type=int, default=None, help="box-downsample every image to this side first")
    parser.add_argument("--budget-images", type=int, default=None,
                        help="training images per epoch of the study's budget, for epoch_s (default: --train-images)")
    parser.add_argument("--memory-format", default="channels_last", choices=["channels_last", "contiguous"],
                        help="layout of (b)/(c)'s weights and inputs")
    parser.add_argument("--split-convs", action="store_true", help="(c): K plain convolutions, not one grouped one")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads for this process")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="print torch.profiler's N busiest ops of one engine epoch (fp32)")
    parser.add_argument("--json", help="also write every figure to this JSON file")
    return parser.parse_args()


class Bench:
    """The configurations of one benchmark run (see the module docstring)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args, self.family = args, get_family("nb201")
        data = load_dataset("cifar10", args.data) if args.data else load_dataset("cifar10-subset")
        self.data = downsample(data, args.resolution) if args.resolution else data
        self.timing_data = subset(self.data, args.train_images, 256, seed=0)
        self.side = self.data.train_images.shape[-1]
        self.options = run_options(args)
        self.cuda = args.device.startswith("cuda")
        self.clock = Clock(args.time_budget)
        self.rows: list[Row] = []
        self.precisions = [p.strip() for p in args.precisions.split(",") if p.strip()]

    def model(self, d, seed: int) -> nn.Module:  # noqa: ANN001
        return fresh_model(self.family, d, self.args.width, self.args.cells, seed)

    def protocol(self, epochs: int, precision: str = "fp32"):  # noqa: ANN201
        return load_protocol("nb201", [f"epochs={epochs}", f"precision={precision}"])

    def add(self, label: str, fn, runs: int, precision: str) -> None:  # noqa: ANN001
        """Time one configuration (a warm-up inside ``fn``) and print it."""
        got = self.clock.run(label, lambda: with_peak(fn, self.cuda))
        if got is None:
            return
        ips, peak = got
        self.rows.append(Row(label, ips, runs, precision, peak))
        mem = f", peak {peak:,.0f} MiB" if peak is not None else ""
        print(f"  {label}: {ips:,.1f} img/s = {runs * ips:,.1f} model-img/s{mem}", flush=True)

    def timing(self) -> None:
        """Rows (a)-(d): (a) once, (b)-(d) per precision."""
        a, d, dev = self.args, self.timing_data, self.args.device
        warm, timed = self.protocol(1), self.protocol(a.epochs)

        def reference() -> float:
            reference_train(self.model(d, 0), d, warm, dev, a.workers, 0)
            return reference_train(self.model(d, 0), d, timed, dev, a.workers, 0)[0]

        self.add("(a) reference loop", reference, 1, "fp32")
        for p in self.precisions:
            warm, timed = self.protocol(1, p), self.protocol(a.epochs, p)
            self.add(f"(b) engine, 1 run {p}", self._engine(warm, timed), 1, p)
            for k in (int(k) for k in a.ks.split(",") if k.strip()):
                self.add(f"(c) fused K={k} {p}", self._fused(k, warm, timed), k, p)
            for n in (int(n) for n in a.jobs_per_gpu.split(",") if n.strip()):
                self._pool_row(n, timed, p)

    def _engine(self, warm, timed):  # noqa: ANN001, ANN202
        d, o = self.timing_data, self.options
        return lambda: (ours_train(self.model(d, 0), d, warm, 0, o), ours_train(self.model(d, 0), d, timed, 0, o)[0])[1]

    def _fused(self, k: int, warm, timed):  # noqa: ANN001, ANN202
        a, d, o = self.args, self.timing_data, self.options
        return lambda: (fused_train(k, self.family, d, warm, a.width, a.cells, o),
                        fused_train(k, self.family, d, timed, a.width, a.cells, o)[0])[1]

    def profile(self) -> None:
        """``--profile N``: the busiest ops of one engine epoch (fp32) on the timed images."""
        d, protocol = self.timing_data, self.protocol(1)
        ours_train(self.model(d, 0), d, protocol, 0, self.options)  # warm-up
        print(profile_top_ops(lambda: ours_train(self.model(d, 0), d, protocol, 0, self.options),
                              self.args.profile, self.cuda), flush=True)

    def _pool_row(self, n: int, timed, precision: str) -> None:  # noqa: ANN001
        """(d): each process warms up in its own first epoch (counted: a pipeline job does too)."""
        label = (f"(d) jobs_per_gpu={n}" if self.cuda else f"(d) {n} CPU proc*") + f" {precision}"
        got = self.clock.run(label, lambda: pool_train(n, self.family, self.args, timed, self.cuda))
        if got is None:
            return
        ips, wall_ips = got
        note = f"pool wall clock {wall_ips:,.1f} img/s incl. spawn, data, eval; memory: separate processes"
        self.rows.append(Row(label, ips, n, precision, None, note=note))
        print(f"  {label}: {ips:,.1f} img/s per process = {n * ips:,.1f} model-img/s ({note})", flush=True)

    def accuracy(self) -> dict:
        """Mean test accuracy per configuration after a short recipe; parity with (a); bf16 vs fp32."""
        a = self.args
        data = subset(self.data, a.acc_images, None, seed=0) if a.acc_images else self.data
        ref = self.clock.run("accuracy (a)", lambda: [
            reference_train(self.model(data, s), data, self.protocol(a.acc_epochs), a.device, a.workers, s)[1]
            for s in range(a.seeds)])
        if ref is None:
            return {}
        engine: dict[str, list[float]] = {}
        order = sorted(self.rows, key=lambda r: (r.label[:3], self.precisions.index(r.precision)
                                                 if r.precision in self.precisions else -1))
        for row in order:  # (a), every (b), then (c) and (d): what a time budget cuts is the least needed
            accs = self._row_accuracies(row, data, ref, engine)
            if accs is not None and row.label.startswith("(a)"):  # the baseline: no verdict against itself
                row.checked = True
                row.counts, row.accuracy = True, f"{statistics.mean(ref):6.2f} +- {statistics.pstdev(ref):.2f} (n={len(ref)}, the baseline)"
            elif accs is not None:
                row.checked = True
                row.counts, row.accuracy = parity(accs, ref)
        print(f"accuracy: {a.acc_epochs} epochs on {data.train_images.shape[0]} images, "
              f"test {data.test_images.shape[0]} images", flush=True)
        if "bf16" in engine and "fp32" in engine:
            return {"bf16_vs_fp32": parity(engine["bf16"], engine["fp32"])[1]}
        return {}

    def _row_accuracies(self, row: Row, data, ref: list[float], engine: dict) -> list[float] | None:  # noqa: ANN001
        a, recipe = self.args, self.protocol(self.args.acc_epochs, row.precision)
        if row.label.startswith("(a)"):
            return ref
        if row.label.startswith("(b)"):
            accs = self.clock.run(f"accuracy {row.label}", lambda: [
                ours_train(self.model(data, s), data, recipe, s, self.options)[1] for s in range(a.seeds)])
            if accs is not None:  # skipped for the time budget: no verdict, and no bf16-vs-fp32 parity
                engine[row.precision] = accs
            return accs
        if row.label.startswith("(d)"):  # each process runs the engine itself: (b)'s verdict
            if engine.get(row.precision):
                row.checked = True
                row.counts, row.accuracy = parity(engine[row.precision], ref)[0], "as (b): the engine in each process"
            return None
        k = row.runs
        return self.clock.run(f"accuracy {row.label}", lambda: fused_train(
            k, self.family, data, recipe, a.width, a.cells, self.options)[1])

    def limits(self) -> None:
        """The machine's measured fp32 GEMM and 3x3-conv GFLOP/s and the model's FLOPs per trained image."""
        a = self.args
        self.peaks = measure_peaks(a.device, a.width, self.side)
        self.flops = train_flops_per_image(ARCH, self.family, self.data.num_classes, a.width, a.cells, self.side)
        print("machine: " + ", ".join(f"{k}={v:,.1f}" for k, v in self.peaks.items())
              + f"; model: {self.flops / 6e6:,.2f} M MACs per image forward, {self.side}x{self.side} images",
              flush=True)

    def _against_limits(self, r: Row) -> None:
        """A row's achieved model GFLOP/s, its share of the best measured kernel, and one run's epoch cost."""
        model_ips = r.ips * r.runs
        r.gflops = model_ips * self.flops / 1e9
        r.peak_fraction = r.gflops / max(self.peaks.values())
        r.epoch_s = (self.args.budget_images or self.args.train_images) / model_ips

    def table(self, extra: dict) -> dict:
        """Print the table, the notes, ``peak_fraction=`` and ``ratio=``; return everything as JSON-ready data."""
        budget = self.args.budget_images or self.args.train_images
        print(f"{'configuration':<28} {'images/s':>10} {'model-img/s':>12} {'peak MiB':>9} {'GFLOP/s':>8} "
              f"{'peak_frac':>9} {'epoch_s':>8}  accuracy   (epoch_s: one run's epoch of {budget:,} images)")
        for r in self.rows:
            self._against_limits(r)
            peak = f"{r.peak_mib:>9,.0f}" if r.peak_mib is not None else f"{'-':>9}"
            print(f"{r.label:<28} {r.ips:>10,.1f} {r.ips * r.runs:>12,.1f} {peak} {r.gflops:>8,.1f} "
                  f"{r.peak_fraction:>9.2f} {r.epoch_s:>8,.1f}  {r.accuracy}")
        if not self.cuda:
            print("* (d) on the CPU: N processes share the cores (devices ['cpu'] * N), a stand-in for the "
                  "jobs_per_gpu code path, not a GPU figure; the CPU trains in fp32 whatever the precision says")
        for r in (r for r in self.rows if r.note):
            print(f"  {r.label}: {r.note}")
        print(f"{'(e) CUDA graphs':<28} not implemented (the training step is not captured as a CUDA graph)")
        for key, value in extra.items():
            print(f"{key}: {value}")
        if self.clock.skipped:
            print(f"skipped for the time budget: {', '.join(self.clock.skipped)}")
        return {"rows": [r.to_json() for r in self.rows], "skipped": self.clock.skipped, "peaks": self.peaks,
                "train_flops_per_image": self.flops, **extra, **self.ratio()}

    def ratio(self) -> dict:
        """Best nasrescale model-images/s at parity (or unchecked) over the reference's images/s."""
        ref = next((r for r in self.rows if r.label.startswith("(a)")), None)
        ours = [r for r in self.rows if not r.label.startswith("(a)") and r.counts]
        if ref is None or not ours:
            print("ratio: not measured (reference or every configuration missing)")
            return {"ratio": None}
        best = max(ours, key=lambda r: r.ips * r.runs)
        unchecked = " (accuracy not checked)" if not best.checked else ""
        print(f"best: {best.label} ({best.ips * best.runs:,.1f} model-img/s){unchecked}")
        print(f"peak_fraction={best.peak_fraction:.2f}")
        print(f"ratio={best.ips * best.runs / ref.ips:.2f}")
        return {"best": best.label, "ratio": best.ips * best.runs / ref.ips, "best_checked": best.checked,
                "peak_fraction": best.peak_fraction}


def main() -> None:
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    bench = Bench(args)
    name = torch.cuda.get_device_name() if bench.cuda else f"CPU ({torch.get_num_threads()} threads)"
    header = (f"device: {name}; torch {torch.__version__}; CUDA {torch.version.cuda}; arch {ARCH}; C={args.width}, "
              f"N={args.cells}; {args.train_images} images of {bench.side}x{bench.side} x {args.epochs} epochs, "
              f"batch 256; memory format {args.memory_format}; precisions "
              f"{','.join(bench.precisions)}; reference workers {args.workers}; load average {os.getloadavg()[0]:.1f}")
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


if __name__ == "__main__":
    main()
