"""The learning rate's path from the pipeline runner to the optimizer stays short: the stacks
that carry it (a job made with its protocol, the cell's LR and parameter groups derived, the
optimizer built; ``tools/lr_path.py``) cross at most 12 modules and call from a lower layer into
a higher one at most 5 times."""

from __future__ import annotations

import pytest

from tool_helpers import load_tool


@pytest.fixture(scope="module")
def lr_path():
    return load_tool("lr_path")


def test_the_climb_count_reads_the_layer_contract(lr_path):
    layer = lr_path.layers()
    assert layer["cli"] < layer["kinds"] < layer["pipeline"] < layer["jobs"] < layer["train"] < layer["errors"]
    path = ("pipeline/runner.py", "kinds/retrain/plan.py", "jobs/job.py", "executors/local.py")
    assert lr_path.climbs(path, layer) == ["pipeline/runner.py -> kinds/retrain/plan.py",
                                           "jobs/job.py -> executors/local.py"]


@pytest.mark.slow
def test_the_lr_reaches_the_optimizer_through_at_most_12_modules_and_5_climbs(lr_path):
    stacks = lr_path.trace()
    ends = set(stacks.values())
    assert {"a job is made with its protocol", "the optimizer is built"} <= ends, ends  # it saw the whole way
    assert any(path[-1] == "train/weights.py" for path in stacks)
    modules, up = lr_path.path_figures(stacks)
    assert len(modules) <= 12, modules
    assert len(up) <= 5, up
