"""The LR-rule registry: a new rule is one entry plus a protocol file, and every name a protocol
chooses (LR, kernel and warm-up rule, schedule) fails naming its key and the registered names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nasrescale.errors import ConfigError
from nasrescale.jobs.job import DataSpec, TrainJob
from nasrescale.protocol import SCHEDULES, Protocol, load_protocol
from nasrescale.scaling.lr_rules import LR_RULES, LrRule, get_lr_rule, register_lr_rule, scales_per_arch
from nasrescale.scaling.init_rules import has_base_lr, init_model
from nasrescale.space.encodings import parse_arch
from nasrescale.space.topology import lr_scale

from pipeline_helpers import one_thread  # noqa: F401  (autouse fixture)


class _Data:
    num_classes, image_shape = 10, (3, 8, 8)


@pytest.fixture
def halved():
    """A rule registered for one test: every architecture at half the base LR."""
    rule = register_lr_rule(LrRule("halved", lambda graph, family: 0.5))
    yield rule
    LR_RULES.remove(rule.name)


def test_a_new_lr_rule_is_one_entry_and_a_protocol_file(halved, nb201, tmp_path: Path):
    path = tmp_path / "halved.toml"
    path.write_text('[protocol]\nname = "halved"\nlr = 0.4\nlr_rule = "halved"\n')
    protocol = load_protocol(path)
    job = TrainJob.from_arch("3_13_011", nb201, DataSpec("cifar10-subset"), protocol)  # the job's check knows the rule
    assert job.key() != TrainJob.from_arch("3_13_011", nb201, DataSpec("cifar10-subset"), load_protocol(path, lr_rule="fixed")).key()
    run = init_model(job.arch, nb201, _Data(), protocol, 0, width=4, cells=1)
    assert (run.plan.lr_scale, run.plan.lr) == (0.5, 0.2)  # NB201's kernel rule none: no kernel factor
    assert {g["lr"] for g in run.param_groups()} == {0.2}
    assert scales_per_arch("halved") and has_base_lr("halved", "default")


def test_the_shipped_rules_derive_the_paper_lr(nb201):
    plan = init_model("3_13_011", nb201, _Data(), load_protocol("rescaled", lr=0.4), 0, width=4, cells=1).plan
    assert plan.lr_scale == lr_scale(parse_arch("3_13_011", nb201), nb201)  # eq. 8
    assert plan.lr == pytest.approx(0.4 * plan.lr_scale)
    fixed = init_model("3_13_011", nb201, _Data(), load_protocol("nb201"), 0, width=4, cells=1).plan
    assert (fixed.lr_scale, fixed.kernel_rule, fixed.lr) == (None, "none", 0.1)
    assert not get_lr_rule("fixed").scales and not scales_per_arch("fixed") and not scales_per_arch(None)
    assert has_base_lr(None, None)  # a stored protocol from before the rule was recorded: scaled


@pytest.mark.parametrize("change, key, names", [
    ({"lr_rule": "sqrt"}, "protocol.lr_rule", LR_RULES.names()),
    ({"kernel_rule": "max"}, "protocol.kernel_rule", ("none", "network", "per_layer")),
    ({"warmup_rule": "linear"}, "protocol.warmup_rule", ("elr_subcritical",)),
])
def test_a_job_names_the_key_and_the_registered_names(nb201, change, key, names):
    protocol = load_protocol("nb201", change)  # the protocol layer is below the registries
    listed = ", ".join(map(repr, names))
    with pytest.raises(ConfigError, match=f"^{re.escape(key)}: expected .*{re.escape(listed)}"):
        TrainJob.from_arch("3_13_011", nb201, DataSpec("cifar10-subset"), protocol)


def test_a_protocol_names_an_unknown_schedule():
    with pytest.raises(ConfigError, match=re.escape(f"protocol.schedule: expected one of "
                                                    f"{', '.join(map(repr, SCHEDULES.names()))} (the registered "
                                                    "schedules), got 'step'")):
        load_protocol("nb201", schedule="step")


def test_a_run_checks_its_base_lr_once(nb201, monkeypatch):
    """``init_model`` derives the LR plan once; its param groups reuse it."""
    calls = []
    require_lr = Protocol.require_lr
    monkeypatch.setattr(Protocol, "require_lr", lambda self: calls.append(self.name) or require_lr(self))
    run = init_model("3_13_011", nb201, _Data(), load_protocol("rescaled", lr=0.4), 0, width=4, cells=1)
    run.param_groups()
    assert calls == ["rescaled"]
