"""Compare two accuracy sources architecture by architecture (what ``nasrescale rank`` prints).

:func:`aggregate` turns a source's runs into one accuracy per architecture (mean over seeds,
diverged runs at chance accuracy or dropped), :func:`match` pairs two sources by canonical
architecture, :func:`compare` computes every statistic of :mod:`nasrescale.ranking.rank` into one
JSON-ready dict.

Degenerate cells (no input->output path: constant output, recorded at chance accuracy without
training) are left out of every statistic unless ``include_degenerate`` is set: any two sources
put them last together, which inflates every rank correlation without saying anything about
the architectures that learn.

Isomorphic cells (different strings, one function: :mod:`nasrescale.space.isomorphism`) count
once unless ``include_isomorphic`` is set: the first in string order stands for its class and
``counts["isomorphic_dropped"]`` names the others. Trained alike, they would count one cell
twice in every tau and every bootstrap resample.
"""

from __future__ import annotations

from itertools import product
from typing import Literal

import numpy as np
import pandas as pd

from ..errors import DataError, FamilyError
from ..space.encodings import parse_arch
from ..space.isomorphism import first_of_each_class
from ..space.family_loader import get_family
from ..space.topology import is_degenerate
from .boot_counts import DEFAULT_BOOT
from .rank import (K_PERCENTS, TopkBy, bootstrap_cis, kendall_tau, precision_at_k, seed_noise, summary_stats,
                   topk_curve, topk_mask)
from .sources import Source

__all__ = ["DivergedPolicy", "apply_diverged", "aggregate", "per_seed", "match", "isomorphic_duplicates", "compare"]

DivergedPolicy = Literal["chance", "drop"]


def apply_diverged(source: Source, policy: DivergedPolicy = "chance") -> pd.DataFrame:
    """The source's runs with diverged runs at chance accuracy (``chance``) or removed (``drop``).

    Raises:
        DataError: with ``chance``, when the source has diverged runs but no known chance accuracy.
    """
    runs = source.runs.copy()
    if policy == "drop":
        return runs[~runs["diverged"].astype(bool)]
    if policy != "chance":
        raise ValueError(f"diverged policy {policy!r}; allowed: chance, drop")
    bad = runs["diverged"].astype(bool)
    if bad.any():
        if source.chance is None:
            raise DataError(f"{source.label} has {int(bad.sum())} diverged runs and no known chance accuracy; "
                            "pass --classes N or --diverged drop")
        runs.loc[bad, "accuracy"] = source.chance
    return runs


def aggregate(source: Source, policy: DivergedPolicy = "chance") -> pd.DataFrame:
    """One row per architecture: ``accuracy`` (mean over its runs), ``runs``, ``diverged``
    (runs that diverged), ``degenerate`` (True/False, ``pd.NA`` if the source does not say)."""
    runs = apply_diverged(source, policy)
    diverged = source.runs.groupby("arch")["diverged"].sum().astype(int)
    grouped = runs.groupby("arch", sort=True)
    out = pd.DataFrame({"accuracy": grouped["accuracy"].mean(), "runs": grouped.size()})
    out["diverged"] = diverged.reindex(out.index).fillna(0).astype(int)
    flags = runs.assign(d=runs["degenerate"].map(lambda v: np.nan if v is pd.NA or v is None else float(bool(v))))
    out["degenerate"] = flags.groupby("arch")["d"].max().map(lambda v: pd.NA if np.isnan(v) else bool(v))
    return out


def per_seed(source: Source, policy: DivergedPolicy = "chance") -> pd.DataFrame:
    """Architecture x seed table of accuracies (NaN where a seed has no usable run)."""
    runs = apply_diverged(source, policy)
    return runs.pivot_table(index="arch", columns="seed", values="accuracy", aggfunc="mean")


def _either(x: object, y: object) -> object:
    """True if either flag is true, ``pd.NA`` if neither source says."""
    known = [bool(v) for v in (x, y) if not pd.isna(v)]
    return pd.NA if not known else any(known)


def _fill_degenerate(flags: pd.Series, family: str) -> pd.Series:
    unknown = flags.isna()
    if not unknown.any():
        return flags.astype(bool)
    try:
        fam = get_family(family)
        computed = {a: is_degenerate(parse_arch(a, fam), fam) for a in flags.index[unknown]}
    except (FamilyError, ValueError):  # a family not installed here, or a string it cannot parse
        computed = {}
    return pd.Series([bool(computed.get(a, False)) if u else bool(v) for a, v, u in
                      zip(flags.index, flags, unknown)], index=flags.index)


def match(a: Source, b: Source, policy: DivergedPolicy = "chance") -> tuple[pd.DataFrame, dict]:
    """Pair two sources by canonical architecture.

    Returns:
        The matched frame (index ``arch``; columns ``a``, ``b`` accuracies, ``runs_a``,
        ``runs_b``, ``diverged_a``, ``diverged_b``, ``degenerate``) sorted by ``arch``, and the
        counts ``matched``, ``only_a``, ``only_b``, ``diverged_a``, ``diverged_b`` (matched
        architectures with a diverged run), ``degenerate``, ``skipped_a``, ``skipped_b``.
    """
    left, right = aggregate(a, policy), aggregate(b, policy)
    common = left.index.intersection(right.index).sort_values()
    merged = pd.DataFrame({
        "a": left.loc[common, "accuracy"], "b": right.loc[common, "accuracy"],
        "runs_a": left.loc[common, "runs"], "runs_b": right.loc[common, "runs"],
        "diverged_a": left.loc[common, "diverged"], "diverged_b": right.loc[common, "diverged"],
    }, index=common)
    flags = left.loc[common, "degenerate"].combine(right.loc[common, "degenerate"], _either)
    merged["degenerate"] = _fill_degenerate(flags.astype(object), a.family if a.kind != "benchmark" else b.family)
    counts = {
        "matched": len(common), "only_a": len(left) - len(common), "only_b": len(right) - len(common),
        "diverged_a": int((merged["diverged_a"] > 0).sum()), "diverged_b": int((merged["diverged_b"] > 0).sum()),
        "degenerate": int(merged["degenerate"].sum()),
        "skipped_a": dict(a.skipped), "skipped_b": dict(b.skipped),
    }
    return merged, counts


