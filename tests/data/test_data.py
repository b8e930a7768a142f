"""Tests of nasrescale.data: the loaders, the shipped subset and its generator, caching,
normalization selection, subsets and the errors users see."""

from __future__ import annotations

import os
import pickle
import urllib.error
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from nasrescale.data import (
    CIFAR10_CLASSES,
    CIFAR10_MEAN,
    CIFAR10_STD,
    CIFAR100_MEAN,
    CIFAR100_STD,
    IMAGENET16_MEAN,
    IMAGENET16_STD,
    channel_stats,
    dataset_names,
    load_dataset,
    subset,
)
from nasrescale.data import decode, imagefolder
from nasrescale.data.packed import cifar10_subset_path, load_pack
from nasrescale.errors import DataError

from tool_helpers import load_tool

ROOT = Path(__file__).resolve().parents[2]
SHARED_CIFAR = ROOT.parent / "shared" / "datasets" / "cifar10-jpeg"
# torchvision 0.29 deprecates its image decoders (in favour of TorchCodec) with a warning per
# call; they still work, and nasrescale falls back to Pillow when they are gone.
pytestmark = pytest.mark.filterwarnings("ignore:The image decoding and encoding capabilities:DeprecationWarning")
needs_shared = pytest.mark.skipif(not SHARED_CIFAR.is_dir(), reason="needs ../shared/datasets/cifar10-jpeg (a folder shared/ beside the checkout); absent here")


def _image(seed: int, size: tuple[int, int] = (8, 8)) -> np.ndarray:
    """A random RGB image, HWC uint8."""
    return np.random.default_rng(seed).integers(0, 256, (*size, 3), dtype=np.uint8)


def make_folder(root: Path, classes=("cat", "dog", "emu"), n_train=4, n_test=2, ext=".png", size=(8, 8)) -> dict:
    """Write ``root/{train,test}/<class>/NNNN<ext>``; return {(split, class, i): HWC pixels}."""
    pixels = {}
    for split, n in (("train", n_train), ("test", n_test)):
        for c, name in enumerate(classes):
            (root / split / name).mkdir(parents=True, exist_ok=True)
            for i in range(n):
                arr = _image(hash((split, c, i)) % 2**32, size)
                Image.fromarray(arr).save(root / split / name / f"{i:04d}{ext}")
                pixels[(split, name, i)] = arr
    return pixels


