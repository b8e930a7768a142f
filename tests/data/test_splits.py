"""The benchmark's test halves (x-test / x-valid) and ``load_dataset(test_split=...)``."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from nasrescale.data import ImageData, default_test_split, load_dataset, subset
from nasrescale.data.benchmark_splits import SPLIT_FILES, apply_test_split, split_indices
from nasrescale.errors import DataError

REFERENCE = Path("/work/shared/reference")


def toy(n_test: int) -> ImageData:
    """A dataset whose test label i is i % 7 and whose test pixel [i, 0, 0, 0] is i % 251."""
    test = torch.zeros(n_test, 3, 1, 1, dtype=torch.uint8)
    test[:, 0, 0, 0] = torch.arange(n_test) % 251
    train = torch.zeros(4, 3, 1, 1, dtype=torch.uint8)
    return ImageData("toy", train, torch.arange(4) % 2, test, torch.arange(n_test) % 7, 7, (0.5,) * 3, (0.2,) * 3)


@pytest.mark.parametrize("dataset", sorted(SPLIT_FILES))
def test_halves_partition_the_test_set_and_match_the_benchmark_file(dataset):
    name, size = SPLIT_FILES[dataset]
    xtest, xvalid = split_indices(dataset, "x-test"), split_indices(dataset, "x-valid")
    assert len(xtest) == len(xvalid) == size // 2
    assert sorted(torch.cat([xtest, xvalid]).tolist()) == list(range(size))
    shipped = Path(__file__).parents[2] / "nasrescale" / "data" / "splits" / name
    doc = json.loads(shipped.read_text())
    assert xtest.tolist() == sorted(int(i) for i in doc["xtest"][1])
    if REFERENCE.is_dir():  # the shipped copy is the benchmark's file, byte for byte
        assert shipped.read_bytes() == (REFERENCE / name).read_bytes()


@pytest.mark.parametrize("dataset", sorted(SPLIT_FILES))
@pytest.mark.parametrize("split", ["x-test", "x-valid"])
def test_apply_test_split_keeps_exactly_that_half_in_order(dataset, split):
    size = SPLIT_FILES[dataset][1]
    cut = apply_test_split(toy(size), dataset, split)
    index = split_indices(dataset, split)
    assert cut.test_split == split
    assert cut.test_images.shape[0] == size // 2
    assert torch.equal(cut.test_labels, index % 7)
    assert torch.equal(cut.test_images[:, 0, 0, 0], (index % 251).to(torch.uint8))
    assert cut.train_images.shape[0] == 4  # training set untouched


def test_defaults_are_what_the_benchmark_reports():
    assert {d: default_test_split(d) for d in ("cifar10", "cifar100", "imagenet16-120", "cifar10-subset", "imagefolder")} \
        == {"cifar10": "full", "cifar100": "x-test", "imagenet16-120": "x-test", "cifar10-subset": "full",
            "imagefolder": "full"}
    assert apply_test_split(toy(10_000), "cifar100", None).test_images.shape[0] == 5000
    assert apply_test_split(toy(10_000), "cifar100", "full").test_images.shape[0] == 10_000
    data = load_dataset("cifar10-subset")
    assert data.test_split == "full"
    assert data.test_images.shape[0] == 1000
    assert subset(data, 100, 50).test_split == "full"


def test_split_errors_name_the_fix():
    with pytest.raises(DataError, match=r"'x-test' exists only for cifar100, imagenet16-120.*'cifar10-subset'"):
        load_dataset("cifar10-subset", test_split="x-test")
    with pytest.raises(DataError, match="unknown test split 'xtest'; choose one of: full, x-test, x-valid"):
        load_dataset("cifar10-subset", test_split="xtest")
    with pytest.raises(DataError, match="indexes a test set of 10000 images, this one has 999.*--test-split full"):
        apply_test_split(toy(999), "cifar100", "x-test")
    with pytest.raises(DataError, match="test_split must be one of"):
        ImageData("t", *[toy(2).train_images, toy(2).train_labels] * 2, 2, (0.5,) * 3, (0.2,) * 3, test_split="half")


def test_imagenet16_default_is_x_test_of_the_filtered_val_set(tmp_path):
    """The split indexes val_data after keeping labels 1..120, in file order (6,000 images)."""
    folder = tmp_path / "ImageNet16"
    folder.mkdir()
    rows = np.zeros((2, 768), np.uint8)
    for i in range(1, 11):
        (folder / f"train_data_batch_{i}").write_bytes(pickle.dumps({"data": rows, "labels": [1, 2]}))
    # 6,000 kept images (labels 1..120, 50 each) interleaved with dropped ones (label 500)
    labels = np.repeat(np.arange(1, 121), 50)
    pixels = (np.arange(6000) % 251).astype(np.uint8)
    val = np.zeros((12000, 768), np.uint8)
    val[0::2, 0] = pixels
    val_labels = np.full(12000, 500)
    val_labels[0::2] = labels
    (folder / "val_data").write_bytes(pickle.dumps({"data": val, "labels": val_labels.tolist()}))
    data = load_dataset("imagenet16-120", tmp_path)
    index = split_indices("imagenet16-120", "x-test")
    assert data.test_split == "x-test"
    assert data.test_images.shape[0] == 3000
    assert torch.equal(data.test_images[:, 0, 0, 0], torch.from_numpy(pixels)[index])
    assert torch.equal(data.test_labels, torch.from_numpy(labels - 1)[index])
    assert load_dataset("imagenet16-120", tmp_path, test_split="full").test_images.shape[0] == 6000


def test_image_data_validation_raises_data_error():
    """Bad tensors are a user-facing DataError (the CLI's exit 2), not a bare ValueError."""
    good = toy(4)
    with pytest.raises(DataError, match=r"train_images must be uint8 \(N, 3, H, W\), got torch.float32"):
        ImageData("t", good.train_images.float(), good.train_labels, good.test_images, good.test_labels, 7,
                  good.mean, good.std)
    with pytest.raises(DataError, match=r"test_labels must be int64 of shape \(4,\)"):
        ImageData("t", good.train_images, good.train_labels, good.test_images, good.test_labels[:2], 7,
                  good.mean, good.std)
