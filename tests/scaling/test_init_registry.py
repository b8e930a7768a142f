"""The init-rule registry, the job-side grouping contract and the one fused-group limit."""

from __future__ import annotations

import re
from typing import Any

import pytest

from nasrescale.errors import ConfigError
from nasrescale.executors.base import ExecutorSettings
from nasrescale.jobs.grouping import DEFAULT_MAX_MEMBERS, JobGroup, plan_units
from nasrescale.jobs.job import DataSpec, TrainJob
from nasrescale.space.encodings import parse_arch
from nasrescale.protocol import load_protocol
from nasrescale.scaling import weight_rules
from nasrescale.scaling.init_rules import INIT_REGISTRY, INIT_RULE_NAMES, get_init_rule, has_base_lr
from nasrescale.train.options import RunOptions

from pipeline_helpers import one_thread  # noqa: E402,F401  (autouse fixtures)


def test_registry_names_every_weight_rule_and_mup():
    assert INIT_RULE_NAMES == (*weight_rules(), "mup")
    assert [name for name, rule in INIT_REGISTRY.items() if not rule.fusable] == ["mup"]
    scaling = [name for name, rule in INIT_REGISTRY.items() if rule.scales_lr]
    assert scaling == ["spectral", "mup"]
    assert [name for name in INIT_RULE_NAMES if has_base_lr("fixed", name)] == scaling  # has_base_lr reads the registry


def test_a_job_with_an_unknown_init_rule_names_the_registry(nb201):
    protocol = load_protocol("nb201", ["init=xavier"])  # the protocol layer does not know the rules
    with pytest.raises(ConfigError, match=re.escape("expected one of " + ", ".join(map(repr, INIT_RULE_NAMES)))):
        TrainJob.from_arch("3_33_333", nb201, DataSpec("cifar10-subset"), protocol)
    with pytest.raises(ConfigError, match="protocol.init: expected one of .*got 'xavier'"):
        get_init_rule("xavier")


def test_job_parses_its_arch_once(nb201, monkeypatch):
    from nasrescale.space import parsed_arch

    calls = []

    def counting_parse(arch, family):
        calls.append(arch)
        return parse_arch(arch, family)

    monkeypatch.setattr(parsed_arch, "parse_arch", counting_parse)
    job = TrainJob.from_arch("3_33_333", nb201, DataSpec("cifar10-subset"), load_protocol("nb201"))
    assert not job.degenerate
    assert job.cost() > 0
    assert job.graph.number_of_edges() > 0
    assert len(calls) == 1, calls
    assert job.fusion_key() is not None and job.fusion_key() == TrainJob(
        job.cell, nb201, job.data, load_protocol("rescaled", ["lr=0.5"]), seed=3).fusion_key()
    assert len(calls) == 1, calls  # a job made from the parsed cell parses nothing


class _Job:
    """Not a TrainJob: key, cost, run, and the optional grouping methods."""

    def __init__(self, name: str, group: str | None) -> None:
        self.name, self.group = name, group

    def key(self) -> str:
        return self.name

    def cost(self) -> float:
        return 1.0

    def fusion_key(self) -> str | None:
        return self.group

    @staticmethod
    def run_group(jobs: list[Any], options: RunOptions) -> list[dict[str, Any]]:
        return [{"key": j.key(), "members": len(jobs), "device": options.device} for j in jobs]


def test_any_job_with_a_fusion_key_groups_and_runs_its_group():
    jobs = [_Job("a", "g"), _Job("b", None), _Job("c", "g"), _Job("d", "h")]
    units = plan_units(jobs, fuse=True, device="cpu", max_members=DEFAULT_MAX_MEMBERS)
    assert [u.key() if not isinstance(u, JobGroup) else u.member_keys() for u in units] == [["a", "c"], "b", "d"]
    assert units[0].run(RunOptions(device="cpu")) == [{"key": "a", "members": 2, "device": "cpu"},
                                                                {"key": "c", "members": 2, "device": "cpu"}]
    assert [u.key() for u in plan_units(jobs, fuse=None, device="cpu")] == ["a", "b", "c", "d"]  # CPU: no fusion


def test_the_fused_group_limit_is_defined_once():
    assert ExecutorSettings().max_fused == DEFAULT_MAX_MEMBERS
    jobs = [_Job(str(i), "g") for i in range(DEFAULT_MAX_MEMBERS + 1)]
    assert sorted(len(u.jobs) for u in plan_units(jobs, fuse=True, device="cpu")) == [6, 7]  # 13 -> two even groups


def test_a_new_weight_rule_is_one_registry_entry(nb201):
    """One entry: the scaling map draws with its spec, param_groups apply its LR factor,
    apply_init and init_model accept it, and it is gone again once removed."""
    from nasrescale.models import build_model
    from nasrescale.models.init_registry import InitRule, WeightSite, register_init_rule
    from nasrescale.models.init_spec import InitSpec
    from nasrescale.scaling import apply_init, param_groups

    def half_fan(site: WeightSite) -> InitSpec:
        return InitSpec(divisor=4.0)  # std sqrt(2 / (4 fan_in)): half of He's

    register_init_rule(InitRule("quarter_he", "a test rule", weight_spec=half_fan, lr_factor=lambda site: 0.5))
    try:
        assert "quarter_he" in weight_rules()
        model = apply_init(build_model("3_33_333", nb201, 10, width=8, cells=1), "quarter_he")
        entry = model.scaling_map()["readout.weight"]
        assert entry.init["quarter_he"] == InitSpec(divisor=4.0) and entry.rule_lr["quarter_he"] == 0.5
        assert float(model.readout.bias.detach().abs().max()) == 0.0  # biases 0 under every drawing rule
        groups = param_groups(model, load_protocol("nb201", ["init=quarter_he", "lr=0.1"]))
        weights = {id(p) for n, p in model.named_parameters() if n.endswith("weight") and p.dim() > 1}
        assert {g["lr"] for g in groups if any(id(p) in weights for p in g["params"])} == {0.05}
    finally:
        INIT_REGISTRY.remove("quarter_he")
    assert "quarter_he" not in weight_rules()
