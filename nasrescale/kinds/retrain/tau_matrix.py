"""The rank agreement section of ``report.md`` for runs of several protocols
(``pipelines/nb201_protocols_cpu.toml``): Kendall tau between every pair of protocols (and each
against the reference) in one matrix, the pairwise sections' numbers side by side, the diagonal
the seed-noise tau where a protocol has several seeds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from ...ranking.text import fmt
from ...report.common.markdown import md_table
from . import tau_elr_plots

__all__ = ["tau_matrix", "tau_matrix_lines"]


def _diagonal(label: str, pairs: Mapping[str, dict]) -> float | None:
    """A protocol's seed-noise tau, read off any pair it is in (``None`` with one seed)."""
    for name, result in pairs.items():
        b, _, a = name.partition(" vs ")
        for side, who in (("a", a), ("b", b)):
            noise = (result.get("seed_noise") or {}).get(side)
            if who == label and noise:
                return noise.get("kendall_tau")
    return None


def tau_matrix(labels: list[str], pairs: Mapping[str, dict], reference: Mapping[str, dict],
               ref_label: str | None) -> dict | None:
    """The tau matrix from the pairwise results (``"B vs A"`` -> result, as
    :func:`~nasrescale.kinds.retrain.summary.summarize` computes them) and each protocol's result against
    the reference: ``{labels, kendall_tau, n}`` (the diagonal the seed-noise tau). ``None`` for
    fewer than 3 protocols (their one pair has its own section)."""
    if len(labels) < 3:
        return None
    names = labels + ([ref_label] if ref_label and reference else [])
    tau = pd.DataFrame(np.nan, index=names, columns=names)
    n = pd.DataFrame(0, index=names, columns=names)
    for name, result in pairs.items():
        b, _, a = name.partition(" vs ")
        for x, y in ((a, b), (b, a)):
            tau.loc[x, y], n.loc[x, y] = result.get("kendall_tau", np.nan), result.get("n", 0)
    for label, result in reference.items():
        for x, y in ((label, ref_label), (ref_label, label)):
            tau.loc[x, y], n.loc[x, y] = result.get("kendall_tau", np.nan), result.get("n", 0)
    for label in labels:
        noise = _diagonal(label, pairs)
        tau.loc[label, label] = np.nan if noise is None else noise
    return {"labels": names, "kendall_tau": tau.to_numpy().tolist(), "n": n.to_numpy().tolist()}


def tau_matrix_lines(matrix: dict | None, n_protocols: int, out: Path) -> list[str]:
    """``## Rank agreement between protocols`` of :func:`tau_matrix` (nothing for ``None``); the
    names after the first ``n_protocols`` are the reference's."""
    if matrix is None:
        return []
    names = matrix["labels"]
    tau = pd.DataFrame(matrix["kendall_tau"], index=names, columns=names, dtype=float)
    n = np.asarray(matrix["n"])[~np.eye(len(names), dtype=bool)]  # the pairs' n (the diagonal holds none)
    rows = [[x] + [("–" if x == y and pd.isna(tau.loc[x, y]) else fmt(tau.loc[x, y])) for y in names] for x in names]
    fig = tau_elr_plots.tau_matrix_plot(tau, out / "tau_matrix.png")
    return ["## Rank agreement between protocols", "",
            "Kendall tau of the architectures' mean accuracies between every pair of protocols"
            + (f" and against the reference {names[-1]}" if len(names) > n_protocols else "")
            + "; the diagonal is the seed-noise tau between a protocol's own seeds (– with one seed). "
            f"Pairs are ranked on the architectures both finished (n from {int(n.min())} to "
            f"{int(n.max())}); each pair's section below has its confidence interval.", "",
            *md_table(["", *names], rows), "", f"![Kendall tau between protocols]({fig.name})", ""]
