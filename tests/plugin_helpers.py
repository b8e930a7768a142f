"""Shared pieces of the plug-in tests (``imports`` of pipeline, protocol and family files): the
plug-in sources, the pipeline file that names them, the fixture that forgets them, and readers
of what a run stored.

    from plugin_helpers import LR_PLUGIN, clean_registries, pipeline_text  # noqa: F401  (fixture)
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from nasrescale import plugins
from nasrescale.scaling.init_rules import INIT_REGISTRY
from nasrescale.scaling.lr_rules import LR_RULES
from nasrescale.space.encodings import format_arch, parse_arch
from nasrescale.space.family_loader import get_family
from nasrescale.space.topology import effective_edges

from pipeline_helpers import DEGENERATE, tiny_budget

__all__ = ["ARCHS", "LR_PLUGIN", "INIT_PLUGIN", "pipeline_text", "clean_registries", "stored", "canonical", "edge_lr"]

ARCHS = ("3_11_111", "3_03_003", DEGENERATE)

#: a new LR rule: base LR x a quarter of one plus the cell's live edges (one registry entry)
LR_PLUGIN = """
from nasrescale.scaling.lr_rules import LrRule, register_lr_rule
from nasrescale.space.topology import effective_edges

register_lr_rule(LrRule("{name}", lambda graph, family: 0.25 * (1 + len(list(effective_edges(graph, family)))),
                        description="base LR x (1 + live edges) / 4"))
"""

#: a new init rule with its own prepare: small normal weights, and a line per network it prepares
#: (the process it ran in) in a file beside it, so a test sees where it ran
INIT_PLUGIN = """
import os
from pathlib import Path

from torch import nn

from nasrescale.scaling.init_rules import InitRule, register_init_rule


def prepare(model, rebuild, protocol, width):
    for module in model.modules():
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            nn.init.normal_(module.weight, std=0.05)
    with open(Path(__file__).with_name("prepared.txt"), "a") as out:
        out.write(f"{{os.getpid()}}\\n")


register_init_rule(InitRule("{name}", prepare=prepare, description="small normal weights"))
"""


def pipeline_text(name: str, imports: list[str], protocol: str, extra: str = "") -> str:
    names = ", ".join(f'"{a}"' for a in ARCHS)
    return f"""
[pipeline]
name = "{name}"
seeds = [0]
reference = "none"
imports = {json.dumps(imports)}

[archs]
select = "list"
names = [{names}]

[protocols.mine]
protocol = "{protocol}"
kernel_rule = "none"
{extra}
{tiny_budget()}"""


@pytest.fixture()
def clean_registries(monkeypatch):
    """Plug-ins imported by a test are forgotten after it, with the registry entries they made."""
    monkeypatch.setattr(plugins, "_LOADED", {})
    lr_before, init_before = set(LR_RULES), set(INIT_REGISTRY)
    yield
    for name in set(LR_RULES) - lr_before:
        LR_RULES.remove(name)
    for name in set(INIT_REGISTRY) - init_before:
        INIT_REGISTRY.remove(name)


def stored(results: Path, name: str) -> tuple[list[dict], dict]:
    """The stored records and the stored resolved pipeline of run ``name``."""
    with sqlite3.connect(results / name / "store.sqlite") as db:
        records = [json.loads(r) for (r,) in db.execute("SELECT record_json FROM jobs")]
        pipeline = json.loads(db.execute("SELECT value FROM meta WHERE key = 'pipeline'").fetchone()[0])
    return records, pipeline


def canonical(arch: str) -> str:
    family = get_family("nb201")
    return format_arch(parse_arch(arch, family), family)


def edge_lr(arch: str, base_lr: float) -> float:
    """What the plug-in LR rule gives ``arch``."""
    family = get_family("nb201")
    return base_lr * 0.25 * (1 + len(list(effective_edges(parse_arch(arch, family), family))))
