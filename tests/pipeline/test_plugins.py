"""Plug-ins (``imports`` in pipeline and protocol files): the user's own LR and init rules, named
from ``nasrescale run my.toml`` without any change to the package.

The first test is also the proof that a new LR rule takes one registry entry (in the user's own
``my_rules.py``) plus one TOML file, and no other file: the suite stays green with the rule
defined only in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from nasrescale import plugins
from nasrescale.errors import ConfigError
from nasrescale.executors.pool import PoolExecutor
from nasrescale.pipeline.runner import run_pipeline
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.scaling.init_rules import INIT_REGISTRY
from nasrescale.scaling.lr_rules import LR_RULES
from nasrescale.space.encodings import format_arch, parse_arch
from nasrescale.space.registry import get_family
from nasrescale.space.topology import effective_edges

from pipeline_helpers import DEGENERATE, cli, one_thread, private_cache, tiny_budget  # noqa: F401  (fixtures)

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


def test_a_new_lr_rule_is_one_registry_entry_plus_one_toml(tmp_path, capsys, clean_registries):
    """`nasrescale run my.toml` with `my_rules.py` beside it: the stored runs train at the LRs the
    plug-in rule computes, and the stored pipeline names the plug-in."""
    (tmp_path / "my_rules.py").write_text(LR_PLUGIN.format(name="quarter_edges"))
    toml = tmp_path / "my.toml"
    toml.write_text(pipeline_text("plug", ["my_rules.py"], "nb201", 'lr_rule = "quarter_edges"\nlr = 0.2'))
    results = tmp_path / "res"
    code, _, err = cli(capsys, "run", str(toml), "--results", str(results), "--quiet")
    assert code == 0, err
    records, pipeline = stored(results, "plug")
    assert sorted(r["arch"] for r in records) == sorted(canonical(a) for a in ARCHS)
    for record in records:
        assert record["lr_rule"] == "quarter_edges"
        assert record["lr"] == pytest.approx(edge_lr(record["arch"], 0.2)), record["arch"]
    assert len({r["lr"] for r in records}) > 1  # the rule scales per architecture
    assert pipeline["pipeline"]["imports"] == [str((tmp_path / "my_rules.py").resolve())]
    # a report in a process that never read my.toml imports the stored plug-in: the rule's own words
    plugins._LOADED.clear()
    sys.modules.pop(plugins.Plugin(pipeline["pipeline"]["imports"][0]).module_name())
    LR_RULES.remove("quarter_edges")
    code, _, err = cli(capsys, "report", "plug", "--results", str(results))
    assert code == 0, err
    assert "| base LR x (1 + live edges) / 4 |" in (results / "plug" / "report.md").read_text()


def test_plugin_rules_reach_the_pool_workers(tmp_path, clean_registries):
    """A pipeline's LR rule plug-in and its protocol file's init rule plug-in, through the process
    pool (fresh spawned processes, as on GPUs): each job trains under both rules, in its worker."""
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "lr_plugin.py").write_text(LR_PLUGIN.format(name="quarter_edges_pool"))
    (tmp_path / "init_plugin.py").write_text(INIT_PLUGIN.format(name="small_normal"))
    (tmp_path / "mine.toml").write_text('[protocol]\nname = "mine"\nimports = ["init_plugin.py"]\n'
                                        'init = "small_normal"\nlr = 0.1\nepochs = 1\n')
    toml = tmp_path / "my.toml"
    toml.write_text(pipeline_text("pool_plug", ["rules/lr_plugin.py"], "mine.toml", 'lr_rule = "quarter_edges_pool"'))
    pipeline = load_pipeline(toml)
    results = tmp_path / "res"
    pool = PoolExecutor(pipeline.executor, devices=["cpu", "cpu"], progress=False)
    summary = run_pipeline(pipeline, results, progress=False, executor=pool)
    assert summary.failed == 0, summary.counts
    records, stored_pipeline = stored(results, "pool_plug")
    for record in records:
        assert (record["init"], record["lr_rule"]) == ("small_normal", "quarter_edges_pool")
        assert record["lr"] == pytest.approx(edge_lr(record["arch"], 0.1)), record["arch"]
    pids = (tmp_path / "prepared.txt").read_text().split()
    assert len(pids) == len(records) and str(os.getpid()) not in pids  # prepared in the workers, once a run
    assert stored_pipeline["pipeline"]["imports"] == [str((tmp_path / "rules" / "lr_plugin.py").resolve()),
                                                      str((tmp_path / "init_plugin.py").resolve())]


@pytest.mark.parametrize("entry, plugin, words", [
    ("missing_rules.py", None, "no file 'missing_rules.py'"),
    ("no_such_rules_module", None, "'no_such_rules_module' (searched in"),
    ("broken.py", "raise ValueError('no rule today')", "importing it failed: ValueError: no rule today"),
])
def test_a_plugin_that_cannot_be_imported_is_refused_before_anything_is_stored(tmp_path, capsys, clean_registries,
                                                                                entry, plugin, words):
    if plugin is not None:
        (tmp_path / entry).write_text(plugin)
    toml = tmp_path / "my.toml"
    toml.write_text(pipeline_text("refused", [entry], "nb201", 'lr_rule = "fixed"'))
    results = tmp_path / "res"
    code, out, err = cli(capsys, "run", str(toml), "--results", str(results), "--quiet")
    assert code == 2
    assert err.startswith("nasrescale run: error: pipeline.imports: ") and words in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert not results.exists()  # nothing stored, no run folder


def test_a_protocol_file_plugin_that_fails_names_its_key_and_file(tmp_path, clean_registries):
    (tmp_path / "mine.toml").write_text('[protocol]\nname = "mine"\nimports = ["gone.py"]\nlr = 0.1\n')
    toml = tmp_path / "my.toml"
    toml.write_text(pipeline_text("refused", [], "mine.toml"))
    message = r"^protocols\.mine\.protocol: .*mine\.toml: protocol\.imports: no file 'gone\.py'"
    with pytest.raises(ConfigError, match=message):
        load_pipeline(toml)


def test_imports_are_stored_but_not_part_of_the_run_identity(tmp_path, clean_registries):
    """A rerun from another folder (the plug-in elsewhere) is the same experiment."""
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "my_rules.py").write_text(LR_PLUGIN.format(name="quarter_edges_id"))
        (tmp_path / folder / "my.toml").write_text(
            pipeline_text("same", ["my_rules.py"], "nb201", 'lr_rule = "quarter_edges_id"\nlr = 0.2'))
    a, b = (load_pipeline(tmp_path / f / "my.toml") for f in ("a", "b"))
    archs = a.arch_list()
    assert a.identity(archs) == b.identity(archs) and "imports" not in a.identity(archs)["pipeline"]
    assert a.resolved(archs)["pipeline"]["imports"] != b.resolved(archs)["pipeline"]["imports"]
    plain = load_pipeline(tmp_path / "a" / "my.toml", {"pipeline.imports": [], "protocols.mine.lr_rule": "fixed"})
    assert "imports" not in plain.resolved(archs)["pipeline"]  # a pipeline without plug-ins stores as before


def test_imports_must_be_a_list_of_names(tmp_path):
    toml = tmp_path / "my.toml"
    toml.write_text(pipeline_text("bad", [], "nb201").replace("imports = []", 'imports = "my_rules.py"'))
    with pytest.raises(ConfigError, match=r"^pipeline\.imports: expected a list of module names or \.py files"):
        load_pipeline(toml)
