"""NAS-Bench-201's halves of the test set: ``x-test`` and ``x-valid``.

For ``cifar100`` and ``imagenet16-120`` the accuracy NAS-Bench-201 reports (and
``nasrescale.space.benchmark`` ships) is measured on **x-test**, one half of the official test set
(5,000 of CIFAR-100's 10,000 images; 3,000 of ImageNet16-120's 6,000); the other half is
**x-valid**, which the benchmark uses for validation. ``cifar10``'s figure is on the full
10,000-image test set. The index lists are the benchmark's own split files
(``cifar100-test-split.txt``, ``imagenet-16-120-test-split.txt``, JSON
``{"xvalid": ["int", [...]], "xtest": ["int", [...]]}``, indices into the test set in its
file order), shipped in ``nasrescale/data/splits/``.

>>> default_test_split("cifar100"), default_test_split("cifar10"), default_test_split("imagefolder")
('x-test', 'full', 'full')
>>> idx = split_indices("cifar100", "x-test")
>>> len(idx), len(split_indices("imagenet16-120", "x-valid"))
(5000, 3000)
"""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache
from importlib import resources

import torch

from ..errors import DataError
from .types import TEST_SPLITS, ImageData

__all__ = ["TEST_SPLITS", "SPLIT_FILES", "default_test_split", "split_indices", "apply_test_split"]

#: dataset name -> (split file shipped in nasrescale/data/splits/, size of the full test set)
SPLIT_FILES: dict[str, tuple[str, int]] = {
    "cifar100": ("cifar100-test-split.txt", 10_000),
    "imagenet16-120": ("imagenet-16-120-test-split.txt", 6_000),
}

_FILE_KEYS = {"x-test": "xtest", "x-valid": "xvalid"}


def default_test_split(dataset: str) -> str:
    """The split whose accuracy the benchmark reports for ``dataset``: ``x-test`` where the
    benchmark has halves (``cifar100``, ``imagenet16-120``), else ``full``."""
    return "x-test" if dataset in SPLIT_FILES else "full"


@lru_cache(maxsize=None)
def _read_split_file(dataset: str) -> dict[str, tuple[int, ...]]:
    name, size = SPLIT_FILES[dataset]
    try:
        text = resources.files("nasrescale.data").joinpath("splits", name).read_text(encoding="utf-8")
        doc = json.loads(text)
        halves = {key: tuple(int(i) for i in doc[key][1]) for key in _FILE_KEYS.values()}
    except (OSError, ValueError, KeyError, TypeError, IndexError) as err:
        raise DataError(f"the shipped test-split file nasrescale/data/splits/{name} is missing or malformed "
                        f"({err!r}); reinstall nasrescale") from None
    both = sorted(halves["xtest"] + halves["xvalid"])
    if both != list(range(size)):  # the halves must partition the test set exactly
        raise DataError(f"nasrescale/data/splits/{name}: x-test and x-valid do not partition 0..{size - 1}; "
                        "reinstall nasrescale")
    return halves


def split_indices(dataset: str, split: str) -> torch.Tensor:
    """Indices (int64, increasing) of ``split`` (``x-test`` or ``x-valid``) in ``dataset``'s test set.

    Raises:
        DataError: if ``dataset`` has no benchmark split, or ``split`` is not a half.
    """
    check_test_split(dataset, split)
    if split == "full":
        raise DataError("split_indices: 'full' is the whole test set; ask for 'x-test' or 'x-valid'")
    return torch.tensor(sorted(_read_split_file(dataset)[_FILE_KEYS[split]]), dtype=torch.int64)


def check_test_split(dataset: str, split: str) -> None:
    """Raise :class:`DataError` unless ``split`` is valid for ``dataset``."""
    if split not in TEST_SPLITS:
        raise DataError(f"unknown test split {split!r}; choose one of: {', '.join(TEST_SPLITS)}")
    if split != "full" and dataset not in SPLIT_FILES:
        raise DataError(f"test split {split!r} exists only for {', '.join(SPLIT_FILES)} (NAS-Bench-201's "
                        f"halves of their test sets); dataset {dataset!r} has only 'full'")


def apply_test_split(data: ImageData, dataset: str, split: str | None) -> ImageData:
    """``data`` with its test set cut to ``split`` (``None``: :func:`default_test_split`).

    Args:
        data: a freshly loaded dataset (full test set, in the dataset's file order).
        dataset: the name it was loaded under (picks the split file).
        split: ``full``, ``x-test``, ``x-valid`` or ``None``.

    Returns:
        A copy with ``test_split`` set and, for a half, only that half's test images.

    Raises:
        DataError: for an unknown split, a half on a dataset without one, or a test set whose
            size is not the benchmark's (the indices would point at the wrong images).
    """
    split = default_test_split(dataset) if split is None else split
    check_test_split(dataset, split)
    if split == "full":
        return dataclasses.replace(data, test_split="full")
    size = SPLIT_FILES[dataset][1]
    if data.test_images.shape[0] != size:
        raise DataError(f"{dataset}: the benchmark's {split} indexes a test set of {size} images, this one has "
                        f"{data.test_images.shape[0]}; use the original files, or --test-split full")
    index = split_indices(dataset, split)
    return dataclasses.replace(data, test_images=data.test_images[index], test_labels=data.test_labels[index],
                               test_split=split)
