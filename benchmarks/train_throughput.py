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
    (``nasrescale.train.fused.train_fused``): model-images/s = K x images/s;
(d) ``jobs_per_gpu`` concurrent processes (``--jobs-per-gpu``): N single runs (seeds 0..N-1) as
    TrainJobs through the pipeline's pool executor (``nasrescale.executors.pool``, fusion off),
    N processes sharing one GPU; model-images/s = N x the processes' mean training images/s
    (each process's own training time). On a CPU the N processes share the cores (devices
    ``["cpu"] * N``): a stand-in for the code path, labelled as such, not a GPU figure;
(e) CUDA graphs: not implemented (not measured on a GPU yet).

With ``--accuracy`` each configuration also trains a short recipe and reports the mean test
accuracy of its runs (reference and engine: ``--seeds`` seeds; fused K: its K members); a
configuration counts for the ratio only at parity, i.e. its mean within the larger of
2 x the seed spread (pooled std) and 1 point of the reference's. The last line reads
``ratio=<best nasrescale model-images/s / reference images/s>``.

Usage:
    python benchmarks/train_throughput.py                                   # CPU, small
    python benchmarks/train_throughput.py --width 8 --cells 1 --accuracy    # CPU, with accuracy
    python benchmarks/train_throughput.py --device cuda --train-images 10000 --epochs 2 \
        --accuracy --acc-images 50000 --acc-epochs 5 --data .data/cifar10.npz  # H100, full size
    python benchmarks/train_throughput.py --width 4 --cells 1 --train-images 256 --epochs 1 --ks 2 \
        --jobs-per-gpu 1,2 --workers 0                                      # CPU smoke run (seconds)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
from PIL import Image
from torch import nn
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

from nasrescale.data import load_dataset, subset
from nasrescale.executors.base import ExecutorSettings
from nasrescale.executors.pool import PoolExecutor
from nasrescale.jobs.job import DataSpec, TrainJob
from nasrescale.models import build_model
from nasrescale.protocol import load_protocol
from nasrescale.space.registry import get_family
from nasrescale.scaling import param_groups
from nasrescale.jobs.fusion import build_member
from nasrescale.train import train
from nasrescale.train.fused import train_fused

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
    train_tf = transforms.Compose([transforms.RandomHorizontalFlip(), transforms.RandomCrop(32, padding=4),
                                   transforms.ToTensor(), transforms.Normalize(mean, std)])
    test_tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean, std)])
    cuda = device.startswith("cuda")
    loader = DataLoader(ArrayImages(data.train_images, data.train_labels, train_tf), batch_size=protocol.batch_size,
                        shuffle=True, num_workers=workers, pin_memory=cuda)
    test_loader = DataLoader(ArrayImages(data.test_images, data.test_labels, test_tf), batch_size=protocol.batch_size,
                             shuffle=False, num_workers=workers, pin_memory=cuda)
    model.to(device)
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
    return images / train_time, 100.0 * hits / len(data.test_labels)


def fresh_model(family, data, width: int, cells: int, seed: int) -> nn.Module:  # noqa: ANN001
    torch.manual_seed(seed)
    return build_model(ARCH, family, data.num_classes, width=width, cells=cells)


def ours_train(model: nn.Module, data, protocol, device: str, seed: int, compile_: bool) -> tuple[float, float]:  # noqa: ANN001
    result = train(model, data, protocol, param_groups(model, protocol), device=device, seed=seed,
                   progress=False, compile=compile_)
    return result.images_per_s, result.test_accuracy


def fused_train(k: int, family, data, protocol, device: str, width: int, cells: int,  # noqa: ANN001
                compile_: bool) -> tuple[float, list[float]]:
    """K runs (seeds 0..K-1) as one fused network: (images/s per member, members' test accuracies)."""
    members = [build_member(ARCH, family, data, protocol, seed, width=width, cells=cells)[0] for seed in range(k)]
    results = train_fused(members, data, device=device, progress=False, compile=compile_)
    return results[0].images_per_s, [r.test_accuracy for r in results]


def pool_train(n: int, family, args, protocol, cuda: bool) -> tuple[float, float]:  # noqa: ANN001
    """N single runs (seeds 0..N-1) as N concurrent pool processes on one device: (mean training
    images/s per process, wall-clock images/s of the whole pool, spawn, data and evaluation included)."""
    name = "cifar10" if args.data else "cifar10-subset"
    data = DataSpec(name, args.data, None, args.train_images, 256)  # the timed configurations' images
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
    """Within seed noise of the reference: |mean difference| <= max(2 x pooled std, 1 point)."""
    spread = statistics.pstdev(accs + ref) if len(accs + ref) > 1 else 0.0
    diff = statistics.mean(accs) - statistics.mean(ref)
    ok = abs(diff) <= max(2 * spread, 1.0)
    return ok, f"{statistics.mean(accs):6.2f} +- {statistics.pstdev(accs):.2f} (n={len(accs)}, {diff:+.2f}, " \
               f"{'parity' if ok else 'NO parity'})"


