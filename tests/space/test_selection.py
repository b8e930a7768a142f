"""Architecture selection on its own (selection through a pipeline file: ``tests/pipeline/``)."""

from __future__ import annotations

from nasrescale.space.benchmark import benchmark_accuracies
from nasrescale.space.selection import stratified_sample


def test_stratified_selection_spans_the_accuracy_range():
    acc = benchmark_accuracies("cifar10")
    picked = stratified_sample(acc, 10, seed=0)
    values = [acc[a] for a in picked]
    ranked = sorted(acc.values())
    assert values == sorted(values)  # one per stratum, low to high
    assert values[0] <= ranked[len(ranked) // 10]
    assert values[-1] >= ranked[-len(ranked) // 10 - 1]
