"""``## Method``: where a run follows the paper's released code, or its own budget, rather than
the paper's text (Chen et al., ICLR 2024), one row per deviation, read from the stored pipeline.

The rows (docs/design.md §2 has the facts about the released code):

* path depth: eq. 8 sums ``L_p^3`` over the paths of the network's DAG (§3.3); the run sums
  over the paths of one cell, as the released code does;
* kernel factor: eq. 9 has ``q^-1``; with the family's kernel rule ``none`` (NB201, as the
  released code) 1x1 and 3x3 convolutions count alike;
* init: §3.2 normalizes by the in-degree of the *target* layer; ``in_degree_source`` divides
  by the in-degree of the *source* node, as the released code does;
* data: a JPEG copy of CIFAR-10 (an image pack from ``tools/pack_cifar10.py``) is lossy;
* training length: the paper trains "till converge" (§4.3); the run trains its budget's epochs.

>>> from nasrescale.store.migration import record_of
>>> record = record_of({"pipeline": {"family": "nb201"}, "data": {"name": "cifar10", "path": "/d/cifar10.npz"},
...                     "protocols": {"rescaled": {"lr_rule": "path_depth", "init": "in_degree_source",
...                                                "kernel_rule": "family", "epochs": 6}}})
>>> [row[0] for row in method_rows(record)]
['path depth (eq. 8)', 'kernel factor (eq. 9)', 'init (§3.2)', 'data', 'training length']
"""

from __future__ import annotations

from pathlib import Path

from ...errors import NasRescaleError
from ...protocol import FAMILY_KERNEL_RULE
from ...registry import Registry
from ...scaling.lr_rules import LR_RULES, scales_per_arch
from ...space.edge_factors import KERNEL_RULES
from ...space.family_loader import get_family
from ...store.record import ProtocolRecord, RunRecord
from .markdown import md_table

__all__ = ["method_rows", "protocol_rows", "method_section"]


def _kernel_rule(record: RunRecord, protocol: ProtocolRecord) -> str | None:
    rule = protocol.kernel_rule
    if rule not in (None, FAMILY_KERNEL_RULE):
        return str(rule)
    try:
        return get_family(record.family_or("nb201")).kernel_rule
    except NasRescaleError:
        return None


def _names(labels: list[str]) -> str:
    return ", ".join(f"`{label}`" for label in labels)


def _epochs(record: RunRecord) -> list[int]:
    """The epochs the runs trained: each calibration candidate's, else the budget's, else the protocols'."""
    tables = list(record.budgets.values()) if record.budgets else [record.budget]
    found = {t.epochs for t in tables} - {None}
    if not found:
        found = {p.epochs for p in record.protocols.values()} - {None}
    return sorted(int(e) for e in found if isinstance(e, int))


def method_rows(record: RunRecord) -> list[list[str]]:
    """``[aspect, the paper's text, this run]`` for each place the run departs from the text."""
    protocols = record.protocols
    scaled = [label for label, p in protocols.items() if scales_per_arch(p.lr_rule)]
    rows = []
    if scaled:
        rows.append(["path depth (eq. 8)", "sum of L_p^3 over the input-output paths of the network's DAG (§3.3)",
                     f"{_names(scaled)}: over the paths of one cell, as the released code does; the stem, "
                     "the stages and the reduction blocks are not in the sum"])
        kernels = {label: _kernel_rule(record, protocols[label]) for label in scaled}
        flat = [label for label, k in kernels.items() if k in KERNEL_RULES and not KERNEL_RULES.get(k).scales]
        if flat:
            rows.append(["kernel factor (eq. 9)", "eta* ~ c (sum L_p^3)^(-1/2) q^(-1): a larger kernel q, a "
                         "smaller LR", f"{_names(flat)}: no kernel factor, 1x1 and 3x3 convolutions count alike, as "
                         "the released code does for NB201"])
    source = [label for label, p in protocols.items() if p.init == "in_degree_source"]
    target = [label for label, p in protocols.items() if p.init == "in_degree"]
    if source or target:
        rows.append(["init (§3.2)", "weights scaled by the in-degree of the target layer (§3.2, Appendix A)",
                     "; ".join([*([f"{_names(source)}: by the in-degree of the source node (`in_degree_source`), as "
                                   "the released code does"] if source else []),
                                *([f"{_names(target)}: by the in-degree of the target layer (`in_degree`), as the "
                                   "text says, not the released code's `in_degree_source`"] if target else [])])])
    path, dataset = record.data_path, record.dataset
    if isinstance(path, str) and Path(path).suffix == ".npz" and str(dataset).startswith("cifar10"):
        rows.append(["data", "CIFAR-10 as the benchmark trained on it",
                     "a JPEG copy of CIFAR-10 (lossy; packed by tools/pack_cifar10.py): accuracies run a little below "
                     "those on the original images"])
    epochs = _epochs(record)
    if epochs:
        rows.append(["training length", "the benchmark's protocol, networks trained \"till converge\" (§4.3)",
                     f"{', '.join(map(str, epochs))} epochs (the budget says what else differs)"])
    return rows


def _words(registry: Registry, name: str) -> str:
    """A registered rule's own description (``name`` in code font where it has none or is not registered)."""
    return (registry.get(name).description if name in registry else "") or f"`{name}`"


def protocol_rows(record: RunRecord) -> list[list[str]]:
    """``[protocol, init, LR rule, LR]`` for every protocol of the stored pipeline.

    >>> from nasrescale.store.migration import record_of
    >>> protocol_rows(record_of({"protocols": {
    ...     "rescaled": {"init": "in_degree", "lr_rule": "path_depth", "lr": 0.46},
    ...     "flat": {"init": "in_degree_source", "lr_rule": "fixed", "lr": 0.1, "tune": True}}}))[0]
    ['`rescaled`', "`in_degree`: by the target layer's in-degree (the paper's text)", "base LR x the cell's path-depth scale", '0.46']
    """
    from ...scaling.init_rules import INIT_REGISTRY  # torch: imported when a report is written

    rows = []
    for label, p in record.protocols.items():
        init, rule = p.init or "default", p.lr_rule or "fixed"
        lr_text = f"{p.lr:g}" if p.lr is not None else f"`{'search' if p.searched else '-'}`"
        rows.append([f"`{label}`", _words(INIT_REGISTRY, init), _words(LR_RULES, rule),
                     lr_text + (", tuned at this budget" if p.tuned else "")])
    return rows


def method_section(record: RunRecord) -> list[str]:
    """The section's Markdown lines: every protocol's init and LR rule, then each place the run
    departs from the paper's text (empty without protocols or departures)."""
    rows, protocols = method_rows(record), protocol_rows(record)
    if not rows and not protocols:
        return []
    lines = ["## Method", ""]
    if protocols:
        lines += ["Each protocol's init and LR rule (the budget table gives the LRs as resolved):", "",
                  *md_table(["protocol", "init", "LR rule", "LR (as declared)"], protocols), ""]
    if rows:
        lines += ["Where this run follows the paper's released code, or its own budget, rather than the paper's text "
                  "(Chen et al., ICLR 2024):", "", *md_table(["aspect", "the paper's text", "this run"], rows), ""]
    return lines
