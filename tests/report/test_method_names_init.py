"""Each run's method table names every protocol's init and LR rule (issue 52, point 7): the GPU
slice's ``rescaled`` arm initialises by the target in-degree (``in_degree``), not the CPU study's
``in_degree_source``, and its page says so."""

from __future__ import annotations

from nasrescale.report.common.method import method_section
from nasrescale.store.migration import record_of


def test_every_protocol_s_init_and_lr_rule_is_named():
    pipeline = {"pipeline": {"family": "nb201"}, "data": {"name": "cifar10"},
                "protocols": {"default": {"init": "default", "lr_rule": "fixed", "lr": 0.1},
                              "rescaled": {"init": "in_degree", "lr_rule": "path_depth", "lr": 0.46},
                              "principled": {"init": "in_degree_source", "lr_rule": "path_depth",
                                             "base_lr": "search", "tune": True}}}
    text = "\n".join(method_section(record_of(pipeline)))
    assert "| `default` | PyTorch default | one global LR | 0.1 |" in text
    assert "| `rescaled` | `in_degree`: by the target layer's in-degree" in text
    assert "| `principled` | `in_degree_source`: by the source node's in-degree" in text
    assert "`search`, tuned at this budget" in text
    assert "`rescaled`: by the in-degree of the target layer (`in_degree`)" in text


def test_a_run_sharing_cells_with_another_gives_the_same_protocol_s_tau_across_them(tmp_path):
    import json

    from nasrescale.kinds.retrain.write import write_report
    from rank_store_builder import build_store

    first, _ = build_store(tmp_path / "cpu", n_archs=14, seeds=(0, 1))
    build_store(tmp_path / "gpu", n_archs=14, seeds=(0,), seed=0)  # the same cells, other noise
    write_report(first.parent, n_boot=20)
    rows = json.loads((first.parent / "report.json").read_text())["cross_run"]
    assert {(r["run"], r["protocol"]) for r in rows} == {("gpu", "default"), ("gpu", "rescaled")}
    assert all(r["n"] >= 10 and -1 <= r["kendall_tau"] <= 1 for r in rows)
    text = (first.parent / "report.md").read_text()
    assert "## Across committed runs" in text and "`default` here vs `default` in [gpu](../gpu/report.md): tau" in text
