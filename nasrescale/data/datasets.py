"""Load a dataset by name.

========================  ==============================================================
name                      source
========================  ==============================================================
``cifar10``, ``cifar100``  torchvision's python-version CIFAR files under ``root``;
                          downloaded only with ``download=True``
``cifar10-subset``        shipped with the package: 5,000 train + 1,000 test CIFAR-10
                          images (JPEG re-encodings); no root, no network
``imagefolder``           ``root/train/<class>/*`` and ``root/test/<class>/*`` image files,
                          decoded once and cached
``imagenet16-120``        NAS-Bench-201's ImageNet16 pickles in ``root`` (or ``root/ImageNet16``)
========================  ==============================================================

The test set is the benchmark's: ``test_split=None`` gives ``x-test`` (half of the official
test set, :mod:`nasrescale.data.benchmark_splits`) for ``cifar100``/``imagenet16-120`` and the
full test set otherwise, which is what NAS-Bench-201 reports for each.

``root`` may also be an image pack, ``FILE.npz`` (:func:`~nasrescale.data.packed.load_pack_file`):
the whole of CIFAR-10 as JPEG bytes (``tools/pack_cifar10.py``, ~53 MiB) loads as ``cifar10``.

Without ``root``, ``cifar10``/``cifar100``/``imagenet16-120`` look in the default data root
(``$NASRESCALE_DATA``, else ``<cache folder>/datasets``; see :mod:`nasrescale.data.paths`).

>>> dataset_names()
['cifar10', 'cifar100', 'cifar10-subset', 'imagefolder', 'imagenet16-120']
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..registry import Registry
from ..errors import DataError
from .benchmark_splits import apply_test_split, check_test_split, default_test_split
from .cifar import load_cifar
from .imagefolder import load_imagefolder
from .imagenet16 import load_imagenet16
from .normalization import normalization_names
from .packed import load_cifar10_subset, load_pack_file
from .paths import default_data_root
from .types import ImageData

__all__ = ["DATASETS", "DATASET_ALIASES", "Loader", "canonical_dataset_name", "dataset_names", "load_dataset"]

#: ``loader(root, download, normalization, cache_dir) -> ImageData``; ``root`` is already resolved
Loader = Callable[[Path | None, bool, str | None, Path | None], ImageData]

#: the datasets :func:`load_dataset` knows, by name
DATASETS: Registry[Loader] = Registry("dataset", "datasets", error=DataError)
DATASETS.add("cifar10", lambda root, download, norm, cache: load_cifar("cifar10", root, download, norm))
DATASETS.add("cifar100", lambda root, download, norm, cache: load_cifar("cifar100", root, download, norm))
DATASETS.add("cifar10-subset", lambda root, download, norm, cache: load_cifar10_subset(norm))
DATASETS.add("imagefolder", lambda root, download, norm, cache: load_imagefolder(root, norm, cache))
DATASETS.add("imagenet16-120", lambda root, download, norm, cache: load_imagenet16(root, norm))

# Datasets that fall back to the default data root when no root is given.
_USES_DATA_ROOT = ("cifar10", "cifar100", "imagenet16-120")


#: other spellings of a dataset's name, accepted everywhere and turned into the registered one
#: (the NAS-Bench-201 API writes ``imagenet16_120``)
DATASET_ALIASES = {"imagenet16_120": "imagenet16-120", "imagenet16": "imagenet16-120",
                   "imagenet-16-120": "imagenet16-120", "imagenet16120": "imagenet16-120",
                   "cifar10_subset": "cifar10-subset", "cifar-10": "cifar10", "cifar-100": "cifar100"}


def canonical_dataset_name(name: str) -> str:
    """The registered name of a dataset written in another accepted spelling (case ignored);
    any other name is returned as given, for :func:`load_dataset` to refuse.

    >>> canonical_dataset_name("imagenet16_120"), canonical_dataset_name("ImageNet16-120"), canonical_dataset_name("cifar10")
    ('imagenet16-120', 'imagenet16-120', 'cifar10')
    """
    key = name.strip().lower()
    key = DATASET_ALIASES.get(key, key)
    return key if key in DATASETS else name


def dataset_names() -> list[str]:
    """The names :func:`load_dataset` accepts."""
    return list(DATASETS)


def load_dataset(
    name: str,
    root: str | Path | None = None,
    *,
    download: bool = False,
    normalization: str | None = None,
    cache_dir: Path | None = None,
    test_split: str | None = None,
) -> ImageData:
    """Load a dataset as uint8 image tensors.

    Args:
        name: one of :func:`dataset_names`.
        root: where the dataset's files are (see the table above); none for
            ``cifar10-subset``, which ships with the package (a path is refused).
        download: allow downloading (``cifar10``/``cifar100`` only; nothing else is ever
            downloaded).
        normalization: ``None`` for the dataset's own mean/std (``cifar10`` for CIFAR-10 and
            its subset, ``cifar100``, ``imagenet16``; for ``imagefolder`` ``cifar10`` when its
            classes are CIFAR-10's ten, else ``computed``), or one of ``cifar10``,
            ``cifar100``, ``imagenet16``, ``computed`` (per-channel statistics of the
            training images).
        cache_dir: cache folder (default ``$NASRESCALE_CACHE``, else ``~/.cache/nasrescale``).
        test_split: ``full``, ``x-test`` or ``x-valid`` (the last two: NAS-Bench-201's halves
            of the cifar100/imagenet16-120 test sets); ``None`` for the split the benchmark
            reports for ``name`` (``x-test`` for cifar100/imagenet16-120, else ``full``).

    Returns:
        The :class:`ImageData`, its ``test_split`` set.

    Raises:
        DataError: for an unknown name, normalization or test split (``x-test``/``x-valid``
            on a dataset without them), missing or malformed files, or a failed download.

    >>> d = load_dataset("cifar10-subset")
    >>> d.test_split, d.test_images.shape[0]
    ('full', 1000)
    """
    name = canonical_dataset_name(name)
    loader = DATASETS.get(name)
    if normalization is not None and normalization not in normalization_names():
        raise DataError(
            f"unknown normalization {normalization!r}; choose one of: {', '.join(normalization_names())} "
            "(or leave it unset for the dataset's own)"
        )
    check_test_split(name, default_test_split(name) if test_split is None else test_split)  # before any I/O
    if name == "cifar10-subset" and root not in (None, ""):
        raise DataError(f"the shipped cifar10-subset reads no files, so the path {str(root)!r} would be ignored: "
                        "drop the path, or name the dataset it holds (e.g. cifar10 for a CIFAR-10 folder or pack)")
    path = None if root is None else Path(root).expanduser()
    if path is None and name in _USES_DATA_ROOT:
        path = default_data_root(cache_dir)
    if path is not None and path.suffix == ".npz" and not path.is_dir():  # an image pack (tools/pack_cifar10.py)
        return apply_test_split(load_pack_file(path, name, normalization), name, test_split)
    if path is not None and path.is_file():  # only a folder may receive --download
        raise DataError(f"--data-path {path} is a file, not a folder nor an image pack (.npz): pass the folder "
                        f"that holds {name}'s files, or a pack written by tools/pack_cifar10.py")
    data = loader(path, download, normalization, None if cache_dir is None else Path(cache_dir))
    return apply_test_split(data, name, test_split)
