"""Every top-K% curve of a comparison is computed on the same cells; tau curves carry bands; the
seed-noise baseline has a precision@K; isomorphic cells count once."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nasrescale.ranking.compare import compare
from nasrescale.ranking.rank import kendall_tau, top_order, topk_size
from nasrescale.ranking.sources import Source
from nasrescale.space.isomorphism import isomorphism_classes
from nasrescale.space.family_loader import get_family

NB201 = get_family("nb201")


def _source(label: str, accuracies: dict[str, list[float]]) -> Source:
    rows = [{"arch": arch, "seed": seed, "accuracy": acc, "diverged": False, "degenerate": False}
            for arch, accs in accuracies.items() for seed, acc in enumerate(accs)]
    return Source(label, "store", pd.DataFrame(rows), 10.0, "nb201")


@pytest.fixture(scope="module")
def noisy():
    """30 cells of 30 classes; two seeds that disagree, so seed 0's best cells are not the mean's."""
    archs = [cells[0] for cells in list(isomorphism_classes(NB201).values())[200:230]]
    rng = np.random.default_rng(4)
    base = rng.normal(70, 2, size=len(archs))
    a = {arch: list(base[i] + rng.normal(0, 1.5, size=2)) for i, arch in enumerate(archs)}
    b = {arch: list(base[i] + rng.normal(0, 3, size=2)) for i, arch in enumerate(archs)}
    return _source("A", a), _source("B", b), a


def test_seed_noise_is_computed_on_the_comparisons_subset(noisy):
    src_a, src_b, a = noisy
    result, merged = compare(src_a, src_b, n_boot=0)
    means = merged["a"].to_numpy()
    tiebreak = merged.index.to_numpy(dtype=object)
    seed0 = np.array([a[arch][0] for arch in merged.index])
    differs = 0
    for entry in result["seed_noise"]["a"]["topk"]:
        k = entry["k_percent"]
        m = topk_size(len(means), k)
        subset = merged.index[top_order(means, tiebreak)[:m]]  # A's best K% by its mean: the table's subset
        by_seed0 = merged.index[top_order(seed0, tiebreak)[:m]]
        differs += set(subset) != set(by_seed0)
        assert entry["n"] == m
        expected = kendall_tau([a[x][0] for x in subset], [a[x][1] for x in subset])
        assert entry["kendall_tau"] == (None if expected is None else pytest.approx(expected))
    assert differs >= 3  # the data tell the two choices of subset apart


def test_tau_curves_carry_bootstrap_bands(noisy):
    src_a, src_b, _ = noisy
    result, _ = compare(src_a, src_b, n_boot=300)
    for entry in result["topk"] + result["seed_noise"]["a"]["topk"]:
        if entry["n"] >= 10:
            low, high = entry["ci"]
            assert low <= entry["kendall_tau"] <= high and low < high
    assert result["topk"][-1]["ci"] is None  # top 1%: one cell, no tau, no band
    assert compare(src_a, src_b, n_boot=0)[0]["topk"][0]["ci"] is None


def test_precision_at_k_has_a_seed_noise_baseline(noisy):
    src_a, src_b, a = noisy
    result, merged = compare(src_a, src_b, n_boot=0)
    s0 = np.array([a[x][0] for x in merged.index])
    s1 = np.array([a[x][1] for x in merged.index])
    tiebreak = merged.index.astype(str).to_numpy()
    for entry in result["seed_noise"]["a"]["topk"]:
        m = topk_size(len(s0), entry["k_percent"])
        overlap = len(set(top_order(s0, tiebreak)[:m]) & set(top_order(s1, tiebreak)[:m])) / m
        assert entry["precision"] == pytest.approx(overlap)


def test_isomorphic_cells_count_once_and_are_named():
    twin_a = "|none~0|+|skip_connect~0|none~1|+|nor_conv_1x1~0|skip_connect~1|skip_connect~2|"
    twin_b = "|skip_connect~0|+|skip_connect~0|none~1|+|none~0|nor_conv_1x1~1|skip_connect~2|"
    others = [cells[0] for cells in list(isomorphism_classes(NB201).values())[300:310]]
    acc = {arch: [60.0 + i, 60.5 + i] for i, arch in enumerate(others)}
    acc[twin_a] = acc[twin_b] = [75.0, 75.5]
    ranked = {arch: [v[0] * 0.5, v[1] * 0.5] for arch, v in acc.items()}
    result, merged = compare(_source("A", acc), _source("B", ranked), n_boot=0)
    assert result["n"] == 11 and len(merged) == 11
    assert result["counts"]["isomorphic_dropped"] == {max(twin_a, twin_b): min(twin_a, twin_b)}
    assert compare(_source("A", acc), _source("B", ranked), n_boot=0, include_isomorphic=True)[0]["n"] == 12
