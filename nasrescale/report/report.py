"""``report.md`` for a pipeline run: plots and the numbers behind them.

:func:`write_report` reads the run's store (read-only; a partial run works), compares every
pair of its protocols (with exactly two, that one pair) and each protocol against the
benchmark reference, and writes ``report.md``, its PNG figures and ``report.json`` (every
number) into the run folder. The figures follow the paper's Fig. 4: accuracy scatter with
y = x, Kendall tau at top-K% with the seed-noise band, pairwise accuracy-gap distributions;
plus accuracy gain against the LR scale and a few training curves.
"""

from __future__ import annotations

import re
from itertools import combinations
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import NasRescaleError
from ..fileio import atomic_write_text
from ..lrsearch.tuning import is_stage_label
from ..ranking.compare import aggregate, compare
from ..ranking.sources import Source, load_source, store_source
from ..ranking.text import degenerate_note, fmt, format_table, to_json
from ..space.benchmark import resolve_dataset
from ..store.job_status import Status
from ..store.read import StoreData, dataset_name, pipeline_value, read_store
from . import plots
from .archs import arch_section, short_names
from .curves import curves_section
from .budget import budget_section, search_section, searches
from .claims import claims_pair, claims_section
from .lr_validation import write_validation_report
from .markdown import numbers_table, status_table, topk_table
from .protocols import elr_section, tau_matrix_section
from .provenance import provenance_lines
from .sections import gap_section, reference_section
from .tuning import tuning_section

__all__ = ["write_report", "ranking_text", "reference_spec", "protocol_order"]

_BASELINES = ("default", "nb201", "baseline", "standard")  # labels drawn on the x axis when present


def protocol_order(store: StoreData) -> list[str]:
    """The store's protocol labels, the pipeline's order first, a baseline-like label first of all."""
    declared = pipeline_value(store.pipeline, "protocols")
    order = list(declared) if isinstance(declared, (dict, list)) else []
    order = [str(p if not isinstance(p, dict) else p.get("label", p.get("name", ""))) for p in order]
    labels = [p for p in order if p in store.protocols] + [p for p in store.protocols if p not in order]
    labels = [p for p in labels if not is_stage_label(p)]  # LR-search and tuning runs are no protocol
    return sorted(labels, key=lambda p: (p.lower() not in _BASELINES, labels.index(p)))


def reference_spec(pipeline: dict) -> tuple[str | None, str | None]:
    """``(source spec, NATS-Bench file)`` of the pipeline's reference, defensively: a spec string
    (``nb201:cifar10``, a CSV path), a table ``{kind, dataset, path}``, or, when absent, the NB201
    column of the pipeline's dataset. ``(None, None)`` when there is none.

    >>> reference_spec({"pipeline": {"reference": "nb201:cifar100"}, "data": {"name": "cifar100"}})
    ('nb201:cifar100', None)
    >>> reference_spec({"data": {"name": "cifar10-subset"}})
    ('nb201:cifar10', None)
    >>> reference_spec({"reference": {"kind": "csv", "path": "my.csv"}})
    ('my.csv', None)
    """
    value = pipeline_value(pipeline, "pipeline.reference", "reference")
    dataset = dataset_name(pipeline)
    if isinstance(value, dict):
        kind = str(value.get("kind") or value.get("source") or "nb201").lower()
        dataset = value.get("dataset") or dataset
        path = value.get("path") or value.get("file")
        if kind == "csv":
            return (str(path) if path else None), None
        if kind in ("nats", "nats_bench", "nats-bench"):
            return (f"nats:{dataset}" if dataset else None), (str(path) if path else None)
        value = f"nb201:{dataset}" if dataset else None
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in ("", "none", "false", "off"):
            return None, None
        if text.lower() in ("nb201", "benchmark") and dataset:
            return f"nb201:{dataset}", None
        try:
            return f"nb201:{resolve_dataset(text)}", None  # a bare dataset name
        except NasRescaleError:
            return text, None
    if value is None and dataset:
        family = pipeline_value(pipeline, "pipeline.family", "family.name", "family")
        try:
            if family in (None, "nb201"):
                return f"nb201:{resolve_dataset(dataset)}", None
        except NasRescaleError:
            pass
    return None, None


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


def _lr_scales(store: StoreData, a: str, b: str) -> pd.Series:
    """Per architecture, the LR scale of whichever of the two protocols varies it."""
    best = pd.Series(dtype=float)
    for label in (b, a):
        s = store.jobs[store.jobs["protocol"] == label].groupby("arch")["lr_scale"].median().dropna()
        if len(s) > 1 and s.std() > 0 and (best.empty or s.std() > best.std()):
            best = s
    return best


