"""The shipped NB201 benchmark table and the reference-accuracy readers."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from nasrescale.space.encodings import format_arch, parse_arch
from nasrescale.errors import ConfigError
from nasrescale.space.benchmark import (
    DATASETS,
    benchmark_accuracies,
    benchmark_table,
    canonical_archs,
    resolve_dataset,
)

SHARED_CSV = Path(__file__).resolve().parents[3] / "shared" / "reference" / "nb201_200ep_test_accuracy.csv"


def test_table_shape_and_columns():
    t = benchmark_table()
    assert list(t.columns) == ["index", "arch", *DATASETS]
    assert len(t) == 15625
    assert t["arch"].is_unique
    assert t["index"].tolist() == list(range(15625))
    assert not t[list(DATASETS)].isna().any().any()
    # accuracies are percent
    assert t["cifar10"].between(0, 100).all()
    assert t["cifar10"].max() > 90


def test_table_archs_are_canonical(nb201):
    archs = benchmark_table()["arch"].tolist()
    assert canonical_archs(archs, nb201) == archs


def test_benchmark_table_returns_a_copy():
    t = benchmark_table()
    t.loc[0, "cifar10"] = -1.0
    assert benchmark_table().loc[0, "cifar10"] != -1.0


@pytest.mark.skipif(not SHARED_CSV.is_file(), reason="needs ../shared/reference/nb201_200ep_test_accuracy.csv (a folder shared/ beside the checkout); absent here")
def test_shipped_copy_equals_the_shared_csv():
    shipped = Path(__file__).resolve().parents[2] / "nasrescale" / "space" / "reference_data" / "nb201_200ep_test_accuracy.csv.gz"
    import gzip

    assert hashlib.sha256(gzip.decompress(shipped.read_bytes())).digest() == hashlib.sha256(SHARED_CSV.read_bytes()).digest()


def test_accuracies_by_dataset_and_alias(nb201):
    t = benchmark_table()
    row = t.iloc[123]
    for name, column in [("cifar10", "cifar10"), ("cifar10-subset", "cifar10"), ("CIFAR100", "cifar100"),
                         ("imagenet16-120", "imagenet16-120"), ("imagenet16_120", "imagenet16-120")]:
        acc = benchmark_accuracies(name)
        assert len(acc) == 15625
        assert acc[row["arch"]] == pytest.approx(row[column])
    # a digit-string cell looked up through its canonical form
    key = format_arch(parse_arch("3_33_333", nb201), nb201)
    assert key in benchmark_accuracies("cifar10")


def test_degenerate_cells_have_chance_accuracy(nb201):
    from nasrescale.space.topology import is_degenerate

    t = benchmark_table().sample(400, random_state=0)
    degenerate = [is_degenerate(parse_arch(a, nb201), nb201) for a in t["arch"]]
    chance = t.loc[degenerate, "cifar10"]
    assert len(chance) > 0
    assert (chance - 10.0).abs().max() < 1e-6


def test_unknown_dataset_names_the_allowed():
    with pytest.raises(ConfigError, match="allowed: cifar10, cifar100, imagenet16-120"):
        resolve_dataset("mnist")


def test_one_dataset_spelling_with_the_api_spelling_accepted_on_both_sides():
    from nasrescale.data.datasets import canonical_dataset_name
    from nasrescale.jobs.job import DataSpec
    from nasrescale.space.benchmark import DATASETS, benchmark_table

    assert "imagenet16-120" in DATASETS and "imagenet16-120" in benchmark_table().columns
    assert resolve_dataset("imagenet16_120") == canonical_dataset_name("imagenet16_120") == "imagenet16-120"
    assert DataSpec("imagenet16_120").name == "imagenet16-120"
