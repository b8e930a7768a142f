"""The ``imagefolder`` dataset: a folder of image files, ``train/<class>/*`` and ``test/<class>/*``.

Class labels follow the sorted class-folder names; files are taken in sorted path order
(subfolders of a class folder included; hidden files and files without an image extension
are ignored). ``val/`` is accepted in place of a missing ``test/``.

Decoding tens of thousands of files takes seconds, so the decoded uint8 tensors are cached in
``<cache folder>/imagefolder-<name>-<hash of the folder's absolute path>.npz`` (one file per
folder, rewritten when the folder changes). The cache is valid while the folder's *content key*
is unchanged: a hash of its absolute path, file count, latest modification time and the list
of (path, size) of its files, so adding, removing, renaming or editing an image invalidates it.
"""

from __future__ import annotations

import hashlib
import os
import re
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..errors import DataError, NasRescaleError
from ..fileio import atomic_writer
from . import decode
from .normalization import CIFAR10_CLASSES, crop_padding_for, resolve_normalization
from .paths import resolve_cache_dir
from .types import ImageData

__all__ = ["IMAGE_EXTENSIONS", "FolderListing", "scan_imagefolder", "cache_path", "load_imagefolder"]

#: File extensions counted as images (compared case-insensitively).
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".pgm", ".bmp", ".tif", ".tiff", ".webp", ".gif")

# Bump when the cache layout or the decoding changes, so old caches are not trusted.
_CACHE_VERSION = 1


@dataclass(frozen=True)
class FolderListing:
    """The files of an image folder, in load order.

    Attributes:
        root: absolute path of the folder.
        classes: class names, sorted; label ``i`` is ``classes[i]``.
        train_files: training image files (paths as strings: cheaper than 60,000 ``Path`` objects).
        train_labels: their labels.
        test_files: test image files (from ``test/``, or ``val/`` when there is no ``test/``).
        test_labels: their labels.
        key: content key (hex) that a cache of this folder must carry to be valid.
    """

    root: Path
    classes: tuple[str, ...]
    train_files: list[str]
    train_labels: list[int]
    test_files: list[str]
    test_labels: list[int]
    key: str


def _walk(folder: Path, prefix: str = "") -> list[tuple[str, int, int]]:
    """``(relative path, size in bytes, mtime in ns)`` of the image files under ``folder``."""
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = prefix + entry.name
            if entry.is_dir():
                found.extend(_walk(Path(entry.path), rel + "/"))
            elif entry.name.lower().endswith(IMAGE_EXTENSIONS):
                st = entry.stat()
                found.append((rel, st.st_size, st.st_mtime_ns))
    return found


def _scan_split(split_dir: Path) -> dict[str, list[tuple[str, int, int]]]:
    """Class name -> sorted file records of one split folder."""
    try:
        class_dirs = sorted(e.name for e in os.scandir(split_dir) if e.is_dir() and not e.name.startswith("."))
    except OSError as exc:
        raise DataError(f"cannot list {split_dir}: {exc.strerror or exc}") from exc
    if not class_dirs:
        raise DataError(f"{split_dir} holds no class folders; expected {split_dir}/<class name>/<image files>")
    split = {}
    for name in class_dirs:
        files = sorted(_walk(split_dir / name))
        if not files:
            raise DataError(
                f"class folder {split_dir / name} holds no image files "
                f"(looked for {', '.join(IMAGE_EXTENSIONS)}); add images or remove the folder"
            )
        split[name] = files
    return split


def scan_imagefolder(root: str | Path) -> FolderListing:
    """List an image folder's classes and files and compute its content key.

    Args:
        root: folder holding ``train/<class>/*`` and ``test/<class>/*`` (or ``val/<class>/*``).

    Returns:
        The :class:`FolderListing`.

    Raises:
        DataError: if the folder or a split is missing, a class folder is empty, or the train
            and test class sets differ.
    """
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        raise DataError(
            f"image folder {root} does not exist; pass --data-path PATH with a folder holding "
            "train/<class>/<images> and test/<class>/<images>"
        )
    test_name = "test" if (root / "test").is_dir() or not (root / "val").is_dir() else "val"
    for split in ("train", test_name):
        if not (root / split).is_dir():
            raise DataError(
                f"{root} has no {split}/ folder; an image folder needs train/<class>/ and test/<class>/"
            )
    train, test = _scan_split(root / "train"), _scan_split(root / test_name)
    if set(train) != set(test):
        only_train = ", ".join(sorted(set(train) - set(test))) or "-"
        only_test = ", ".join(sorted(set(test) - set(train))) or "-"
        raise DataError(
            f"train/ and {test_name}/ of {root} have different class folders (only in train/: {only_train}; "
            f"only in {test_name}/: {only_test}); both splits need the same classes"
        )
    classes = tuple(sorted(train))
    digest = hashlib.sha256(f"v{_CACHE_VERSION}\n{root}\n".encode())
    count, latest = 0, 0
    lists: dict[str, tuple[list[str], list[int]]] = {}
    for split, records in (("train", train), (test_name, test)):
        files, labels = [], []
        for label, name in enumerate(classes):
            folder = os.path.join(root, split, name)
            for rel, size, mtime in records[name]:
                files.append(os.path.join(folder, rel))
                labels.append(label)
                digest.update(f"{split}/{name}/{rel}\t{size}\n".encode())
                latest = max(latest, mtime)
            count += len(records[name])
        lists[split] = (files, labels)
    digest.update(f"{count}\n{latest}\n".encode())
    return FolderListing(root, classes, *lists["train"], *lists[test_name], key=digest.hexdigest())


