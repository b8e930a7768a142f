"""Plug-ins (``imports`` in pipeline and protocol files): the user's own LR and init rules, named
from ``nasrescale run my.toml`` without any change to the package.

The first test is also the proof that a new LR rule takes one registry entry (in the user's own
``my_rules.py``) plus one TOML file, and no other file: the suite stays green with the rule
defined only in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nasrescale import plugins
from nasrescale.errors import ConfigError
from nasrescale.executors.pool import PoolExecutor
from nasrescale.pipeline.runner import run_pipeline
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.scaling.lr_rules import LR_RULES

from pipeline_helpers import cli, one_thread, private_cache  # noqa: F401  (fixtures)
from plugin_helpers import (ARCHS, INIT_PLUGIN, LR_PLUGIN, canonical, clean_registries, edge_lr,  # noqa: F401
                            pipeline_text, stored)


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


def _worker_pipeline(tmp_path: Path, name: str, executor: str = ""):
    """A pipeline whose LR rule comes from its own plug-in and whose init rule from its protocol
    file's plug-in (that notes the process each network is prepared in)."""
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "lr_plugin.py").write_text(LR_PLUGIN.format(name=f"quarter_edges_{name}"))
    (tmp_path / "init_plugin.py").write_text(INIT_PLUGIN.format(name=f"small_normal_{name}"))
    (tmp_path / "mine.toml").write_text(f'[protocol]\nname = "mine"\nimports = ["init_plugin.py"]\n'
                                        f'init = "small_normal_{name}"\nlr = 0.1\nepochs = 1\n')
    toml = tmp_path / "my.toml"
    toml.write_text(pipeline_text(name, ["rules/lr_plugin.py"], "mine.toml", f'lr_rule = "quarter_edges_{name}"')
                    + executor)
    return load_pipeline(toml)


def _check_trained_in_workers(tmp_path: Path, results: Path, name: str) -> None:
    """Each stored job trained under both plug-in rules, its network prepared in a worker process."""
    records, stored_pipeline = stored(results, name)
    for record in records:
        assert (record["init"], record["lr_rule"]) == (f"small_normal_{name}", f"quarter_edges_{name}")
        assert record["lr"] == pytest.approx(edge_lr(record["arch"], 0.1)), record["arch"]
    pids = (tmp_path / "prepared.txt").read_text().split()
    assert len(pids) == len(records) and str(os.getpid()) not in pids  # prepared in the workers, once a run
    assert stored_pipeline["pipeline"]["imports"] == [str((tmp_path / "rules" / "lr_plugin.py").resolve()),
                                                      str((tmp_path / "init_plugin.py").resolve())]


def test_plugin_rules_reach_the_pool_workers(tmp_path, clean_registries):
    """A pipeline's LR rule plug-in and its protocol file's init rule plug-in, through the process
    pool (fresh spawned processes, as on GPUs): each job trains under both rules, in its worker."""
    pipeline = _worker_pipeline(tmp_path, "pool")
    results = tmp_path / "res"
    pool = PoolExecutor(pipeline.executor, devices=["cpu", "cpu"], progress=False)
    summary = run_pipeline(pipeline, results, progress=False, executor=pool)
    assert summary.failed == 0, summary.counts
    _check_trained_in_workers(tmp_path, results, "pool")


@pytest.mark.slow
def test_plugin_rules_reach_the_ray_workers(tmp_path, clean_registries):
    """The same through Ray tasks, on a local Ray instance of the test's own (its own session
    folder, started and shut down by the executor)."""
    pytest.importorskip("ray")
    from nasrescale.executors.ray_exec import RayExecutor

    pipeline = _worker_pipeline(tmp_path, "ray", 'kind = "ray"\ncpus_per_job = 1\nmax_retries = 0\n')
    assert pipeline.executor.kind == "ray"
    temp = Path("/tmp") / f"nr-plug-{os.getpid()}"  # short: Unix socket path limit
    results = tmp_path / "res"
    try:
        ray_executor = RayExecutor(pipeline.executor, temp_dir=temp, progress=False)
        summary = run_pipeline(pipeline, results, progress=False, executor=ray_executor)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    assert summary.failed == 0, summary.counts
    _check_trained_in_workers(tmp_path, results, "ray")


def _train_in_subprocess(words: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``nasrescale train ...`` (``words`` after ``nasrescale``) in a fresh process."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "nasrescale", *words], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_a_job_under_a_plugin_rule_reruns_from_its_printed_command(tmp_path, capsys, clean_registries):
    """`status --commands` names the stored plug-ins (`--import`): in a fresh process, elsewhere,
    the printed command trains at the stored job's LR; without its `--import` the rule is unknown."""
    (tmp_path / "my_rules.py").write_text(LR_PLUGIN.format(name="quarter_edges_rerun"))
    toml = tmp_path / "my.toml"
    toml.write_text(pipeline_text("rerun", ["my_rules.py"], "nb201", 'lr_rule = "quarter_edges_rerun"\nlr = 0.2'))
    results = tmp_path / "res"
    code, _, err = cli(capsys, "run", str(toml), "--results", str(results), "--quiet")
    assert code == 0, err
    code, out, err = cli(capsys, "status", "rerun", "--results", str(results), "--commands")
    assert code == 0, err
    records = {r["arch"]: r for r in stored(results, "rerun")[0]}
    arch = canonical("3_11_111")
    lines = out.splitlines()
    words = shlex.split(lines[next(i for i, line in enumerate(lines) if line.startswith("#") and f" {arch}," in line)
                              + 1])
    plugin = str((tmp_path / "my_rules.py").resolve())
    assert words[words.index("--import") + 1] == plugin and "lr_rule=\"quarter_edges_rerun\"" in words
    (tmp_path / "elsewhere").mkdir()
    done = _train_in_subprocess([*words[1:], "--quiet"], tmp_path / "elsewhere")
    assert done.returncode == 0, done.stderr[-2000:]
    again = json.loads(done.stdout)
    assert again["lr"] == records[arch]["lr"] == pytest.approx(edge_lr(arch, 0.2))
    assert again["lr_rule"] == "quarter_edges_rerun"
    i = words.index("--import")
    done = _train_in_subprocess(words[1:i] + words[i + 2:], tmp_path / "elsewhere")
    assert done.returncode == 2 and "quarter_edges_rerun" in done.stderr, done.stderr


def test_train_refuses_an_import_it_cannot_find(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "train", "3_11_111", "--import", "missing.py")
    assert code == 2 and not out
    assert err.startswith("nasrescale train: error: --import: no file 'missing.py'"), err
    assert len(err.strip().splitlines()) == 1, err


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
