"""A pipeline resolved once: typed overrides, the budget's precedence, the family read once,
the kind registry, and status/export served by the store."""

from __future__ import annotations


import pytest

from nasrescale.config import parse_overrides
from nasrescale.errors import ConfigError
from nasrescale.pipeline import family, kind_registry, spec
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.store.export import EXPORT_COLUMNS, export_csv
from nasrescale.store.status import status_text
from nasrescale.store.sqlite_store import Store

from pipeline_helpers import TINY  # noqa: E402

#: TINY without a budget epochs, the rescaled protocol at 5 epochs of its own
LABELLED = TINY.replace("epochs = 1\n", "").replace("base_lr = 0.3\n", "base_lr = 0.3\nepochs = 5\n")


def epochs(pipeline: spec.Pipeline) -> dict[str, int]:
    return {e.label: e.protocol.epochs for e in pipeline.protocols}


def test_budget_epochs_outrank_the_protocol_table_which_outranks_the_protocol_file(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(LABELLED)
    assert epochs(load_pipeline(path)) == {"default": 200, "rescaled": 5}  # file, then [protocols.rescaled]
    assert epochs(load_pipeline(path, {"protocols.default.epochs": 7})) == {"default": 7, "rescaled": 5}
    assert epochs(load_pipeline(path, {"budget.epochs": 2, "protocols.rescaled.epochs": 9})) == {"default": 2, "rescaled": 2}


def test_typed_overrides_and_set_strings_resolve_alike(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    texts = ["budget.epochs=3", "protocols.rescaled.base_lr=0.7", "executor.kind=ray"]
    typed = parse_overrides(texts)
    assert typed == {"budget.epochs": 3, "protocols.rescaled.base_lr": 0.7, "executor.kind": "ray"}
    assert load_pipeline(path, typed) == load_pipeline(path, texts)


def test_the_family_is_read_once_per_pipeline(tmp_path, monkeypatch):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    calls = []
    real = family.resolve_family
    monkeypatch.setattr(family, "resolve_family", lambda *a, **k: calls.append(a) or real(*a, **k))
    pipeline = load_pipeline(path)
    archs = pipeline.arch_list()
    pipeline.jobs(archs), pipeline.resolved(archs), pipeline.identity(archs)
    pipeline.with_base_lrs({"rescaled": 0.5}).jobs(archs)
    assert len(calls) == 1


def test_kinds_are_a_registry(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    names = ", ".join(repr(name) for name in kind_registry.KINDS.names())  # every registered kind, listed
    with pytest.raises(ConfigError, match=rf"pipeline.kind: expected one of {names} .*got 'bogus'"):
        load_pipeline(path, {"pipeline.kind": "bogus"})
    custom = kind_registry.register_kind(kind_registry.PipelineKind(
        "bogus", needs_base_lr=False, searches=False, slices=False, plan=lambda p, archs: ([], {"seen": "yes"}),
        after=kind_registry.get_kind("retrain").after))
    try:
        pipeline = load_pipeline(path, {"pipeline.kind": "bogus"})
        assert pipeline.kind is custom
        assert pipeline.jobs() == []  # the registered plan ran (retrain's would give jobs)
        assert not pipeline.needs_search()
    finally:
        kind_registry.KINDS.remove("bogus")


#: a user's own kind, one entry in a module beside the pipeline file: a [sweep] table of its own,
#: the retrain's jobs once per entry of its epochs
SWEEP_KIND = """
from dataclasses import dataclass

from nasrescale.kinds.entry import KindEntry, register_entry
from nasrescale.pipeline.kind_registry import KINDS, KindTable, PipelineKind, nothing_after
from nasrescale.report.kind_reports import KindReport


@dataclass(frozen=True)
class SweepSettings:
    epochs: tuple[int, ...] = (1,)


def plan(pipeline, archs):
    retrain = KINDS.get("retrain").plan
    return [job for _ in pipeline.table("sweep").epochs for job in retrain(pipeline, archs)[0]], {}


register_entry(KindEntry(
    PipelineKind("sweep", needs_base_lr=True, searches=False, slices=False, plan=plan, after=nothing_after,
                 tables=(KindTable.of("sweep", SweepSettings),)),
    KindReport("sweep", lambda run_dir: "swept", lambda run_dir, n_boot, degenerate, tuning: run_dir / "report.md")))
"""


def test_a_kind_is_one_entry_in_a_plug_in(tmp_path):
    """A kind of the user's own, with its own table, registers one entry from the module a
    pipeline file imports: the loader reads its table, the report registry knows it."""
    from nasrescale.report.kind_reports import REPORTS

    (tmp_path / "sweep_kind.py").write_text(SWEEP_KIND)
    (tmp_path / "tiny.toml").write_text(TINY)
    path = tmp_path / "sweep.toml"
    path.write_text(TINY.replace("[pipeline]\n", '[pipeline]\nkind = "sweep"\nimports = ["sweep_kind.py"]\n', 1)
                    + "\n[sweep]\nepochs = [1, 2]\n")
    try:
        pipeline = load_pipeline(path)
        assert pipeline.kind.name == "sweep" and pipeline.table("sweep").epochs == (1, 2)
        archs = pipeline.arch_list()
        assert len(pipeline.jobs(archs)) == 2 * len(load_pipeline(tmp_path / "tiny.toml").jobs(archs))
        assert pipeline.resolved(archs)["sweep"] == {"epochs": [1, 2]}
        assert REPORTS.get("sweep").text(tmp_path) == "swept"
        with pytest.raises(ConfigError, match=r"sweep: this table belongs to kind = \"sweep\""):
            load_pipeline(tmp_path / "tiny.toml", {"sweep.epochs": [3]})
    finally:
        kind_registry.KINDS.remove("sweep")
        REPORTS.remove("sweep")


def test_status_and_export_read_the_store(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    store.set_meta("name", "tiny")
    store.add_jobs([{"key": k, "arch": "3_11_111", "protocol": "default", "seed": s, "job_json": "{}"}
                    for k, s in (("k0", 0), ("k1", 1))])
    store.finish("k0", "done", {"test_accuracy": 50.0, "history": []})
    store.close()
    text = status_text(tmp_path)
    assert "1/2 jobs finished (50%)" in text and "protocol default: 1/2 finished" in text
    out = tmp_path / "jobs.csv"
    assert export_csv(tmp_path, out) == 2
    header, *rows = out.read_text().splitlines()
    assert header.split(",") == list(EXPORT_COLUMNS) and len(rows) == 2
