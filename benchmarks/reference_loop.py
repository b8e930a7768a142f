"""The reference training loop, built the way NAS-Bench-201's released code trains (not a test).

A torchvision-style dataset turns each HWC uint8 array into a PIL image; PIL transforms (flip,
crop pad 4, ToTensor, Normalize) run in DataLoader worker processes; eager NCHW; per-step
``.item()`` calls. :func:`reference_train` trains in the precision asked for, so that an engine
row is compared with the reference in its own arithmetic: ``fp32`` (exact: TF32 off on CUDA, as
the released code's cuDNN default) or ``bf16`` (autocast on CUDA; the CPU trains in fp32, as
the engine does).
"""

from __future__ import annotations

import contextlib
import time

import torch
from PIL import Image
from torch import nn
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

from nasrescale.train.precision import no_tf32, trained_precision

__all__ = ["ArrayImages", "reference_train"]


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


def reference_train(model: nn.Module, data, protocol, device: str, workers: int, seed: int,  # noqa: ANN001
                    precision: str = "fp32") -> tuple[float, float]:
    """Train like the released code in ``precision``; return (training images/s, test accuracy %)."""
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
    bf16 = trained_precision(precision, device) == "bf16"
    scope = no_tf32() if cuda else contextlib.nullcontext()  # fp32 without TF32, as the engine's fp32
    with scope:
        return _loop(model, loader, test_loader, protocol, device, bf16, len(data.test_labels))


def _loop(model: nn.Module, loader: DataLoader, test_loader: DataLoader, protocol, device: str,  # noqa: ANN001
          bf16: bool, tested: int) -> tuple[float, float]:
    """The released code's epochs, then its test pass; (training images/s, test accuracy %)."""
    cuda = device.startswith("cuda")
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
            with torch.autocast(torch.device(device).type, dtype=torch.bfloat16, enabled=bf16):
                out = model(x)
                loss = criterion(out.float(), y)
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
            with torch.autocast(torch.device(device).type, dtype=torch.bfloat16, enabled=bf16):
                hits += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
    return images / train_time, 100.0 * hits / tested


