"""The ``cifar10`` and ``cifar100`` datasets, through ``torchvision.datasets``.

torchvision reads the *python version* of CIFAR (the folder ``cifar-10-batches-py`` or
``cifar-100-python`` inside the data root) and verifies its checksums. Nothing is downloaded
unless ``download=True`` (the CLI's ``--download``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..errors import DataError
from .normalization import crop_padding_for, resolve_normalization
from .paths import default_data_root
from .types import ImageData

__all__ = ["CIFAR_FOLDERS", "load_cifar"]

#: dataset name -> (torchvision class name, python-version folder, display name, classes)
CIFAR_FOLDERS: dict[str, tuple[str, str, str, int]] = {
    "cifar10": ("CIFAR10", "cifar-10-batches-py", "CIFAR-10", 10),
    "cifar100": ("CIFAR100", "cifar-100-python", "CIFAR-100", 100),
}


def _not_found(title: str, folder: str, base: Path) -> DataError:
    return DataError(
        f"{title} not found (or damaged) in {base / folder}. Nothing is downloaded unless --download "
        f"is given: pass --download to fetch it into {base}, or --data-path PATH to a folder holding the "
        f"python-version folder {folder}/ (a local copy), or use the imagefolder dataset with "
        "--data-path PATH to a folder of images (train/<class>/*, test/<class>/*)"
    )


def load_cifar(
    name: str, root: str | Path | None = None, download: bool = False, normalization: str | None = None
) -> ImageData:
    """Load CIFAR-10 or CIFAR-100 with torchvision.

    Args:
        name: ``cifar10`` or ``cifar100``.
        root: data root holding (or to receive) the python-version folder; the folder itself
            is accepted too. ``None`` means the default data root (:mod:`nasrescale.data.paths`).
        download: fetch the archive if it is missing (needs network access).
        normalization: ``None`` (the dataset's own constants) or a name accepted by
            :func:`~nasrescale.data.normalization.resolve_normalization`.

    Returns:
        The dataset: images uint8 ``(N, 3, 32, 32)``, labels int64.

    Raises:
        DataError: if the files are missing and ``download`` is false, or the download fails.
    """
    class_name, folder, title, num_classes = CIFAR_FOLDERS[name]
    base = default_data_root() if root is None else Path(root).expanduser()
    if base.name == folder:  # pointed at the python-version folder itself
        base = base.parent
    from torchvision import datasets  # slow to import; only needed here

    dataset_cls = getattr(datasets, class_name)
    splits = {}
    for split, train in (("train", True), ("test", False)):
        try:
            ds = dataset_cls(str(base), train=train, download=download)
        except RuntimeError as exc:
            if download:
                raise DataError(
                    f"{title} downloaded into {base} but failed its checksum ({exc}); delete {base / folder} and retry"
                ) from exc
            raise _not_found(title, folder, base) from exc
        except Exception as exc:  # noqa: BLE001 - urllib, socket, tarfile, ... all mean "download failed"
            raise DataError(
                f"could not download {title} into {base} ({type(exc).__name__}: {exc}). Check network access, or "
                "download the python-version archive elsewhere, unpack it and pass --data-path PATH to the folder "
                f"holding {folder}/"
            ) from exc
        images = torch.from_numpy(np.ascontiguousarray(ds.data)).permute(0, 3, 1, 2).contiguous()  # HWC -> CHW
        splits[split] = (images, torch.as_tensor(ds.targets, dtype=torch.int64))
    mean, std = resolve_normalization(normalization, name, splits["train"][0])
    return ImageData(
        name=name,
        train_images=splits["train"][0],
        train_labels=splits["train"][1],
        test_images=splits["test"][0],
        test_labels=splits["test"][1],
        num_classes=num_classes,
        mean=mean,
        std=std,
        crop_padding=crop_padding_for(splits["train"][0].shape[2]),
    )
