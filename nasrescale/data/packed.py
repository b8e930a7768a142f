"""Image packs: a small dataset stored as its original encoded image files in one ``.npz``.

The shipped ``cifar10-subset`` (``nasrescale/data/cifar10_subset.npz``) is such a pack: 500
training and 100 test images per CIFAR-10 class, the original JPEG bytes (no re-encoding),
decoded on load. ``tools/make_cifar10_subset.py`` regenerates it with :func:`pack_imagefolder`.

Arrays of a pack (``<split>`` is ``train`` or ``test``):

* ``version``: int64 scalar, the pack format (1);
* ``classes``: unicode ``(C,)``, label ``i`` is ``classes[i]``;
* ``<split>_bytes``: uint8, the encoded files concatenated;
* ``<split>_offsets``: int64 ``(N + 1,)``, file ``i`` is ``bytes[offsets[i]:offsets[i + 1]]``;
* ``<split>_labels``: int16 ``(N,)``;
* ``<split>_files``: UTF-8 bytes ``(N,)``, the source files relative to the split folder.

The file is written byte-for-byte deterministically (members stored uncompressed in a fixed
order with a fixed timestamp), so regenerating it from the same images gives an identical file.
"""

from __future__ import annotations

import io
import os
import zipfile
from importlib import resources
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from ..errors import DataError
from ..fileio import atomic_writer
from .decode import decode_blobs
from .imagefolder import scan_imagefolder
from .normalization import CIFAR10_CLASSES, crop_padding_for, resolve_normalization
from .types import ImageData

__all__ = [
    "PACK_VERSION", "PACK_ARRAYS", "read_pack_arrays", "write_npz", "pack_imagefolder", "load_pack", "load_pack_file", "load_cifar10_subset",
    "cifar10_subset_path",
]

PACK_VERSION = 1
_SPLITS = ("train", "test")
#: the arrays of an image pack, as :func:`pack_imagefolder` writes them
PACK_ARRAYS = ("version", "classes", *(f"{s}_{part}" for s in _SPLITS for part in ("bytes", "offsets", "labels", "files")))


def _not_a_pack(path: str | Path, why: str) -> DataError:
    return DataError(f"{path} is not an image pack (expected arrays {', '.join(PACK_ARRAYS)} in a .npz archive; "
                     f"{why}): write one with tools/pack_cifar10.py, or pass --data-path a dataset folder")


def read_pack_arrays(path: str | Path, names: Sequence[str] = PACK_ARRAYS) -> dict[str, np.ndarray]:
    """The arrays ``names`` of the image pack ``path``, once it is known to hold all of :data:`PACK_ARRAYS`.

    Raises:
        DataError: "no such file" if ``path`` does not exist; "not an image pack (expected arrays
            ...)" if it is not a ``.npz`` archive of those arrays. No file is ever unpickled.
    """
    if not Path(path).is_file():
        raise DataError(f"--data-path {path}: no such file (an image pack is a .npz file written by "
                        "tools/pack_cifar10.py; check the path)" if not Path(path).exists()
                        else f"--data-path {path}: a folder, not an image pack (.npz) file")
    if not zipfile.is_zipfile(path):  # numpy would take it for a pickle and advise allow_pickle
        raise _not_a_pack(path, "this file is not a zip archive")
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = [k for k in PACK_ARRAYS if k not in z.files]
            arrays = {} if missing else {k: z[k] for k in names}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        why = ("an array holds Python objects, which are never unpickled" if "pickle" in str(exc)
               else f"{type(exc).__name__} reading it: {str(exc).splitlines()[0][:120] if str(exc) else ''}")
        raise _not_a_pack(path, why) from None
    if missing:
        raise _not_a_pack(path, f"it lacks {', '.join(missing)}")
    return arrays


_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest timestamp a zip entry can hold