def _pair_section(store: StoreData, a: Source, b: Source, out: Path, n_boot: int, include_degenerate: bool,
                  switch: str) -> tuple[list[str], dict]:
    result, merged = compare(a, b, n_boot=n_boot, include_degenerate=include_degenerate)
    slug = f"{_slug(a.label)}_vs_{_slug(b.label)}"
    lines = [f"## {b.label} vs {a.label}", "",
             f"A = {a.label}, B = {b.label}: every difference is B - A (accuracy points), and the top-K% subsets "
             "are A's best K%.", ""]
    if degenerate_note(result, switch):
        lines += [degenerate_note(result, switch), ""]
    if not len(merged):
        return lines + ["No architecture has a finished run under both protocols yet.", ""], result
    scatter = plots.scatter_plot(merged, a.label, b.label, result["kendall_tau"], out / f"scatter_{slug}.png")
    noise = result["seed_noise"]
    topk = plots.topk_plot({f"{b.label} vs {a.label}": result["topk"]},
                           {a.label: noise["a"], b.label: noise["b"]}, out / f"topk_{slug}.png",
                           f"rank agreement at the top ({result['n']} architectures)")
    lines += [f"![accuracy scatter]({scatter.name}) ![top-K tau]({topk.name})", "", *numbers_table(result), ""]
    per_run = result.get("per_run_kendall_tau")
    if per_run:
        lines.append(f"Single runs compared across protocols give tau {fmt(per_run['kendall_tau'])} (mean of "
                     f"{per_run['pairs']} seed pairs), to set beside the seed-noise tau between one protocol's seeds.")
    lines += ["", *topk_table(result), ""]
    diverged = (merged["diverged_a"] > 0) | (merged["diverged_b"] > 0)
    live = merged[~merged["degenerate"].astype(bool) & ~diverged]
    scales = _lr_scales(store, a.label, b.label).reindex(live.index).dropna()
    if len(scales) >= 2:
        gain = (live["b"] - live["a"]).reindex(scales.index)
        fig = plots.gain_plot(scales, gain, a.label, b.label, out / f"gain_{slug}.png", int(diverged.sum()))
        lines += [f"![gain vs LR scale]({fig.name})", ""]
    return lines, result


def _archs(store: StoreData, labels: list[str]) -> list[str]:
    """The architectures the protocols trained, in the pipeline's order (the LR search's own not among them)."""
    trained = set(store.jobs.loc[store.jobs["protocol"].isin(labels), "arch"])
    declared = pipeline_value(store.pipeline, "arch_list")
    order = [a for a in declared if a in trained] if isinstance(declared, list) else []
    return order + sorted(trained - set(order))


def _failed_lines(store: StoreData, names: dict[str, str]) -> list[str]:
    failed = store.jobs[store.jobs["status"] == Status.FAILED]
    if not len(failed):
        return []
    lines = [f"Failed jobs ({len(failed)}):", ""]
    for _, row in failed.head(10).iterrows():
        first = str(row.get("error") or "").strip().splitlines()
        lines.append(f"- `{names.get(row['arch'], row['arch'])}` {row['protocol']} seed {row['seed']}: "
                     f"{first[-1] if first else '?'}")
    return lines + [""]


def _comparisons(store: StoreData, labels: list[str], sources: dict[str, Source], run_dir: Path, n_boot: int,
                 include_degenerate: bool, switch: str, numbers: dict) -> tuple[list[str], Source | None]:
    """The tau matrix of every pair, each pair's section, the reference's, the gaps, the ELRs;
    fills ``numbers``. Returns the lines and the reference (``None`` if none)."""
    lines: list[str] = []
    for x, y in combinations(labels, 2):
        section, result = _pair_section(store, sources[x], sources[y], run_dir, n_boot, include_degenerate, switch)
        lines += section
        numbers["pairs"][f"{y} vs {x}"] = result
    usable = {p: s for p, s in sources.items() if not s.runs.empty}
    spec, nats_file = reference_spec(store.pipeline)
    section, ref = reference_section(spec, nats_file, usable, run_dir, n_boot, numbers, include_degenerate, switch)
    matrix = tau_matrix_section(labels, numbers["pairs"], numbers["reference"], ref.label if ref is not None else None,
                                run_dir, numbers)  # before the pairs' own sections
    lines = matrix + lines + section + gap_section(usable, ref, run_dir, include_degenerate, switch)
    return lines + elr_section(store, labels, run_dir, numbers), ref