def chw(arr: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(arr).permute(2, 0, 1)


# --- the shipped CIFAR-10 subset ----------------------------------------------------------


@pytest.fixture(scope="module")
def shipped():
    return load_dataset("cifar10-subset")


def test_shipped_subset_loads_offline(shipped):
    assert shipped.name == "cifar10-subset"
    assert shipped.train_images.shape == (5000, 3, 32, 32)
    assert shipped.test_images.shape == (1000, 3, 32, 32)
    assert shipped.train_images.dtype == torch.uint8
    assert shipped.train_labels.dtype == torch.int64
    assert torch.bincount(shipped.train_labels).tolist() == [500] * 10
    assert torch.bincount(shipped.test_labels).tolist() == [100] * 10
    assert (shipped.num_classes, shipped.crop_padding) == (10, 4)
    assert (shipped.mean, shipped.std) == (CIFAR10_MEAN, CIFAR10_STD)
    assert shipped.train_images.float().std() > 30  # real pixels, not a blank buffer
    assert cifar10_subset_path().stat().st_size < 7_000_000


def test_a_path_given_to_the_shipped_subset_is_refused_not_ignored(tmp_path, capsys):
    """A path beside the shipped subset was silently ignored: `--set data.path=/my/cifar10` trained on
    the 5,000-image subset. It now says so, from the loader and from the CLI, before anything runs."""
    from nasrescale.cli.main import main
    from nasrescale.errors import DataError

    with pytest.raises(DataError, match="cifar10-subset reads no files, so the path '/nonexist' would be ignored"):
        load_dataset("cifar10-subset", "/nonexist")
    assert main(["run", "quickstart", "--results", str(tmp_path / "res"), "--set", "data.path=/nonexist"]) == 2
    assert "would be ignored" in capsys.readouterr().err and not (tmp_path / "res").exists()


@needs_shared
def test_shipped_subset_is_first_files_and_same_pixels(shipped):
    from torchvision.io import ImageReadMode, decode_jpeg

    with np.load(cifar10_subset_path()) as z:
        files = {s: [f.decode() for f in z[f"{s}_files"]] for s in ("train", "test")}
        raw = {s: (z[f"{s}_bytes"], z[f"{s}_offsets"]) for s in ("train", "test")}
    for split, per_class in (("train", 500), ("test", 100)):
        expected = [
            f"{c}/{name}" for c in CIFAR10_CLASSES for name in sorted(os.listdir(SHARED_CIFAR / split / c))[:per_class]
        ]
        assert files[split] == expected
        data, offsets = raw[split]
        images = getattr(shipped, f"{split}_images")
        for i in range(len(expected)):
            source = (SHARED_CIFAR / split / expected[i]).read_bytes()
            assert data[offsets[i] : offsets[i + 1]].tobytes() == source  # original bytes, no re-encoding
            direct = decode_jpeg(torch.frombuffer(bytearray(source), dtype=torch.uint8), mode=ImageReadMode.RGB)
            assert torch.equal(images[i], direct), expected[i]


# --- the generator script -----------------------------------------------------------------


def test_make_subset_tool_is_deterministic(tmp_path, capsys):
    pixels = make_folder(tmp_path / "src", n_train=5, n_test=3, ext=".png")
    tool = load_tool("make_cifar10_subset")
    args = ["--src", str(tmp_path / "src"), "--train-per-class", "3", "--test-per-class", "2"]
    assert tool.main([*args, "--out", str(tmp_path / "a.npz")]) == 0
    assert tool.main([*args, "--out", str(tmp_path / "b.npz")]) == 0
    assert "3 classes, 9 train + 6 test images" in capsys.readouterr().out
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    data = load_pack(tmp_path / "a.npz", "toy")
    assert data.train_labels.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert data.test_labels.tolist() == [0, 0, 1, 1, 2, 2]
    assert torch.equal(data.train_images[4], chw(pixels[("train", "dog", 1)]))  # first 3 files of each class
    assert torch.equal(data.test_images[5], chw(pixels[("test", "emu", 1)]))
    with np.load(tmp_path / "a.npz") as z:
        first = z["train_bytes"][: z["train_offsets"][1]].tobytes()
    assert first == (tmp_path / "src/train/cat/0000.png").read_bytes()  # the original bytes
    assert tool.main([*args[:2], "--train-per-class", "6", "--out", str(tmp_path / "c.npz")]) == 2
    assert "fewer than 6" in capsys.readouterr().err


# --- imagefolder --------------------------------------------------------------------------


def test_imagefolder_loads_and_second_load_reads_cache(tmp_path, monkeypatch):
    pixels = make_folder(tmp_path / "imgs", ext=".png")
    calls = []
    real = decode.decode_files
    def counting(paths, desc=""):
        calls.append(len(paths))
        return real(paths, desc)

    monkeypatch.setattr(decode, "decode_files", counting)
    first = load_dataset("imagefolder", tmp_path / "imgs", cache_dir=tmp_path / "cache")
    assert calls == [12, 6]
    assert first.train_images.shape == (12, 3, 8, 8)
    assert first.test_labels.tolist() == [0, 0, 1, 1, 2, 2]
    assert torch.equal(first.train_images[5], chw(pixels[("train", "dog", 1)]))  # classes sorted, files sorted
    assert first.crop_padding == 1
    assert first.num_classes == 3
    assert (first.mean, first.std) == channel_stats(first.train_images)  # not CIFAR-10's classes: computed
    cache = imagefolder.cache_path(tmp_path / "imgs", tmp_path / "cache")
    assert cache.is_file()
    assert [p.name for p in cache.parent.iterdir()] == [cache.name]  # no temp file left
    monkeypatch.setattr(decode, "decode_files", lambda *a, **k: pytest.fail("decoded again despite a valid cache"))
    second = load_dataset("imagefolder", tmp_path / "imgs", cache_dir=tmp_path / "cache")
    assert torch.equal(second.train_images, first.train_images)
    assert torch.equal(second.test_labels, first.test_labels)
    assert second.mean == first.mean
    # a new file changes the content key: decode again, rewrite the one cache file
    Image.fromarray(_image(99)).save(tmp_path / "imgs" / "test" / "emu" / "0002.png")
    monkeypatch.setattr(decode, "decode_files", real)
    third = load_dataset("imagefolder", tmp_path / "imgs", cache_dir=tmp_path / "cache")
    assert len(third.test_labels) == 7
    assert len(list(cache.parent.iterdir())) == 1


def test_imagefolder_cache_dir_from_env_and_cifar_names(tmp_path, monkeypatch):
    make_folder(tmp_path / "c10", classes=CIFAR10_CLASSES, n_train=1, n_test=1, ext=".jpg", size=(16, 16))
    monkeypatch.setenv("NASRESCALE_CACHE", str(tmp_path / "envcache"))
    data = load_dataset("imagefolder", tmp_path / "c10")
    assert (data.mean, data.std) == (CIFAR10_MEAN, CIFAR10_STD)  # CIFAR-10's class names: its constants
    assert data.crop_padding == 2
    assert data.train_labels.tolist() == list(range(10))
    assert imagefolder.cache_path(tmp_path / "c10").parent == tmp_path / "envcache"
    assert imagefolder.cache_path(tmp_path / "c10").is_file()


def test_imagefolder_mixed_formats_decode_exactly(tmp_path):
    pixels = make_folder(tmp_path / "f", classes=("a",), n_train=1, n_test=1, ext=".bmp")
    png = _image(7)
    Image.fromarray(png).save(tmp_path / "f" / "train" / "a" / "0001.png")
    Image.fromarray(png).convert("L").save(tmp_path / "f" / "train" / "a" / "0002.png")  # grey -> RGB
    (tmp_path / "f" / "train" / "a" / "notes.txt").write_text("not an image")  # ignored
    data = load_dataset("imagefolder", tmp_path / "f", cache_dir=tmp_path / "cache")
    assert data.train_images.shape == (3, 3, 8, 8)
    assert torch.equal(data.train_images[0], chw(pixels[("train", "a", 0)]))
    assert torch.equal(data.train_images[1], chw(png))
    assert torch.equal(data.train_images[2][0], data.train_images[2][2])


def test_imagefolder_errors(tmp_path):
    with pytest.raises(DataError, match="does not exist.*--data"):
        load_dataset("imagefolder", tmp_path / "nowhere")
    with pytest.raises(DataError, match="needs a folder"):
        load_dataset("imagefolder")
    make_folder(tmp_path / "mixed", n_train=2, n_test=1)
    Image.fromarray(_image(1, (8, 9))).save(tmp_path / "mixed" / "train" / "dog" / "0001.png")
    with pytest.raises(DataError, match=r"dog/0001\.png is 9x8 pixels but .*cat/0000\.png is 8x8"):
        load_dataset("imagefolder", tmp_path / "mixed", cache_dir=tmp_path / "cache")
    make_folder(tmp_path / "classes", n_train=1, n_test=1)
    (tmp_path / "classes" / "test" / "emu").rename(tmp_path / "classes" / "test" / "eel")
    with pytest.raises(DataError, match="only in train/: emu; only in test/: eel"):
        load_dataset("imagefolder", tmp_path / "classes")
    make_folder(tmp_path / "broken", n_train=1, n_test=1)
    (tmp_path / "broken" / "test" / "dog" / "0000.png").write_bytes(b"\x89PNG garbage")
    with pytest.raises(DataError, match=r"cannot decode image file .*dog/0000\.png"):
        load_dataset("imagefolder", tmp_path / "broken", cache_dir=tmp_path / "cache")
    (tmp_path / "notest" / "train" / "a").mkdir(parents=True)
    with pytest.raises(DataError, match="no test/ folder"):
        load_dataset("imagefolder", tmp_path / "notest")


# --- imagenet16-120 -----------------------------------------------------------------------


def _write_imagenet16(folder: Path) -> None:
    folder.mkdir(parents=True)
    rows = (np.arange(4 * 768) % 251).astype(np.uint8).reshape(4, 768)  # 3 x 16 x 16 per row
    for i in range(1, 11):
        entry = {"data": rows, "labels": [1, 120, 121, 1000 - i]}
        (folder / f"train_data_batch_{i}").write_bytes(pickle.dumps(entry))
    (folder / "val_data").write_bytes(pickle.dumps({"data": rows[:3], "labels": [2, 500, 120]}))


def test_imagenet16_synthetic_pickles(tmp_path):
    _write_imagenet16(tmp_path / "ImageNet16")
    data = load_dataset("imagenet16-120", tmp_path, test_split="full")  # the parent of ImageNet16/ works too
    assert data.name == "imagenet16-120"
    assert data.num_classes == 120
    assert data.train_images.shape == (20, 3, 16, 16)
    assert data.train_labels.tolist() == [0, 119] * 10
    assert data.test_labels.tolist() == [1, 119]
    assert data.test_images[1, 2, 3, 4].item() == (2 * 768 + 2 * 256 + 3 * 16 + 4) % 251  # val row 2, CHW order
    assert (data.mean, data.std, data.crop_padding) == (IMAGENET16_MEAN, IMAGENET16_STD, 2)
    assert load_dataset("imagenet16-120", tmp_path / "ImageNet16", test_split="full").train_images.shape[0] == 20
    with pytest.raises(DataError, match="x-test indexes a test set of 6000 images, this one has 2"):
        load_dataset("imagenet16-120", tmp_path)  # the default split needs the real val_data


def test_imagenet16_errors(tmp_path):
    with pytest.raises(DataError, match=r"train_data_batch_1 \.\.\. train_data_batch_10 and val_data"):
        load_dataset("imagenet16-120", tmp_path)
    _write_imagenet16(tmp_path / "d")
    wrong = {"data": np.zeros((2, 100), np.uint8), "labels": [1, 2]}
    (tmp_path / "d" / "val_data").write_bytes(pickle.dumps(wrong))
    with pytest.raises(DataError, match=r"val_data: 'data' must be \(N, 768\)"):
        load_dataset("imagenet16-120", tmp_path / "d")


# --- cifar10 / cifar100 through torchvision -----------------------------------------------


def test_cifar_without_files_or_network(tmp_path, monkeypatch):
    with pytest.raises(DataError, match="--download") as err:
        load_dataset("cifar10", tmp_path / "data")
    assert str(tmp_path / "data" / "cifar-10-batches-py") in str(err.value)
    assert "imagefolder" in str(err.value)
    import torchvision.datasets.cifar as tv_cifar

    def offline(*args, **kwargs):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(tv_cifar, "download_and_extract_archive", offline)
    with pytest.raises(DataError, match="could not download CIFAR-100.*no network"):
        load_dataset("cifar100", tmp_path / "data", download=True)


def test_cifar_converts_torchvision_arrays(tmp_path, monkeypatch):
    import torchvision.datasets.cifar as tv_cifar

    monkeypatch.setattr(tv_cifar, "check_integrity", lambda *a, **k: True)  # fake files have no real md5
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    rows = np.random.default_rng(0).integers(0, 256, (2, 3072), dtype=np.uint8)  # CHW rows, as CIFAR stores them
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        (folder / name).write_bytes(pickle.dumps({"data": rows, "labels": [3, 9]}))
    (folder / "batches.meta").write_bytes(pickle.dumps({"label_names": list(CIFAR10_CLASSES)}))
    for root in (tmp_path, folder):  # the data root, or the python-version folder itself
        data = load_dataset("cifar10", root)
        assert data.train_images.shape == (10, 3, 32, 32)
        assert data.test_images.shape == (2, 3, 32, 32)
        assert data.train_labels.dtype == torch.int64
        assert data.train_labels.tolist() == [3, 9] * 5
        assert torch.equal(data.test_images, torch.from_numpy(rows).view(2, 3, 32, 32))
        assert (data.mean, data.std, data.crop_padding) == (CIFAR10_MEAN, CIFAR10_STD, 4)


# --- names, normalization, subsets --------------------------------------------------------


def test_unknown_name_and_normalization():
    with pytest.raises(DataError, match="dataset: expected one of 'cifar10', 'cifar100', 'cifar10-subset', .*got 'cifar11'"):
        load_dataset("cifar11")
    with pytest.raises(DataError, match="unknown normalization 'imagenet'; choose one of: cifar10, cifar100, imagenet16"):
        load_dataset("cifar10-subset", normalization="imagenet")
    assert set(dataset_names()) == {"cifar10", "cifar100", "cifar10-subset", "imagefolder", "imagenet16-120"}


@pytest.mark.parametrize(
    "choice, expected",
    [
        (None, (CIFAR10_MEAN, CIFAR10_STD)),
        ("cifar100", (CIFAR100_MEAN, CIFAR100_STD)),
        ("imagenet16", (IMAGENET16_MEAN, IMAGENET16_STD)),
    ],
)
def test_normalization_selection(choice, expected):
    data = load_dataset("cifar10-subset", normalization=choice)
    assert (data.mean, data.std) == expected


def test_constants_and_computed_stats(shipped):
    assert [round(v * 255, 2) for v in CIFAR100_STD] == [68.2, 65.4, 70.4]
    assert [round(v * 255, 2) for v in IMAGENET16_MEAN] == [122.68, 116.66, 104.01]
    mean, std = channel_stats(shipped.train_images)
    pixels = shipped.train_images.transpose(0, 1).reshape(3, -1).double() / 255
    assert np.allclose(mean, pixels.mean(1).numpy())
    assert np.allclose(std, pixels.std(1, unbiased=False).numpy())
    assert all(abs(m - c) < 0.01 for m, c in zip(mean, CIFAR10_MEAN))  # the subset resembles CIFAR-10


def test_subset_is_balanced_and_deterministic(shipped):
    a, b = subset(shipped, train=1000, test=55, seed=3), subset(shipped, train=1000, test=55, seed=3)
    assert torch.equal(a.train_images, b.train_images)
    assert torch.equal(a.test_labels, b.test_labels)
    assert torch.bincount(a.train_labels).tolist() == [100] * 10
    assert sorted(torch.bincount(a.test_labels).tolist()) == [5] * 5 + [6] * 5
    assert a.name == "cifar10-subset[train=1000,test=55,seed=3]"
    assert a.mean == shipped.mean
    assert not torch.equal(subset(shipped, train=1000, seed=4).train_images, a.train_images)
    assert torch.equal(subset(shipped, test=55, seed=3).test_images, a.test_images)  # splits drawn independently
    assert subset(shipped) is shipped
    with pytest.raises(DataError, match="cannot take 6000 train samples"):
        subset(shipped, train=6000)