def write_npz(path: str | Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as an uncompressed ``.npz`` whose bytes depend only on the arrays.

    ``numpy.savez`` stamps each member with the current time; this writes the same format
    with a fixed timestamp, in the order of ``arrays``, atomically.
    """
    with atomic_writer(path, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as zf:
        for key, value in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asarray(value), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=_ZIP_EPOCH)
            info.external_attr = 0o644 << 16  # rw-r--r--, independent of the umask
            zf.writestr(info, buf.getvalue())
    os.chmod(path, 0o644)  # the temporary file was private (0600); this one is shipped data


def _first_per_class(labels: np.ndarray, classes: Sequence[str], per_class: int | None, split: str,
                     root: Path) -> list[int]:
    """Indices of the first ``per_class`` images of each class (all if ``None``), class by class,
    each class's in sorted file order; DataError naming the class that has too few."""
    chosen: list[int] = []
    for label, name in enumerate(classes):
        members = np.flatnonzero(labels == label)  # already in sorted file order
        if per_class is not None and len(members) < per_class:
            raise DataError(f"{split}/{name} of {root} has {len(members)} images, fewer than {per_class}; "
                            "ask for fewer per class")
        chosen.extend(members[:per_class].tolist())
    return chosen


def pack_imagefolder(
    src: str | Path, out: str | Path, train_per_class: int | None = 500, test_per_class: int | None = 100
) -> dict[str, int]:
    """Pack the first files of each class of an image folder into an image pack.

    Args:
        src: image folder with ``train/<class>/*`` and ``test/<class>/*``.
        out: the ``.npz`` to write.
        train_per_class: training files per class: the first ones in sorted file-name order;
            ``None``: every file (the whole folder, e.g. full CIFAR-10 for GPU runs).
        test_per_class: test files per class, likewise.

    Returns:
        A summary: ``classes``, ``train``/``test`` image counts, ``bytes`` (file size).

    Raises:
        DataError: if a class has too few files, or a file cannot be decoded or differs in size.
    """
    if any(n is not None and n < 1 for n in (train_per_class, test_per_class)):
        raise DataError("train_per_class and test_per_class must be at least 1 (or None for all)")
    listing = scan_imagefolder(src)
    arrays: dict[str, np.ndarray] = {
        "version": np.int64(PACK_VERSION),
        "classes": np.array(listing.classes, dtype=np.str_),
    }
    shapes = []
    for split, per_class in (("train", train_per_class), ("test", test_per_class)):
        files = listing.train_files if split == "train" else listing.test_files
        labels = np.asarray(listing.train_labels if split == "train" else listing.test_labels)
        chosen = _first_per_class(labels, listing.classes, per_class, split, listing.root)
        blobs = [Path(files[i]).read_bytes() for i in chosen]
        names = ["/".join(Path(files[i]).relative_to(listing.root).parts[1:]) for i in chosen]  # <class>/<file>
        offsets = np.concatenate([[0], np.cumsum([len(b) for b in blobs])]).astype(np.int64)
        data = np.frombuffer(b"".join(blobs), dtype=np.uint8)
        # Decode once now so a pack never ships an unreadable or odd-sized image.
        shapes.append(decode_blobs(data, offsets, [files[i] for i in chosen], desc=f"checking {split}").shape[1:])
        arrays[f"{split}_bytes"] = data
        arrays[f"{split}_offsets"] = offsets
        arrays[f"{split}_labels"] = labels[chosen].astype(np.int16)
        arrays[f"{split}_files"] = np.array([n.encode() for n in names], dtype=np.bytes_)
    if shapes[0] != shapes[1]:
        raise DataError(
            f"train images are {tuple(shapes[0])} but test images {tuple(shapes[1])}; all sizes must match"
        )
    write_npz(out, arrays)
    return {
        "classes": len(listing.classes),
        "train": len(arrays["train_labels"]),
        "test": len(arrays["test_labels"]),
        "bytes": Path(out).stat().st_size,
    }


def load_pack(
    path: str | Path, name: str, normalization: str | None = None, default_normalization: str = "computed"
) -> ImageData:
    """Decode an image pack into an :class:`ImageData`.

    Args:
        path: the ``.npz`` pack.
        name: the dataset name to record.
        normalization: ``None`` (use ``default_normalization``) or a name accepted by
            :func:`~nasrescale.data.normalization.resolve_normalization`.
        default_normalization: the pack's own normalization.

    Returns:
        The decoded dataset.

    Raises:
        DataError: if the file is missing, not a pack, or holds an undecodable image.
    """
    z = read_pack_arrays(path)
    version = int(z["version"])
    classes = [str(c) for c in z["classes"]]
    parts = {s: (z[f"{s}_bytes"], z[f"{s}_offsets"], z[f"{s}_labels"], z[f"{s}_files"]) for s in _SPLITS}
    if version != PACK_VERSION:
        raise DataError(
            f"{path} is an image pack of format {version}; this nasrescale reads format {PACK_VERSION}"
        )
    tensors = {}
    for split, (data, offsets, labels, files) in parts.items():
        names = [f"{path}:{split}/{f.decode()}" for f in files]
        tensors[f"{split}_images"] = decode_blobs(data, offsets, names, desc=f"decoding {name}/{split}")
        tensors[f"{split}_labels"] = torch.from_numpy(labels.astype(np.int64))
    mean, std = resolve_normalization(normalization, default_normalization, tensors["train_images"])
    return ImageData(
        name=name,
        num_classes=len(classes),
        mean=mean,
        std=std,
        crop_padding=crop_padding_for(tensors["train_images"].shape[2]),
        **tensors,
    )


def cifar10_subset_path() -> Path:
    """Path of the shipped ``cifar10_subset.npz`` (inside the installed package)."""
    return Path(str(resources.files("nasrescale.data").joinpath("cifar10_subset.npz")))


def load_cifar10_subset(normalization: str | None = None) -> ImageData:
    """Load the shipped CIFAR-10 subset (5,000 train + 1,000 test images); needs no network.

    Args:
        normalization: ``None`` (``cifar10``) or a name accepted by
            :func:`~nasrescale.data.normalization.resolve_normalization`.

    Raises:
        DataError: if the file is missing from the installation.
    """
    path = cifar10_subset_path()
    if not path.is_file():
        raise DataError(
            f"the shipped CIFAR-10 subset {path} is missing; reinstall nasrescale, or regenerate it with "
            "tools/make_cifar10_subset.py --src CIFAR10_JPEG_FOLDER --out nasrescale/data/cifar10_subset.npz"
        )
    return load_pack(path, "cifar10-subset", normalization, default_normalization="cifar10")


#: images of full CIFAR-10 (train, test): a pack loaded as ``cifar10`` must hold all of them
CIFAR10_SIZES = (50_000, 10_000)


def load_pack_file(path: str | Path, name: str, normalization: str | None = None) -> ImageData:
    """Load an image pack given as ``--data-path FILE.npz`` for dataset ``name``.

    ``cifar10`` needs a pack of the whole of CIFAR-10 (``tools/pack_cifar10.py``: its ten
    classes, 50,000 + 10,000 images), so that results keyed ``cifar10`` are CIFAR-10's;
    ``imagefolder`` takes any pack (normalization ``cifar10`` for CIFAR-10's classes, else
    ``computed``, as for an image folder).

    Raises:
        DataError: another dataset name, an unreadable pack, or a ``cifar10`` pack that is not
            the whole of CIFAR-10.
    """
    classes = tuple(str(c) for c in read_pack_arrays(path, ("classes",))["classes"])
    if name not in ("cifar10", "imagefolder"):
        raise DataError(f"--data-path {path}: an image pack (.npz) can be loaded as cifar10 or imagefolder, "
                        f"not {name!r}; give {name!r} its own files")
    default = "cifar10" if classes == CIFAR10_CLASSES else "computed"
    data = load_pack(path, name, normalization, default_normalization=default)
    sizes = (data.train_images.shape[0], data.test_images.shape[0])
    if name == "cifar10" and (classes != CIFAR10_CLASSES or sizes != CIFAR10_SIZES
                              or data.image_shape != (3, 32, 32)):
        raise DataError(f"{path} is not the whole of CIFAR-10 ({len(classes)} classes, {sizes[0]:,} + {sizes[1]:,} "
                        f"images of {data.image_shape}); pack it with tools/pack_cifar10.py, or load a partial "
                        "pack as --dataset imagefolder")
    return data