def write_report(run_dir: Path, *, n_boot: int = 1000, include_degenerate: bool = False,
                 proxy: dict[str, Any] | None = None) -> Path:
    """Write ``run_dir/report.md`` (with its PNGs and ``report.json``) and return its path.

    Args:
        run_dir: the run folder holding ``store.sqlite`` (``results/<pipeline>/``).
        n_boot: bootstrap resamples for the confidence intervals.
        include_degenerate: count degenerate cells in every statistic (default: left out, and
            the page says how many).
        proxy: the calibrated proxy validity of the run's budget
            (:func:`nasrescale.report.calibration.proxy_validity`), for the claims section.

    Raises:
        DataError: no readable store in ``run_dir``.
    """
    run_dir = Path(run_dir)
    store = read_store(run_dir / "store.sqlite")
    if "validation_plan" in store.meta:  # a pipeline of kind lr_validation has its own report
        return write_validation_report(run_dir)
    name = str(store.meta.get("name") or run_dir.name)
    labels = protocol_order(store)
    sources = {p: store_source(store, p, p) for p in labels}
    family = pipeline_value(store.pipeline, "pipeline.family", "family.name", "family")
    names, key = short_names(_archs(store, labels), family, [pipeline_value(store.pipeline, "pipeline.family_file")])
    switch = f"`nasrescale report {name} --include-degenerate`"
    facts = {"dataset": dataset_name(store.pipeline), "family": family, "created": store.meta.get("created_at")}
    lines = [f"# Report: {name}", "",
             ", ".join(f"{k}: `{v}`" for k, v in facts.items() if isinstance(v, str)) or "(no pipeline metadata)", ""]
    budget_lines, numbers_budget = budget_section(store)
    head = len(lines)  # the claims section goes here, once the numbers it reads are computed
    tuning_lines, tuning_numbers = tuning_section(store, run_dir)
    lines += budget_lines + search_section(store) + tuning_lines + status_table(store, labels) + [""]
    lines += provenance_lines(store) + _failed_lines(store, names)
    numbers: dict[str, Any] = {"name": name, "protocols": labels, "budget": numbers_budget, "pairs": {},
                               "reference": {}, "include_degenerate": include_degenerate,
                               "lr_search": {label: {k: v for k, v in found.items() if k != "selection"}
                                             for label, found in searches(store).items()}}
    if tuning_numbers:
        numbers["tuning"] = tuning_numbers
    section, ref = _comparisons(store, labels, sources, run_dir, n_boot, include_degenerate, switch, numbers)
    lines += section
    ref_acc = aggregate(ref)["accuracy"] if ref is not None else None
    section, numbers["archs"] = arch_section(store, sources, names, key, ref_acc, ref.label if ref is not None else "")
    lines += section + curves_section(store, labels, names, run_dir, numbers)
    lines[head:head] = claims_section(claims_pair(numbers["pairs"], pipeline_value(store.pipeline, "protocols")),
                                      numbers["reference"],
                                      dataset_name(store.pipeline), proxy)
    numbers["proxy"] = proxy
    lines += ["Differences are B - A in accuracy points; diverged runs count as chance accuracy; degenerate cells "
              + ("are counted in every statistic" if include_degenerate else "are left out of every statistic")
              + f"; CIs are paired bootstrap over architectures ({n_boot} resamples, seed 0; BCa, or percentile "
              "where BCa degenerates or above 2,000 architectures); the top-K% subset is chosen by the first "
              "source (A).", ""]
    atomic_write_text(run_dir / "report.json", to_json(numbers, indent=1))
    path = run_dir / "report.md"
    atomic_write_text(path, "\n".join(lines))
    return path


def ranking_text(run_dir: Path, *, n_boot: int = 1000) -> str:
    """The ranking table(s) ``nasrescale rank`` would print for a run: every pair of its
    protocols, then each protocol against the reference in one line (what ``run`` prints at
    the end). Reads the store read-only, so a partial run works."""
    store = read_store(Path(run_dir) / "store.sqlite")
    labels = protocol_order(store)
    sources = {p: store_source(store, p, p) for p in labels}
    parts = [format_table(compare(sources[x], sources[y], n_boot=n_boot)[0]) for x, y in combinations(labels, 2)]
    spec, nats_file = reference_spec(store.pipeline)
    try:
        ref = load_source(spec, nats_file=nats_file) if spec else None
    except NasRescaleError:
        ref = None
    for label, src in sources.items():
        if ref is not None and not src.runs.empty:
            r = compare(ref, src, n_boot=0)[0]
            left_out = r["counts"]["degenerate_excluded"]
            parts.append(f"{label} vs {ref.label}: n {r['n']}, Kendall tau {fmt(r['kendall_tau'])}, "
                         f"mean diff {fmt(r['mean_diff'], 2)} points"
                         + (f" ({left_out} degenerate left out)" if left_out else ""))
    return "\n\n".join(parts) if parts else "no finished jobs yet"
