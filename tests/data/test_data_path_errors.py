"""``--data-path`` errors say what is wrong with the path: a pack that does not exist, a file that
is not a pack (never numpy's advice to unpickle it), a file where a folder belongs; ``--download``
is suggested only where a folder was meant."""

from __future__ import annotations

import numpy as np
import pytest

from nasrescale.data import load_dataset
from nasrescale.errors import DataError

from pipeline_helpers import cli  # noqa: F401  (used by name)


def refusal(capsys, *data_args: str) -> str:
    code, out, err = cli(capsys, "train", "3_33_333", "--epochs", "1", "--quiet", *data_args)
    assert (code, out, err.count("\n")) == (2, "", 1), err
    return err


@pytest.mark.parametrize("dataset", ["cifar10", "imagefolder"])
def test_a_pack_that_does_not_exist_is_no_such_file(tmp_path, capsys, dataset):
    err = refusal(capsys, "--dataset", dataset, "--data-path", str(tmp_path / "missing.npz"))
    assert f"--data-path {tmp_path / 'missing.npz'}: no such file" in err
    assert "--download" not in err and "folder" not in err


def test_seven_random_bytes_are_not_an_image_pack(tmp_path, capsys):
    fake = tmp_path / "x.npz"
    fake.write_bytes(bytes([0x80, 0x04, 0x95, 0x13, 0x07, 0x00, 0x2e]))  # starts like a pickle, as numpy sees it
    err = refusal(capsys, "--dataset", "cifar10", "--data-path", str(fake))
    assert f"{fake} is not an image pack (expected arrays version, classes, train_bytes, " in err
    assert "this file is not a zip archive" in err
    assert "pickle" not in err and "--download" not in err


def test_an_archive_of_other_arrays_names_those_it_lacks(tmp_path):
    other = tmp_path / "weights.npz"
    np.savez(other, version=np.array(1), w=np.zeros(3))
    with pytest.raises(DataError, match=r"not an image pack \(expected arrays .*; it lacks classes, train_bytes,"):
        load_dataset("imagefolder", other)


def test_an_archive_of_python_objects_is_never_unpickled(tmp_path):
    objects = tmp_path / "objects.npz"
    np.savez(objects, **{name: np.array([{"a": 1}], dtype=object) for name in
                         ("version", "classes", *(f"{s}_{p}" for s in ("train", "test")
                                                  for p in ("bytes", "offsets", "labels", "files")))})
    with pytest.raises(DataError) as caught:
        load_dataset("imagefolder", objects)
    message = str(caught.value)
    assert "not an image pack" in message and "Python objects, which are never unpickled" in message
    assert "allow_pickle" not in message


def test_a_file_that_is_no_pack_is_not_taken_for_a_folder(tmp_path, capsys):
    archive = tmp_path / "cifar-10-python.tar.gz"
    archive.write_bytes(b"\x1f\x8b not really")
    err = refusal(capsys, "--dataset", "cifar10", "--data-path", str(archive))
    assert f"--data-path {archive} is a file, not a folder nor an image pack (.npz)" in err
    assert "--download" not in err


def test_a_missing_folder_still_suggests_download(tmp_path, capsys):
    err = refusal(capsys, "--dataset", "cifar10", "--data-path", str(tmp_path / "cifar"))
    assert "CIFAR-10 not found" in err and "pass --download to fetch it into" in err
