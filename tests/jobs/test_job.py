"""TrainJob: the key covers exactly what determines a result; run() records provenance."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from nasrescale.errors import ConfigError, DataError
from nasrescale.jobs.job import DataSpec, TrainJob
from nasrescale.protocol import load_protocol
from nasrescale.space.parsed_arch import ParsedArch
from nasrescale.train.options import RunOptions

from pipeline_helpers import one_thread  # noqa: F401  (fixtures, used by name)


ARCH = "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|"
DEGENERATE = "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"


@pytest.fixture()
def job(nb201):
    return TrainJob.from_arch(ARCH, nb201, DataSpec("cifar100", "/data/a"), load_protocol("nb201", ["epochs=12"]), seed=0)


def test_key_is_canonical_and_stable(job, nb201):
    digits = TrainJob.from_arch("3_34_131", nb201, job.data, job.protocol, seed=0)  # same cell, other encoding
    assert digits.arch == ARCH
    assert digits.key() == job.key()
    assert pickle.loads(pickle.dumps(job)).key() == job.key()  # executors ship jobs to workers
    assert job.identity()["width"] == 16
    assert job.identity()["cells"] == 5  # resolved from the family
    assert dataclasses.replace(job, width=16, cells=5).key() == job.key()
    assert dataclasses.replace(job, label="rescaled").key() == job.key()  # the label is not in the key


@pytest.mark.parametrize("change", [
    lambda j, f: dataclasses.replace(j, cell=ParsedArch.parse("3_33_333", f)),
    lambda j, f: dataclasses.replace(j, family=dataclasses.replace(f, kernel_rule="per_layer")),
    lambda j, f: dataclasses.replace(j, family=dataclasses.replace(f, kernel_base=5)),
    lambda j, f: dataclasses.replace(j, protocol=dataclasses.replace(j.protocol, precision="fp32")),
    lambda j, f: dataclasses.replace(j, protocol=dataclasses.replace(j.protocol, weight_decay=3e-4)),
    lambda j, f: dataclasses.replace(j, data=dataclasses.replace(j.data, test_split="x-valid")),
    lambda j, f: dataclasses.replace(j, data=dataclasses.replace(j.data, train_subset=5000)),
    lambda j, f: dataclasses.replace(j, data=dataclasses.replace(j.data, test_subset=500)),
    lambda j, f: dataclasses.replace(j, data=DataSpec("cifar10")),
    lambda j, f: dataclasses.replace(j, seed=1),
    lambda j, f: dataclasses.replace(j, width=8),
], ids=["arch", "kernel_rule", "kernel_base", "precision", "protocol_key", "test_split", "train_subset",
        "test_subset", "dataset", "seed", "width"])
def test_key_changes_with_what_changes_the_result(job, nb201, change):
    other = change(job, nb201)
    assert other.key() != job.key()
    assert other.identity() != job.identity()


def test_key_ignores_the_data_path_and_resolves_the_default_split(job):
    assert dataclasses.replace(job, data=dataclasses.replace(job.data, path="/mnt/other")).key() == job.key()
    explicit = dataclasses.replace(job, data=dataclasses.replace(job.data, test_split="x-test"))
    assert explicit.key() == job.key()  # cifar100's default split is the benchmark's x-test


def test_bad_size_is_a_config_error(job):
    with pytest.raises(ConfigError, match="width"):
        dataclasses.replace(job, width=0).key()


def test_degenerate_cell_is_recorded_at_chance_without_training(nb201):
    protocol = load_protocol("rescaled", ["lr=0.3", "epochs=50"])
    job = TrainJob.from_arch(DEGENERATE, nb201, DataSpec("cifar10-subset", test_subset=200), protocol, seed=3,
                   width=4, cells=1, label="rescaled")
    rec = job.run()
    assert rec["degenerate"] is True
    assert rec["epochs_run"] == 0
    assert rec["history"] == []
    assert rec["test_accuracy"] == pytest.approx(100.0 / 10)
    assert rec["lr"] == 0.3
    assert rec["protocol"] == "rescaled"
    assert rec["protocol_name"] == "rescaled"
    assert rec["key"] == job.key()
    assert rec["test_split"] == "full"
    assert rec["test_images"] == 200
    assert rec["precision"] == "fp32"
    assert {"nasrescale", "torch", "cuda", "device_name", "hostname", "finished_at"} <= set(rec["provenance"])


def test_the_record_states_the_precision_the_run_trains_in(nb201):
    """One rule (trained_precision) for the engine and the record: a bf16 protocol trains and is
    recorded in fp32 on the CPU, in bf16 where the options ask for CPU autocast."""
    job = TrainJob.from_arch(DEGENERATE, nb201, DataSpec("cifar10-subset", test_subset=20), load_protocol("nb201"), seed=0,
                   width=4, cells=1)
    assert job.protocol.precision == "bf16"
    assert job.run()["precision"] == "fp32"
    assert job.run(RunOptions(cpu_autocast=True))["precision"] == "bf16"


def test_run_streams_epochs_and_resumes_from_its_checkpoint(nb201, tmp_path):
    protocol = load_protocol("nb201", ["epochs=2", "batch_size=50"])
    job = TrainJob.from_arch("3_11_111", nb201, DataSpec("cifar10-subset", train_subset=200, test_subset=100), protocol,
                   seed=1, width=4, cells=1)
    seen = []
    first = job.run(RunOptions(checkpoint_dir=tmp_path, on_epoch=seen.append))
    assert [e["epoch"] for e in seen] == [1, 2]
    assert first["history"] == seen
    assert job.checkpoint_path(tmp_path).is_file()  # kept for the driver to delete once stored
    again = job.run(RunOptions(checkpoint_dir=tmp_path))  # a finished checkpoint: re-evaluation only
    assert again["resumed_from"] == 2
    assert again["test_accuracy"] == first["test_accuracy"]


def test_unknown_dataset_fails_on_run(nb201):
    job = TrainJob.from_arch(ARCH, nb201, DataSpec("mnist"), load_protocol("nb201"), seed=0)
    with pytest.raises(DataError, match="mnist"):
        job.run()
