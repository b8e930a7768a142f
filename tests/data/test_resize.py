"""The ``resolution`` knob: box downsampling once at load, and job keys that change only when
it is set."""

from __future__ import annotations

import torch
import pytest

from nasrescale.data.resize import downsample
from nasrescale.data.types import ImageData
from nasrescale.errors import DataError
from nasrescale.jobs.job import DataSpec, TrainJob
from nasrescale.protocol import load_protocol
from nasrescale.space.family_loader import get_family


def _data(images: torch.Tensor, padding: int = 4) -> ImageData:
    labels = torch.zeros(images.shape[0], dtype=torch.int64)
    return ImageData("toy", images, labels, images.clone(), labels.clone(), 10, (0.5,) * 3, (0.25,) * 3,
                     crop_padding=padding)


def test_each_pixel_is_its_boxs_rounded_mean():
    gen = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (5, 3, 32, 32), generator=gen, dtype=torch.uint8)
    small = downsample(_data(images), 16)
    # the mean of each 2 x 2 box, in exact integer arithmetic, rounded half to even as torch.round
    boxes = images.to(torch.int64).view(5, 3, 16, 2, 16, 2).sum(dim=(3, 5))
    expected = torch.round(boxes.to(torch.float64) / 4).to(torch.uint8)
    assert torch.equal(small.train_images, expected) and torch.equal(small.test_images, expected)
    assert small.image_shape == (3, 16, 16) and small.crop_padding == 2
    assert torch.equal(small.train_labels, torch.zeros(5, dtype=torch.int64))


def test_the_same_side_is_the_same_data_and_a_bad_side_names_the_range():
    data = _data(torch.zeros((2, 3, 32, 32), dtype=torch.uint8))
    assert downsample(data, 32) is data
    for bad in (2, 33):
        with pytest.raises(DataError, match="budget.resolution = .*must be between 4 and the images' side 32"):
            downsample(data, bad)


def test_a_job_key_changes_only_when_the_resolution_is_set():
    family, protocol = get_family("nb201"), load_protocol("nb201", {"epochs": 1})
    plain = TrainJob.from_arch("3_11_111", family, DataSpec("cifar10-subset"), protocol)
    assert "resolution" not in plain.data.identity()  # keys of full-size jobs stay as they were
    low = TrainJob.from_arch("3_11_111", family, DataSpec("cifar10-subset", resolution=16), protocol)
    assert low.key() != plain.key() and low.data.identity()["resolution"] == 16
    assert low.cost() == pytest.approx(plain.cost() / 4)


def test_a_low_resolution_job_trains_on_small_images():
    family, protocol = get_family("nb201"), load_protocol("nb201", {"epochs": 1, "batch_size": 50})
    job = TrainJob.from_arch("3_11_111", family, DataSpec("cifar10-subset", train_subset=100, test_subset=50, resolution=8),
                   protocol, width=4, cells=1)
    assert job.data.load().image_shape == (3, 8, 8) and job.data.load().crop_padding == 1
    record = job.run()
    assert record["finished"] and record["train_images"] == 100 and record["test_images"] == 50
