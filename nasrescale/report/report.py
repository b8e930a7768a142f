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
from ..ranking.compare import aggregate, compare
from ..ranking.sources import Source, load_source, store_source
from ..ranking.text import fmt, format_table, to_json
from ..space.benchmark import resolve_dataset
from ..store.job_status import FINAL, Status
from ..store.read import StoreData, dataset_name, pipeline_value, read_curves, read_store
from . import plots
from .budget import budget_section
from .claims import claims_section
from .lr_validation import write_validation_report
from .markdown import md_table, numbers_table, status_table, topk_table
from .provenance import provenance_lines

__all__ = ["write_report", "ranking_text", "reference_spec", "protocol_order"]

_BASELINES = ("default", "nb201", "baseline", "standard")  # labels drawn on the x axis when present


def protocol_order(store: StoreData) -> list[str]:
    """The store's protocol labels, the pipeline's order first, a baseline-like label first of all."""
    declared = pipeline_value(store.pipeline, "protocols")
    order = list(declared) if isinstance(declared, (dict, list)) else []
    order = [str(p if not isinstance(p, dict) else p.get("label", p.get("name", ""))) for p in order]
    labels = [p for p in order if p in store.protocols] + [p for p in store.protocols if p not in order]
    labels = [p for p in labels if not p.startswith("lr-search:")]  # base-LR search runs are no protocol
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


def _pair_section(store: StoreData, a: Source, b: Source, out: Path, n_boot: int) -> tuple[list[str], dict]:
    result, merged = compare(a, b, n_boot=n_boot)
    slug = f"{_slug(a.label)}_vs_{_slug(b.label)}"
    lines = [f"## {b.label} vs {a.label}", ""]
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


_ROLES = ("best", "median", "worst")