def isomorphic_duplicates(archs: list[str], family: str) -> dict[str, str]:
    """``{cell: the cell that stands for its class}`` for every cell of ``archs`` (taken in
    order) whose isomorphism class an earlier one already holds; ``{}`` for a family not
    installed here or strings it cannot parse.

    >>> isomorphic_duplicates(["0_10_211", "1_10_021", "3_33_333"], "nb201")
    {'1_10_021': '0_10_211'}
    """
    try:
        fam = get_family(family)
        return first_of_each_class(archs, fam)[1]
    except (FamilyError, ValueError):
        return {}


def _per_run_tau(wa: pd.DataFrame, wb: pd.DataFrame) -> dict | None:
    """Kendall tau between single runs of the two sources (every seed of A x every seed of B),
    the like-for-like counterpart of the seed-noise baseline."""
    if wa.shape[1] < 2 or wb.shape[1] < 2:
        return None
    taus = []
    for s, t in product(wa.columns, wb.columns):
        both = pd.concat([wa[s].rename("a"), wb[t].rename("b")], axis=1, join="inner").dropna()
        tau = kendall_tau(both["a"], both["b"])
        if tau is not None:
            taus.append(tau)
    if not taus:
        return None
    return {"kendall_tau": float(np.mean(taus)), "min": min(taus), "max": max(taus), "pairs": len(taus)}


def compare(a: Source, b: Source, *, policy: DivergedPolicy = "chance", topk_by: TopkBy = "first",
            n_boot: int = DEFAULT_BOOT, seed: int = 0, ks: tuple = K_PERCENTS,
            include_degenerate: bool = False, include_isomorphic: bool = False) -> tuple[dict, pd.DataFrame]:
    """Every ranking statistic between sources ``a`` and ``b`` (differences are b - a).

    Args:
        include_degenerate: count degenerate cells in the statistics (default: left out;
            ``counts["degenerate_excluded"]`` says how many were).
        include_isomorphic: count every cell of an isomorphism class (default: its first cell in
            string order only; ``counts["isomorphic_dropped"]`` maps each cell left out to the
            one kept).

    Returns:
        The JSON-ready result (``n``, ``kendall_tau``, ``spearman``, ``pearson``,
        ``mean_diff``, ``median_diff``, ``mean_a``, ``mean_b``, ``ci`` (95% bootstrap CIs of
        those), ``topk`` (with bootstrap bands), ``precision_at_k``, ``seed_noise`` ({a, b}, on
        the same top-K% subsets as ``topk``), ``per_run_kendall_tau``,
        ``counts``, and the settings) and the frame of :func:`match` restricted to the
        architectures the statistics use (``n`` rows).
    """
    merged, counts = match(a, b, policy)
    degenerate = merged["degenerate"].astype(bool)
    counts["degenerate_excluded"] = 0 if include_degenerate else int(degenerate.sum())
    if not include_degenerate:
        merged = merged[~degenerate]
    dropped = {} if include_isomorphic else isomorphic_duplicates(
        list(merged.index), a.family if a.kind != "benchmark" else b.family)
    counts["isomorphic_dropped"] = dropped
    merged = merged[~merged.index.isin(list(dropped))]
    x, y = merged["a"].to_numpy(float), merged["b"].to_numpy(float)
    tiebreak = merged.index.to_numpy(dtype=object)
    matched = set(merged.index)
    wa, wb = per_seed(a, policy), per_seed(b, policy)
    wa, wb = wa[wa.index.isin(matched)], wb[wb.index.isin(matched)]
    subsets = {k: merged.index[topk_mask(x, y, k, topk_by, tiebreak)] for k in ks}
    result = {
        "a": a.label, "b": b.label, "n": len(merged),
        **summary_stats(x, y),
        "mean_a": float(x.mean()) if len(x) else None, "mean_b": float(y.mean()) if len(y) else None,
        "ci": bootstrap_cis(x, y, n_boot=n_boot, seed=seed),
        "topk": topk_curve(x, y, topk_by, ks, tiebreak, n_boot, seed),
        "precision_at_k": precision_at_k(x, y, ks, tiebreak),
        "seed_noise": {"a": seed_noise(wa, subsets, n_boot, seed), "b": seed_noise(wb, subsets, n_boot, seed)},
        "per_run_kendall_tau": _per_run_tau(wa, wb),
        "counts": counts,
        "settings": {"diverged": policy, "topk_by": topk_by, "bootstrap": n_boot, "seed": seed,
                     "chance_a": a.chance, "chance_b": b.chance, "include_degenerate": include_degenerate,
                     "include_isomorphic": include_isomorphic},
    }
    return result, merged
