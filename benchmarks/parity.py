"""Accuracy parity that can fail: arms of >= 10 seeds, Welch's t and an equivalence margin (not a test).

:func:`verdict` compares two arms' test accuracies (one value per seed):

* ``"undetermined (n too small)"`` when an arm has fewer than ``min_n`` seeds;
* ``"equivalent"`` when the 90 % Welch interval of the difference of means lies inside
  ``+-margin`` points (two one-sided tests at 5 %; the default margin, 0.5 points, is the size of
  the study's effects);
* ``"different"`` when Welch's two-sided t-test at 5 % rejects equal means and the difference is
  not shown to lie inside the margin;
* else ``"undetermined (n too small)"``: the interval is too wide to tell, more seeds are needed.

Each arm's spread is its sample standard deviation (n - 1). ``python benchmarks/parity.py``
trains the arms with one run per seed -- the reference loop and the engine in fp32, the engine
in bf16 where the device computes in it (CUDA; a CPU with native bf16), and optionally a control
arm at a shifted LR, which must come out "different" -- with a recipe that runs past the
schedule's anneal (the study's 6 epochs by default), and prints each comparison's verdict and
the CPU or GPU it ran on.

Usage:
    python benchmarks/parity.py --width 8 --cells 1 --images 5000 --resolution 16 --seeds 10 --control-lr 0.5
    python benchmarks/parity.py --device cuda --data .data/cifar10.npz --images 10000 --seeds 10  # a GPU
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Callable

import scipy.stats
import torch

from nasrescale.data import load_dataset, subset
from nasrescale.data.resize import downsample
from nasrescale.protocol import load_protocol
from nasrescale.space.family_loader import get_family
from nasrescale.train import RunOptions

from arms import engine_arm, reference_arm

__all__ = ["Verdict", "verdict", "run_arms", "anneal_factor", "cpu_model", "cpu_has_bf16"]

UNDETERMINED = "undetermined (n too small)"


@dataclass(frozen=True)
class Verdict:
    """Arm ``a`` against arm ``b``: the difference of mean accuracies (points), its 90 % Welch
    interval, Welch's two-sided p, the seeds per arm and the verdict."""

    verdict: str
    diff: float
    low: float
    high: float
    p: float
    n_a: int
    n_b: int
    margin: float

    def text(self) -> str:
        return (f"{self.diff:+.2f} points, 90 % CI [{self.low:+.2f}, {self.high:+.2f}], Welch p = {self.p:.3f}, "
                f"n = {self.n_a} / {self.n_b}, margin +-{self.margin:g}: {self.verdict}")


def verdict(a: list[float], b: list[float], margin: float = 0.5, min_n: int = 10, alpha: float = 0.05) -> Verdict:
    """Arm ``a``'s accuracies against arm ``b``'s (see the module docstring).

    >>> verdict([70.0, 70.2] * 5, [70.1, 70.3] * 5).verdict
    'equivalent'
    >>> verdict([70.0, 71.0] * 5, [60.0, 61.0] * 5).verdict
    'different'
    >>> verdict([70.0, 71.0], [60.0, 61.0]).verdict
    'undetermined (n too small)'
    """
    diff = statistics.mean(a) - statistics.mean(b)
    terms = [statistics.variance(xs) / len(xs) if len(xs) > 1 else math.inf for xs in (a, b)]
    se = math.sqrt(sum(terms))
    if se == 0:  # identical runs within each arm: the difference is exact
        low = high = diff
        p = 1.0 if diff == 0 else 0.0
    elif math.isinf(se):
        low, high, p = -math.inf, math.inf, 1.0
    else:
        df = sum(terms) ** 2 / sum(t * t / (len(xs) - 1) for t, xs in zip(terms, (a, b)))
        half = float(scipy.stats.t.ppf(1 - alpha, df)) * se
        low, high = diff - half, diff + half
        p = float(2 * scipy.stats.t.sf(abs(diff) / se, df))
    if min(len(a), len(b)) < min_n:
        name = UNDETERMINED
    elif -margin < low and high < margin:
        name = "equivalent"
    elif p < alpha:
        name = "different"
    else:
        name = UNDETERMINED
    return Verdict(name, diff, low, high, p, len(a), len(b), margin)


def run_arms(arms: dict[str, Callable[[int], float]], seeds: int, log: Callable[[str], None] = print
             ) -> dict[str, list[float]]:
    """Each arm's test accuracy per seed ``0..seeds-1``."""
    out: dict[str, list[float]] = {}
    for name, arm in arms.items():
        start = time.perf_counter()
        out[name] = [arm(s) for s in range(seeds)]
        sd = statistics.stdev(out[name]) if seeds > 1 else 0.0
        log(f"  {name}: {statistics.mean(out[name]):.2f} +- {sd:.2f} (sample sd, n={seeds}, "
            f"{time.perf_counter() - start:.0f} s): {', '.join(f'{x:.2f}' for x in out[name])}")
    return out