def main() -> None:
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
    args = parser.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    pool_ns = [int(n) for n in args.jobs_per_gpu.split(",") if n.strip()]

    family = get_family("nb201")
    data = load_dataset("cifar10", args.data) if args.data else load_dataset("cifar10-subset")
    timing_data = subset(data, args.train_images, 256, seed=0)
    cuda = args.device.startswith("cuda")
    name = torch.cuda.get_device_name() if cuda else f"CPU ({torch.get_num_threads()} threads)"
    print(f"device: {name}; torch {torch.__version__}; arch {ARCH}; C={args.width}, N={args.cells}; "
          f"{args.train_images} images x {args.epochs} epochs, batch 256; reference workers {args.workers}; "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)

    warm = load_protocol("nb201", ["epochs=1"])
    timed = load_protocol("nb201", [f"epochs={args.epochs}"])

    def model(d, seed: int) -> nn.Module:  # noqa: ANN001
        return fresh_model(family, d, args.width, args.cells, seed)

    rows: list[tuple[str, float, int]] = []  # (configuration, images/s, runs at once)
    reference_train(model(timing_data, 0), timing_data, warm, args.device, args.workers, 0)
    rows.append(("(a) reference loop", reference_train(model(timing_data, 0), timing_data, timed, args.device,
                                                       args.workers, 0)[0], 1))
    print(f"  {rows[-1][0]}: {rows[-1][1]:,.1f} img/s", flush=True)
    ours_train(model(timing_data, 0), timing_data, warm, args.device, 0, args.compile)
    rows.append(("(b) engine, 1 run", ours_train(model(timing_data, 0), timing_data, timed, args.device, 0,
                                                 args.compile)[0], 1))
    print(f"  {rows[-1][0]}: {rows[-1][1]:,.1f} img/s", flush=True)
    for k in ks:
        fused_train(k, family, timing_data, warm, args.device, args.width, args.cells, args.compile)
        ips = fused_train(k, family, timing_data, timed, args.device, args.width, args.cells, args.compile)[0]
        rows.append((f"(c) fused K={k}", ips, k))
        print(f"  {rows[-1][0]}: {ips:,.1f} img/s = {k * ips:,.1f} model-img/s", flush=True)
    pool_notes: dict[str, str] = {}
    for n in pool_ns:  # each process warms up in its own first epoch (counted: a pipeline job does too)
        ips, wall_ips = pool_train(n, family, args, timed, cuda)
        label = f"(d) jobs_per_gpu={n}" if cuda else f"(d) {n} CPU process{'es' if n > 1 else ''}*"
        rows.append((label, ips, n))
        pool_notes[label] = f"pool wall clock {wall_ips:,.1f} img/s incl. spawn, data, eval"
        print(f"  {label}: {ips:,.1f} img/s per process = {n * ips:,.1f} model-img/s ({pool_notes[label]})",
              flush=True)

    accuracy: dict[str, str] = {}
    counts = {row[0]: True for row in rows}
    if args.accuracy:
        recipe = load_protocol("nb201", [f"epochs={args.acc_epochs}"])
        acc_data = subset(data, args.acc_images, None, seed=0) if args.acc_images else data
        ref = [reference_train(model(acc_data, s), acc_data, recipe, args.device, args.workers, s)[1]
               for s in range(args.seeds)]
        accuracy[rows[0][0]] = parity(ref, ref)[1]
        eng = [ours_train(model(acc_data, s), acc_data, recipe, args.device, s, args.compile)[1]
               for s in range(args.seeds)]
        counts[rows[1][0]], accuracy[rows[1][0]] = parity(eng, ref)
        for (label, _, k) in rows[2:]:
            if label.startswith("(d)"):  # each process runs the engine itself: (b)'s runs, verdict
                counts[label], accuracy[label] = counts[rows[1][0]], "as (b): the engine in each process"
                continue
            accs = fused_train(k, family, acc_data, recipe, args.device, args.width, args.cells, args.compile)[1]
            counts[label], accuracy[label] = parity(accs, ref)
        print(f"accuracy: {args.acc_epochs} epochs on {acc_data.train_images.shape[0]} images, "
              f"test {acc_data.test_images.shape[0]} images", flush=True)

    print(f"{'configuration':<22} {'images/s':>10} {'model-img/s':>12}  accuracy")
    for label, ips, k in rows:
        print(f"{label:<22} {ips:>10,.1f} {k * ips:>12,.1f}  {accuracy.get(label, '-')}")
    if not cuda and pool_ns:
        print("* (d) on the CPU: N processes share the cores (devices ['cpu'] * N), a stand-in for the "
              "jobs_per_gpu code path, not a GPU figure")
    for label, note in pool_notes.items():
        print(f"  {label}: {note}")
    print(f"{'(e) CUDA graphs':<22} not implemented (not measured: no GPU in the session that built this)")
    ref_ips = rows[0][1]
    best = max((row for row in rows[1:] if counts[row[0]]), key=lambda r: r[1] * r[2])
    print(f"best: {best[0]} ({best[1] * best[2]:,.1f} model-img/s)")
    print(f"ratio={best[1] * best[2] / ref_ips:.2f}")


if __name__ == "__main__":
    main()