def cache_path(root: str | Path, cache_dir: str | Path | None = None) -> Path:
    """The cache file of the image folder ``root`` (it may not exist yet)."""
    root = Path(root).expanduser().resolve()
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", root.name) or "root"
    tag = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    return resolve_cache_dir(cache_dir) / f"imagefolder-{safe}-{tag}.npz"


def _read_cache(path: Path, listing: FolderListing) -> dict[str, np.ndarray] | None:
    """The cached arrays if ``path`` holds a valid cache of ``listing``, else ``None``."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["key"]) != listing.key:
                return None
            arrays = {k: z[k] for k in ("train_images", "train_labels", "test_images", "test_labels")}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None  # missing, stale layout or damaged: decode again
    if (len(arrays["train_images"]), len(arrays["test_images"])) != (len(listing.train_files), len(listing.test_files)):
        return None
    return arrays


def _write_cache(path: Path, listing: FolderListing, arrays: dict[str, np.ndarray]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(path, "wb") as f:
            np.savez(f, key=np.array(listing.key), classes=np.array(listing.classes), **arrays)
    except (OSError, NasRescaleError) as exc:
        warnings.warn(
            f"could not write the decoded-image cache {path} ({exc}); the next load decodes again", stacklevel=3
        )


def load_imagefolder(
    root: str | Path | None,
    normalization: str | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
) -> ImageData:
    """Load an image folder, decoding it once and reading the cache afterwards.

    Args:
        root: folder holding ``train/<class>/*`` and ``test/<class>/*``.
        normalization: ``None`` -- ``cifar10`` if the classes are exactly CIFAR-10's ten,
            else ``computed`` (statistics of the training images) -- or a name accepted by
            :func:`~nasrescale.data.normalization.resolve_normalization`.
        cache_dir: cache folder (default: see :mod:`nasrescale.data.paths`).
        use_cache: read and write the decoded-image cache.

    Returns:
        The dataset, named ``imagefolder``.

    Raises:
        DataError: if the folder is missing or malformed, or an image is unreadable or of
            another size than the first.
    """
    if root is None:
        raise DataError(
            "the imagefolder dataset needs a folder: pass --data-path PATH with train/<class>/<images> "
            "and test/<class>/<images>"
        )
    listing = scan_imagefolder(root)
    path = cache_path(listing.root, cache_dir)
    arrays = _read_cache(path, listing) if use_cache else None
    if arrays is None:
        train = decode.decode_files(listing.train_files, desc=f"decoding {listing.root.name}/train")
        test = decode.decode_files(listing.test_files, desc=f"decoding {listing.root.name}/test")
        if train.shape[1:] != test.shape[1:]:
            raise DataError(
                f"training images of {listing.root} are {tuple(train.shape[1:])} but test images are "
                f"{tuple(test.shape[1:])} (channels, height, width); all images must have the same size"
            )
        arrays = {
            "train_images": train.numpy(),
            "train_labels": np.asarray(listing.train_labels, dtype=np.int64),
            "test_images": test.numpy(),
            "test_labels": np.asarray(listing.test_labels, dtype=np.int64),
        }
        if use_cache:
            _write_cache(path, listing, arrays)
    tensors = {k: torch.from_numpy(v) for k, v in arrays.items()}
    default = "cifar10" if listing.classes == CIFAR10_CLASSES else "computed"
    mean, std = resolve_normalization(normalization, default, tensors["train_images"])
    return ImageData(
        name="imagefolder",
        num_classes=len(listing.classes),
        mean=mean,
        std=std,
        crop_padding=crop_padding_for(tensors["train_images"].shape[2]),
        **tensors,
    )
