"""A pipeline resolved once: typed overrides, the budget's precedence, the family read once,
the kind registry, and status/export served by the store."""

from __future__ import annotations


import pytest

from nasrescale.config import parse_overrides
from nasrescale.errors import ConfigError
from nasrescale.pipeline import family, kinds, spec
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.store.export import EXPORT_COLUMNS, export_csv
from nasrescale.store.status import status_text
from nasrescale.store.write import Store

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
    names = ", ".join(repr(name) for name in kinds.KINDS.names())  # every registered kind, listed
    with pytest.raises(ConfigError, match=rf"pipeline.kind: expected one of {names} .*got 'bogus'"):
        load_pipeline(path, {"pipeline.kind": "bogus"})
    custom = kinds.register_kind(kinds.PipelineKind(
        "bogus", needs_base_lr=False, searches=False, slices=False, plan=lambda p, archs: ([], {"seen": "yes"}),
        after=kinds.get_kind("retrain").after))
    try:
        pipeline = load_pipeline(path, {"pipeline.kind": "bogus"})
        assert pipeline.kind is custom
        assert pipeline.jobs() == []  # the registered plan ran (retrain's would give jobs)
        assert not pipeline.needs_search()
    finally:
        kinds.KINDS.remove("bogus")


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