def anneal_factor(protocol) -> float:  # noqa: ANN001
    """The last epoch's LR over the peak LR under the protocol's schedule (cosine, stepped per epoch).

    >>> round(anneal_factor(load_protocol("nb201", ["epochs=2"])), 2), round(anneal_factor(load_protocol("nb201", ["epochs=6"])), 3)
    (0.5, 0.067)
    """
    if protocol.schedule != "cosine":
        return 1.0
    e = protocol.epochs - protocol.warmup_epochs
    return (1 + math.cos(math.pi * (e - 1) / e)) / 2 if e > 1 else 1.0


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else the platform's processor string."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_has_bf16() -> bool:
    """Whether the CPU computes bf16 natively (AVX-512 BF16 or AMX)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = f.read()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--data", help="an image pack (.npz) loaded as cifar10; default: the shipped CIFAR-10 subset")
    p.add_argument("--images", type=int, default=5000, help="training images per run")
    p.add_argument("--test-images", type=int, default=None, help="test images (default: all)")
    p.add_argument("--resolution", type=int, default=None, help="box-downsample every image to this side first")
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--cells", type=int, default=5)
    p.add_argument("--epochs", type=int, default=6, help="the recipe's epochs (cosine over them; the study's 6)")
    p.add_argument("--seeds", type=int, default=10, help="seeds per arm (a verdict needs >= 10)")
    p.add_argument("--margin", type=float, default=0.5, help="equivalence margin in accuracy points")
    p.add_argument("--control-lr", type=float, default=None, metavar="F",
                   help="also an engine fp32 arm at F x the LR, compared with the engine fp32: it should differ")
    p.add_argument("--workers", type=int, default=2, help="the reference loop's DataLoader workers")
    p.add_argument("--json", help="also write every accuracy and verdict to this JSON file")
    args = p.parse_args(argv)
    if args.epochs < 4:
        p.error(f"--epochs {args.epochs}: the recipe must run past the schedule's anneal (4 or more epochs: the "
                "last epoch at <= 0.15 x the peak LR)")
    return args


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    family, cuda = get_family("nb201"), args.device.startswith("cuda")
    data = load_dataset("cifar10", args.data) if args.data else load_dataset("cifar10-subset")
    data = downsample(data, args.resolution) if args.resolution else data
    data = subset(data, args.images, args.test_images, seed=0)
    fp32, bf16 = (load_protocol("nb201", [f"epochs={args.epochs}", f"precision={p}"]) for p in ("fp32", "bf16"))
    opts = RunOptions(device=args.device)
    with_bf16 = cuda or cpu_has_bf16()
    size = (args.width, args.cells)
    arms = {"reference fp32": reference_arm(family, data, fp32, *size, args.device, args.workers),
            "engine fp32": engine_arm(family, data, fp32, *size, opts)}
    pairs = [("engine fp32", "reference fp32")]
    if with_bf16:
        arms["engine bf16"] = engine_arm(family, data, bf16, *size, opts.replace(cpu_autocast=not cuda))
        pairs.append(("engine bf16", "engine fp32"))
    if args.control_lr is not None:
        arms[f"control: engine fp32, LR x {args.control_lr:g}"] = engine_arm(family, data, fp32, *size, opts,
                                                                             args.control_lr)
        pairs.append((f"control: engine fp32, LR x {args.control_lr:g}", "engine fp32"))
    where = torch.cuda.get_device_name(args.device) if cuda else f"CPU {cpu_model()} ({torch.get_num_threads()} threads)"
    print(f"parity on {where}; torch {torch.__version__}; C={args.width}, N={args.cells}; "
          f"{data.train_images.shape[0]} train / {data.test_images.shape[0]} test images of "
          f"{data.train_images.shape[-1]} px; {args.epochs} epochs (cosine, last epoch at "
          f"{anneal_factor(fp32):.3f} x the peak LR); {args.seeds} seeds per arm", flush=True)
    if not with_bf16:
        print("  engine bf16: not run (this CPU has no native bf16; the CPU trains in fp32)")
    accs = run_arms(arms, args.seeds, lambda line: print(line, flush=True))
    verdicts = {f"{a} vs {b}": verdict(accs[a], accs[b], args.margin) for a, b in pairs}
    for name, v in verdicts.items():
        print(f"parity {name}: {v.text()}")
    result = {"device": where, "args": vars(args), "accuracies": accs,
              "verdicts": {k: asdict(v) for k, v in verdicts.items()}}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    return result


if __name__ == "__main__":
    main()
