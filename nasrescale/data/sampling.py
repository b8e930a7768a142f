"""Class-balanced, deterministic subsets of a dataset (for quick runs and tests).

>>> import torch
>>> from nasrescale.data.types import ImageData
>>> x = torch.zeros(12, 3, 4, 4, dtype=torch.uint8)
>>> y = torch.arange(12) % 3
>>> d = ImageData("toy", x, y, x[:6], y[:6], 3, (0.5,) * 3, (0.25,) * 3)
>>> s = subset(d, train=6, test=3)
>>> torch.bincount(s.train_labels).tolist(), torch.bincount(s.test_labels).tolist()
([2, 2, 2], [1, 1, 1])
"""

from __future__ import annotations

import dataclasses

import torch

from ..errors import DataError
from .types import ImageData

__all__ = ["balanced_quotas", "balanced_indices", "subset"]


def balanced_quotas(counts: list[int], n: int) -> list[int]:
    """Split ``n`` samples over classes as evenly as their sizes allow.

    Classes are filled smallest first ("water filling"): each takes its fair share of what
    is left, or all it has if that is less, so a small class never blocks the total.

    Args:
        counts: samples available per class.
        n: samples wanted in all; at most ``sum(counts)``.

    Returns:
        Samples to take per class; they sum to ``n``.

    >>> balanced_quotas([10, 10, 10], 7)
    [2, 2, 3]
    >>> balanced_quotas([1, 10, 10], 9)
    [1, 4, 4]
    """
    quotas = [0] * len(counts)
    remaining = n
    order = sorted(range(len(counts)), key=lambda k: (counts[k], k))
    for i, k in enumerate(order):
        quotas[k] = min(counts[k], remaining // (len(order) - i))
        remaining -= quotas[k]
    return quotas


def balanced_indices(labels: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
    """Indices of a class-balanced random sample of size ``n``, in increasing order.

    Args:
        labels: int64 labels ``(N,)``.
        n: sample size, ``0 <= n <= N``.
        generator: source of randomness (seeded by the caller for determinism).

    Returns:
        int64 indices, sorted, so the subset keeps the dataset's order.
    """
    classes = torch.unique(labels)  # sorted
    members = [torch.nonzero(labels == c).flatten() for c in classes]
    quotas = balanced_quotas([len(m) for m in members], n)
    picked = [m[torch.randperm(len(m), generator=generator)[:q]] for m, q in zip(members, quotas)]
    return torch.sort(torch.cat(picked)).values if picked else torch.empty(0, dtype=torch.int64)


def subset(data: ImageData, train: int | None = None, test: int | None = None, seed: int = 0) -> ImageData:
    """A class-balanced, deterministic subset of ``data``.

    Each class gets an equal share (classes with too few samples give all they have and the
    rest is spread over the others); which samples are drawn depends only on ``seed`` and the
    split's labels. ``mean``/``std`` are kept from ``data``.

    Args:
        data: the dataset.
        train: training samples to keep; ``None`` keeps the whole training set.
        test: test samples to keep; ``None`` keeps the whole test set.
        seed: random seed of the draw.

    Returns:
        The subset, named e.g. ``cifar10[train=5000,test=1000,seed=0]``; ``data`` itself when
        both sizes are ``None``.

    Raises:
        DataError: if a size is negative or larger than the split.
    """
    if train is None and test is None:
        return data
    picked = {}
    for split, n in (("train", train), ("test", test)):
        images, labels = getattr(data, f"{split}_images"), getattr(data, f"{split}_labels")
        if n is None:
            picked[split] = (images, labels)
            continue
        if not 0 <= n <= len(labels):
            raise DataError(f"cannot take {n} {split} samples from {data.name}: it has {len(labels)}")
        # A fresh generator per split: the test draw does not depend on whether train is drawn.
        index = balanced_indices(labels, n, torch.Generator().manual_seed(seed))
        picked[split] = (images[index], labels[index])
    sizes = ",".join(f"{s}={len(picked[s][1])}" for s, n in (("train", train), ("test", test)) if n is not None)
    return dataclasses.replace(
        data,
        name=f"{data.name}[{sizes},seed={seed}]",
        train_images=picked["train"][0],
        train_labels=picked["train"][1],
        test_images=picked["test"][0],
        test_labels=picked["test"][1],
    )
