"""Training throughput: nasrescale's engine vs a reference loop, side by side (not a test).

Both train the same NB201 architecture (same init, same images, same batch size, same number
of epochs) with the NB201 protocol:

(a) nasrescale: ``nasrescale.train.train`` -- uint8 data on the device, on-device crop+flip,
    channels_last, bf16 autocast on CUDA, no per-step host sync, pruned cells;
(b) reference, built the way the paper's released code trains: a torchvision-style dataset
    turning each HWC uint8 array into a PIL image, PIL transforms (flip, crop pad 4, ToTensor,
    Normalize) in DataLoader worker processes, fp32 eager NCHW, per-step ``.item()`` calls.

Prints images/s of each (training only, evaluation excluded) and their ratio; with
``--accuracy`` also trains a short recipe with several seeds both ways and compares the test
accuracies. The last line reads ``ratio=<ours/reference>``.

Usage:
    python benchmarks/train_throughput.py                        # CPU: small budget
    python benchmarks/train_throughput.py --device cuda --train-images 5000 --epochs 3
    python benchmarks/train_throughput.py --device cuda --accuracy --acc-epochs 10 --seeds 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import torch
from PIL import Image
from torch import nn
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

from nasrescale.data import load_dataset, subset
from nasrescale.models import build_model
from nasrescale.protocol import load_protocol
from nasrescale.registry import get_family
from nasrescale.scaling import param_groups
from nasrescale.train import train

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--train-images", type=int, default=1024, help="training images (from the shipped subset)")
    parser.add_argument("--epochs", type=int, default=2, help="timed epochs per side (after one warm-up epoch)")
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--cells", type=int, default=5)
    parser.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1), help="reference DataLoader workers")
    parser.add_argument("--compile", action="store_true", help="torch.compile our model")
    parser.add_argument("--accuracy", action="store_true", help="also compare accuracy after a short recipe")
    parser.add_argument("--acc-epochs", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()

    family = get_family("nb201")
    data = load_dataset("cifar10-subset")
    timing_data = subset(data, args.train_images, 256, seed=0)
    name = torch.cuda.get_device_name() if args.device.startswith("cuda") else f"CPU ({torch.get_num_threads()} threads)"
    print(f"device: {name}; torch {torch.__version__}; arch {ARCH}; C={args.width}, N={args.cells}; "
          f"{args.train_images} images x {args.epochs} epochs, batch 256; reference workers {args.workers}")

    warm = load_protocol("nb201", ["epochs=1"])
    timed = load_protocol("nb201", [f"epochs={args.epochs}"])
    ours_train(fresh_model(family, timing_data, args.width, args.cells, 0), timing_data, warm, args.device, 0, args.compile)
    reference_train(fresh_model(family, timing_data, args.width, args.cells, 0), timing_data, warm, args.device, args.workers, 0)
    ours, _ = ours_train(fresh_model(family, timing_data, args.width, args.cells, 0), timing_data, timed,
                         args.device, 0, args.compile)
    ref, _ = reference_train(fresh_model(family, timing_data, args.width, args.cells, 0), timing_data, timed,
                             args.device, args.workers, 0)
    print(f"throughput: nasrescale {ours:,.0f} img/s; reference {ref:,.0f} img/s")

    if args.accuracy:
        recipe = load_protocol("nb201", [f"epochs={args.acc_epochs}"])
        acc_ours, acc_ref = [], []
        for seed in range(args.seeds):
            acc_ours.append(ours_train(fresh_model(family, data, args.width, args.cells, seed), data, recipe,
                                       args.device, seed, args.compile)[1])
            acc_ref.append(reference_train(fresh_model(family, data, args.width, args.cells, seed), data, recipe,
                                           args.device, args.workers, seed)[1])
        spread = statistics.pstdev(acc_ours + acc_ref) if args.seeds > 1 else float("nan")
        print(f"accuracy after {args.acc_epochs} epochs on {data.train_images.shape[0]} images, {args.seeds} seeds: "
              f"nasrescale {np.mean(acc_ours):.2f} +- {np.std(acc_ours):.2f} {acc_ours}; "
              f"reference {np.mean(acc_ref):.2f} +- {np.std(acc_ref):.2f} {acc_ref}; "
              f"difference {np.mean(acc_ours) - np.mean(acc_ref):+.2f} (seed spread {spread:.2f})")
    print(f"ratio={ours / ref:.2f}")


if __name__ == "__main__":
    main()