def _curve_jobs(store: StoreData, labels: list[str], limit_archs: int = 3) -> dict[str, dict[str, Any]]:
    """Job key -> ``{role, arch, protocol, seed, legend}`` for a few jobs: the best, median and
    worst architecture (by the mean accuracy under the last protocol with results), lowest seed
    of each protocol, plus one diverged job if any. The legend names the role and the arch."""
    jobs = store.jobs[store.jobs["status"].isin(FINAL) & ~store.jobs["degenerate"]]
    if jobs.empty:
        return {}
    means = pd.Series(dtype=float)
    for label in reversed(labels):  # the last protocol with finished jobs
        means = jobs[jobs["protocol"] == label].groupby("arch")["test_accuracy"].mean().dropna().sort_values()
        if len(means):
            break
    ranked = [means.index[-1], means.index[len(means) // 2], means.index[0]] if len(means) else []
    picks: dict[str, str] = {}
    for role, arch in zip(_ROLES, ranked):
        picks.setdefault(arch, role)  # with fewer than 3 archs, one arch keeps its first role
    names: dict[str, dict[str, Any]] = {}
    for arch, role in list(picks.items())[:limit_archs]:
        for label in labels:
            rows = jobs[(jobs["arch"] == arch) & (jobs["protocol"] == label)].sort_values("seed")
            if len(rows):
                seed = int(rows["seed"].iloc[0])
                names[rows["key"].iloc[0]] = {"role": role, "arch": arch, "protocol": label, "seed": seed,
                                              "legend": f"{role}: {arch} / {label} / seed {seed}"}
    bad = jobs[jobs["status"] == Status.DIVERGED]
    if len(bad):
        row = bad.iloc[0]
        names[row["key"]] = {"role": "diverged", "arch": row["arch"], "protocol": row["protocol"],
                             "seed": int(row["seed"]),
                             "legend": f"diverged: {row['arch']} / {row['protocol']} / seed {int(row['seed'])}"}
    return names


def write_report(run_dir: Path, *, n_boot: int = 1000, proxy: dict[str, Any] | None = None) -> Path:
    """Write ``run_dir/report.md`` (with its PNGs and ``report.json``) and return its path.

    Args:
        run_dir: the run folder holding ``store.sqlite`` (``results/<pipeline>/``).
        n_boot: bootstrap resamples for the confidence intervals.
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
    lines = [f"# Report: {name}", ""]
    facts = {"dataset": dataset_name(store.pipeline), "family": pipeline_value(store.pipeline, "pipeline.family", "family.name", "family"),
             "created": store.meta.get("created_at")}
    lines += [", ".join(f"{k}: `{v}`" for k, v in facts.items() if isinstance(v, str)) or "(no pipeline metadata)", ""]
    budget_lines, numbers_budget = budget_section(store)
    lines += budget_lines + status_table(store, labels) + [""]
    lines += provenance_lines(store)
    failed = store.jobs[store.jobs["status"] == Status.FAILED]
    if len(failed):
        lines += [f"Failed jobs ({len(failed)}):", ""]
        for _, row in failed.head(10).iterrows():
            first = str(row.get("error") or "").strip().splitlines()
            lines.append(f"- `{row['arch']}` {row['protocol']} seed {row['seed']}: {first[-1] if first else '?'}")
        lines.append("")
    numbers: dict[str, Any] = {"name": name, "protocols": labels, "budget": numbers_budget, "pairs": {},
                               "reference": {}}
    for x, y in combinations(labels, 2):
        section, result = _pair_section(store, sources[x], sources[y], run_dir, n_boot)
        lines += section
        numbers["pairs"][f"{y} vs {x}"] = result
    usable = {p: s for p, s in sources.items() if not s.runs.empty}
    section, ref = _reference_section(store, usable, run_dir, n_boot, numbers)
    lines += section + _gap_section(usable, ref, run_dir)
    lines += claims_section(next(iter(numbers["pairs"].values()), None), numbers["reference"],
                            dataset_name(store.pipeline), proxy)
    numbers["proxy"] = proxy
    keys = _curve_jobs(store, labels)
    if keys:
        legends = {k: v["legend"] for k, v in keys.items()}
        fig = plots.curves_plot(read_curves(store.path, list(keys)), legends, run_dir / "curves.png")
        lines += ["## Training curves", "", f"![training curves]({fig.name})", "",
                  "Best, median and worst architecture by mean test accuracy (under the last protocol "
                  "with results), the lowest seed of each protocol.", ""]
        numbers["curves"] = [{"key": k, **v} for k, v in keys.items()]
    lines += ["Differences are B - A in accuracy points; diverged runs count as chance accuracy; CIs are "
              f"paired bootstrap over architectures ({n_boot} resamples, seed 0; BCa, or percentile where "
              "BCa degenerates or above 2,000 architectures); the top-K% subset is "
              "chosen by the first source (A).", ""]
    atomic_write_text(run_dir / "report.json", to_json(numbers, indent=1))
    path = run_dir / "report.md"
    atomic_write_text(path, "\n".join(lines))
    return path


def _gap_section(sources: dict[str, Source], ref: Source | None, out: Path) -> list[str]:
    """Pairwise accuracy gaps on the non-degenerate architectures every protocol has finished."""
    means = {label: aggregate(src) for label, src in sources.items()}
    if ref is not None:
        means[ref.label] = aggregate(ref)
    common = None
    for label in sources:
        frame = means[label]
        live = set(frame.index[~frame["degenerate"].eq(True)])
        common = live if common is None else common & live
    common = sorted(common or [])
    if ref is not None:
        common = [a for a in common if a in means[ref.label].index]
    if len(common) < 2:
        return []
    gaps = {label: frame.loc[common, "accuracy"].to_numpy(float) for label, frame in means.items()}
    steady = [f.loc[common, "accuracy"][~f.loc[common].get("diverged", pd.Series(0, index=common)).gt(0)]
              for f in means.values()]  # diverged runs sit at chance: no scale
    by_rank = plots.scales_differ(*steady)  # e.g. a short run against the benchmark
    moved = {label: plots.ranks(v) for label, v in gaps.items()} if by_rank else gaps
    diffs = {f"{y} - {x}": moved[y] - moved[x] for x, y in combinations(list(gaps), 2)}
    fig = plots.gap_plot(gaps, diffs, out / "gaps.png", by_rank)
    rows = [[label, fmt(float(pd.Series(plots.pairwise_gaps(v)).median()), 2),
             fmt(float(plots.pairwise_gaps(v).mean()), 2), fmt(float(v.std()), 2)] for label, v in gaps.items()]
    return [f"## Accuracy gaps ({len(common)} architectures with results under every protocol that has any)", "",
            f"![pairwise gaps]({fig.name})", "",
            *md_table(["source", "median gap", "mean gap", "accuracy std"], rows), ""]


def _reference_section(store: StoreData, sources: dict[str, Source], out: Path, n_boot: int,
                       numbers: dict) -> tuple[list[str], Source | None]:
    spec, nats_file = reference_spec(store.pipeline)
    if spec is None:
        return ["## Against the benchmark", "", "The pipeline names no reference.", ""], None
    try:
        ref = load_source(spec, nats_file=nats_file)
    except NasRescaleError as err:
        return ["## Against the benchmark", "", f"Reference `{spec}` is not available: {err}", ""], None
    lines = [f"## Against the benchmark ({ref.label})", ""]
    rows, curves, bands, points = [], {}, {}, {}
    for label, src in sources.items():
        result, merged = compare(ref, src, n_boot=n_boot)
        numbers["reference"][label] = result
        ci = result["ci"].get("kendall_tau")
        top10 = next((e["kendall_tau"] for e in result["topk"] if e["k_percent"] == 10), None)
        rows.append([label, result["n"], fmt(result["kendall_tau"]), "" if not ci else f"[{fmt(ci[0])}, {fmt(ci[1])}]",
                     fmt(result["spearman"]), fmt(top10), fmt(result["mean_diff"], 2), fmt(result["mean_b"], 2),
                     fmt(result["mean_a"], 2)])
        if len(merged):
            curves[f"{label} vs {ref.label}"] = result["topk"]
            bands[label] = result["seed_noise"]["b"]
            points[label] = merged.rename(columns={"a": "b", "b": "a"})
    lines += md_table(["protocol", "n", "Kendall tau", "95% CI", "Spearman", "tau top 10%", "diff (protocol - ref)",
                        "mean acc.", "ref. mean acc."], rows) + [""]
    if points:
        scatter = plots.reference_plot(points, ref.label, out / "reference_scatter.png")
        topk = plots.topk_plot(curves, bands, out / "reference_topk.png", f"rank agreement with {ref.label}")
        lines += [f"![against the reference]({scatter.name}) ![top-K tau vs the reference]({topk.name})", ""]
    return lines, ref


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
            parts.append(f"{label} vs {ref.label}: n {r['n']}, Kendall tau {fmt(r['kendall_tau'])}, "
                         f"mean diff {fmt(r['mean_diff'], 2)} points")
    return "\n\n".join(parts) if parts else "no finished jobs yet"
