"""The ``imagenet16-120`` dataset: NAS-Bench-201's downsampled ImageNet, 16x16 px, 120 classes.

File format (the "ImageNet16" pickles NAS-Bench-201 distributes): a folder holding
``train_data_batch_1`` ... ``train_data_batch_10`` and ``val_data``, each a pickle of a dict
with ``data``, an ``(N, 768)`` uint8 array whose rows are one 16x16 image in CHW order
(256 red, 256 green, 256 blue values), and ``labels``, 1-based class ids 1..1000.
ImageNet16-120 keeps the samples whose label is at most 120 and shifts labels to 0..119;
``val_data`` is the official test set (6,000 images); the benchmark reports accuracy on its
``x-test`` half (:mod:`nasrescale.data.benchmark_splits`, applied by ``load_dataset``).

The files are pickles, which can run code when loaded: load only files you trust.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import torch

from ..errors import DataError
from .normalization import crop_padding_for, resolve_normalization
from .paths import default_data_root
from .types import ImageData

__all__ = ["TRAIN_FILES", "TEST_FILE", "find_imagenet16_root", "read_imagenet16_file", "load_imagenet16"]

TRAIN_FILES = tuple(f"train_data_batch_{i}" for i in range(1, 11))
TEST_FILE = "val_data"
_SIDE = 16  # pixels


def find_imagenet16_root(root: str | Path | None) -> Path:
    """The folder holding the ImageNet16 files: ``root`` itself or its ``ImageNet16/`` subfolder
    (NAS-Bench-201's layout); ``None`` means the default data root.

    Raises:
        DataError: naming the expected files and the folders searched, if some are missing.
    """
    base = default_data_root() if root is None else Path(root).expanduser()
    candidates = [base, base / "ImageNet16"]
    for folder in candidates:
        if all((folder / name).is_file() for name in (*TRAIN_FILES, TEST_FILE)):
            return folder
    missing = [name for name in (*TRAIN_FILES, TEST_FILE) if not (base / name).is_file()]
    which = "none is there" if len(missing) == len(TRAIN_FILES) + 1 else f"missing in {base}: {', '.join(missing)}"
    raise DataError(
        f"ImageNet16 files not found in {candidates[0]} or {candidates[1]}: expected "
        f"{TRAIN_FILES[0]} ... {TRAIN_FILES[-1]} and {TEST_FILE} ({which}). "
        "Download NAS-Bench-201's ImageNet16 pickles and pass --data-path PATH to their folder; "
        "they are never downloaded automatically"
    )


def read_imagenet16_file(path: Path, num_classes: int = 120) -> tuple[np.ndarray, np.ndarray]:
    """Read one ImageNet16 pickle and keep the first ``num_classes`` classes.

    Args:
        path: a ``train_data_batch_*`` or ``val_data`` file.
        num_classes: keep samples with 1-based label ``<= num_classes``.

    Returns:
        ``(images, labels)``: uint8 ``(n, 3, 16, 16)`` and int64 0-based labels.

    Raises:
        DataError: if the file is unreadable or not in the ImageNet16 format.
    """
    try:
        with open(path, "rb") as f:
            entry = pickle.load(f, encoding="latin1")  # written by Python 2, hence latin1
        data = np.asarray(entry["data"], dtype=np.uint8)
        labels = np.asarray(entry["labels"], dtype=np.int64)
    except (OSError, EOFError, pickle.UnpicklingError, KeyError, TypeError, ValueError, AttributeError,
            ImportError) as exc:  # what a damaged or foreign pickle can raise
        raise DataError(
            f"cannot read ImageNet16 file {path}: {exc!r}; expected a pickled dict with 'data' and 'labels'"
        ) from exc
    if data.ndim != 2 or data.shape[1] != 3 * _SIDE * _SIDE or labels.shape != (data.shape[0],):
        raise DataError(
            f"{path}: 'data' must be (N, {3 * _SIDE * _SIDE}) with one label per row, got data {data.shape} "
            f"and {labels.shape[0] if labels.ndim else 0} labels; is this an ImageNet16 (16x16) file?"
        )
    keep = (labels >= 1) & (labels <= num_classes)
    images = data[keep].reshape(-1, 3, _SIDE, _SIDE)  # rows are CHW already
    return images, labels[keep] - 1


def load_imagenet16(
    root: str | Path | None, normalization: str | None = None, num_classes: int = 120
) -> ImageData:
    """Load ImageNet16-120 (or ImageNet16-``num_classes``) from NAS-Bench-201's pickles.

    Args:
        root: folder holding the files, or its parent holding ``ImageNet16/``; ``None``
            means the default data root (see :mod:`nasrescale.data.paths`).
        normalization: ``None`` (``imagenet16``) or a name accepted by
            :func:`~nasrescale.data.normalization.resolve_normalization`.
        num_classes: classes kept (the benchmark: 120).

    Returns:
        The dataset, named ``imagenet16-<num_classes>``.

    Raises:
        DataError: if files are missing or malformed.
    """
    folder = find_imagenet16_root(root)
    parts = [read_imagenet16_file(folder / name, num_classes) for name in TRAIN_FILES]
    train_x = np.concatenate([p[0] for p in parts])
    train_y = np.concatenate([p[1] for p in parts])
    test_x, test_y = read_imagenet16_file(folder / TEST_FILE, num_classes)
    if len(train_x) == 0 or len(test_x) == 0:
        raise DataError(f"no samples with labels 1..{num_classes} in the ImageNet16 files of {folder}")
    train_images = torch.from_numpy(np.ascontiguousarray(train_x))
    mean, std = resolve_normalization(normalization, "imagenet16", train_images)
    return ImageData(
        name=f"imagenet16-{num_classes}",
        train_images=train_images,
        train_labels=torch.from_numpy(train_y),
        test_images=torch.from_numpy(np.ascontiguousarray(test_x)),
        test_labels=torch.from_numpy(test_y),
        num_classes=num_classes,
        mean=mean,
        std=std,
        crop_padding=crop_padding_for(_SIDE),
    )
