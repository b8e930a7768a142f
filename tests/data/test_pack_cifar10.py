"""tools/pack_cifar10.py and loading an image pack with ``--data-path FILE.npz`` (small temp folders)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from nasrescale.data import load_dataset
from nasrescale.data import packed
from nasrescale.data.normalization import CIFAR10_CLASSES, CIFAR10_MEAN
from nasrescale.errors import DataError

from tool_helpers import load_tool

def make_cifar_like(root: Path, n_train: int, n_test: int) -> dict:
    """CIFAR-10's class folders with random 32x32 PNGs (lossless: pixels can be compared)."""
    pixels = {}
    rng = np.random.default_rng(0)
    for split, n in (("train", n_train), ("test", n_test)):
        for name in CIFAR10_CLASSES:
            (root / split / name).mkdir(parents=True)
            for i in range(n + (split == "train" and name == "cat")):  # one class with an extra file
                arr = rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)
                Image.fromarray(arr).save(root / split / name / f"{i:04d}.png")
                pixels[(split, name, i)] = arr
    return pixels


def test_pack_tool_packs_every_file_and_loads_by_data_file(tmp_path, capsys, monkeypatch):
    pixels = make_cifar_like(tmp_path / "src", n_train=2, n_test=1)
    out = tmp_path / "out" / "cifar10.npz"
    assert load_tool("pack_cifar10").main(["--src", str(tmp_path / "src"), "--out", str(out)]) == 0
    assert "10 classes, 21 train + 10 test images" in capsys.readouterr().out  # every file, uneven classes too

    data = load_dataset("imagefolder", out)  # any pack loads as an image folder
    cat = CIFAR10_CLASSES.index("cat")
    assert data.train_labels.tolist().count(cat) == 3
    assert data.test_images.shape == (10, 3, 32, 32)
    first_cat = data.train_labels.tolist().index(cat)
    assert torch.equal(data.train_images[first_cat + 2], torch.from_numpy(pixels[("train", "cat", 2)]).permute(2, 0, 1))
    assert data.mean == CIFAR10_MEAN  # CIFAR-10's classes: CIFAR-10's normalization

    with pytest.raises(DataError, match="not the whole of CIFAR-10"):  # a partial pack is not "cifar10"
        load_dataset("cifar10", out)
    monkeypatch.setattr(packed, "CIFAR10_SIZES", (21, 10))  # pretend this is the full set
    full = load_dataset("cifar10", out)
    assert (full.name, full.test_split, full.num_classes) == ("cifar10", "full", 10)
    assert torch.equal(full.train_images, data.train_images)
    with pytest.raises(DataError, match="cifar10 or imagefolder"):
        load_dataset("cifar100", out)


def test_pack_tool_reports_a_bad_folder(tmp_path, capsys):
    assert load_tool("pack_cifar10").main(["--src", str(tmp_path / "missing"), "--out", str(tmp_path / "x.npz")]) == 2
    assert "error:" in capsys.readouterr().err
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(DataError, match="is not an image pack"):
        load_dataset("cifar10", bad)
