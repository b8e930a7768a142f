"""The report of an ``lr_validation`` run: measured vs predicted maximal LR (paper Figs. 2, 3, 5).

:func:`write_validation_report` reads the run's store (read-only; a partial run reports what
is finished), applies :func:`nasrescale.lrsearch.validation.analyze`, and writes ``report.md`` (the
paper's statistics beside the paper's r, the budget and the provenance of the runs),
``lr_validation.png`` (predicted vs measured, log-log, y = x, per-seed spread),
``lr_validation_curves.png`` (loss vs LR per architecture) and ``report.json``.
:func:`summary_text` is the table ``nasrescale run`` prints at the end.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ...errors import DataError, NasRescaleError
from ...fileio import atomic_write_text
from ...lrsearch.search import LOSS_KINDS
from ...lrsearch.select import SELECTION_RULES
from ...lrsearch.stats import PREDICTED_SLOPE, PREDICTED_SLOPE_L3
from ...lrsearch.validation import analyze
from ...ranking.text import to_json
from ...store.job_status import FINAL
from ...store.migration import parse_record
from ...store.read import reading
from ...store.record import VALIDATION_PLAN_KEY
from ..common.markdown import md_table
from .censored import criterion_fits
from .plots import plot_curves, plot_predicted_measured

__all__ = ["write_validation_report", "summary_text", "load_analysis", "PAPER_R"]

#: the paper's Pearson r between predicted and measured maximal LR (CIFAR-10; Chen et al., ICLR
#: 2024, Figs. 2, 3 and 5), by the family the experiment runs on
PAPER_R = {"mlp_dag": [("MLP topologies (Fig. 2)", 0.838)],
           "mlp_chain": [("MLP depth (Fig. 5)", 0.962)],
           "cnn_dag": [("CNN topologies and kernel sizes (Fig. 3)", 0.856)]}


def _paper_text(family: str) -> str | None:
    figures = PAPER_R.get(family)
    if not figures:
        return None
    return "paper (CIFAR-10, full size): " + "; ".join(f"{what} r = {r}" for what, r in figures)


def _rows(run_dir: Path) -> list[dict[str, Any]]:
    with reading(run_dir) as store:
        return store.rows_with_tail()


def load_analysis(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(meta, analysis)`` of the run in ``run_dir``.

    Raises:
        DataError: no store, or the store is not an ``lr_validation`` run.
    """
    with reading(run_dir) as store:
        meta, rows = store.meta(), store.rows_with_tail()
    if VALIDATION_PLAN_KEY not in meta:
        raise DataError(f"{str(run_dir)!r} holds no lr_validation run (no validation plan in its store)")
    return meta, analyze(json.loads(meta[VALIDATION_PLAN_KEY]), rows)


def _fmt(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _family(meta: dict[str, Any]) -> str:
    return parse_record(meta).family or "?"


def summary_text(run_dir: Path) -> str:
    """Per-architecture measured and predicted LR, and the statistics, as plain text."""
    meta, res = load_analysis(run_dir)
    lines = [f"{'group':<10} {'arch':<36} {'lr_scale':>8} {'predicted':>10} {'measured':>10} {'seeds':>17}  note"]
    for p in res["points"]:
        note = ("base" if p["base"] else "") + (f" argmin at grid {p['edge']} edge" if p["edge"] else "")
        spread = f"{p['seed_min']:.3g}-{p['seed_max']:.3g}"
        lines.append(f"{p['group']:<10} {p['arch']:<36} {p['lr_scale']:>8.4f} {p['predicted_lr']:>10.4g} "
                     f"{p['measured_lr']:>10.4g} {spread:>17}  {note.strip()}")
    for label, c in (("all", res["overall"]), ("without base", res["overall"]["without_base"])):
        lines.append(f"{label}: n = {c['n']}, Pearson r (log LR) = {_fmt(c['pearson_log'])}, "
                     f"Pearson r (LR) = {_fmt(c['pearson'])}, Spearman rho = {_fmt(c['spearman'])}, "
                     f"log-log slope = {_fmt(c['slope'])} (predicted {PREDICTED_SLOPE:g})")
    paper = _paper_text(_family(meta))
    if paper:
        lines.append(paper)
    if res["skipped"]:
        lines.append(f"{res['skipped']} architecture(s) not finished yet (rerun `nasrescale run` to finish)")
    if res["at_edge"]:
        lines.append(f"{res['at_edge']} measured LR(s) with a seed's argmin at the grid's edge after the grid "
                     "extensions: widen [lr_search] (or raise lr_search.extend) for those")
    return "\n".join(lines)


def _ci(c: dict[str, Any], key: str) -> str:
    ci = c.get(f"{key}_ci")
    return f"{_fmt(c[key])} [{_fmt(ci[0])}, {_fmt(ci[1])}]" if ci else _fmt(c[key])


def _stats_rows(label: str, c: dict[str, Any], paper: float | None) -> list[str]:
    rows = []
    subsets = [("all", c), ("without base", c["without_base"])]
    if "interior" in c:
        subsets.append(("without base and edge points", c["interior"]))
    for what, stats in subsets:
        rows.append(f"| {label} | {what} | {stats['n']} | {_fmt(stats['pearson_log'])} | {_fmt(stats['pearson'])} | "
                    f"{_fmt(stats['spearman'])} | {_ci(stats, 'slope')} | {_ci(stats, 'slope_l3')} | "
                    f"{'-' if paper is None else paper} |")
    return rows


def _stats_table(meta: dict[str, Any], res: dict[str, Any]) -> list[str]:
    """The statistics per group (and overall), with and without the base, beside the paper's r."""
    figures = PAPER_R.get(_family(meta))
    paper = figures[0][1] if figures else None
    lines = ["| group | points | n | Pearson r (log LR) | Pearson r (LR) | Spearman rho | "
             f"slope vs predicted [95% CI] (rule: {PREDICTED_SLOPE:g}) | "
             f"slope vs sum L^3 [95% CI] (rule: {PREDICTED_SLOPE_L3:g}) | paper's r |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    if len(res["groups"]) > 1:
        lines += _stats_rows("all groups", res["overall"], None)
    for g, gc in res["groups"].items():
        lines += _stats_rows(g, gc, paper)
    return lines


def _censored_lines(res: dict[str, Any], meta: dict[str, Any]) -> list[str]:
    """Censored fits with clones counted once, and the path count beside the scale (sets ``res["censored"]``)."""
    from ...space.registry import get_family

    try:
        family = get_family(_family(meta))
    except NasRescaleError:  # a family this install does not ship: no topology to read
        return []
    c = res["censored"] = criterion_fits(res["points"], family)
    rows = [[f["fit"], str(f["n"]), str(f["censored"]), "-" if f["slope"] is None else
             f"{f['slope']:+.2f}" + (f" [{f['slope_ci'][0]:+.2f}, {f['slope_ci'][1]:+.2f}]" if f["slope_ci"] else "")]
            for f in c["fits"]]
    r2, two = c["r2"], c.get("two_predictors")
    lines = ["### Censored fits, each function once, and the path count", "",
             f"Each cell isomorphic to one before it (the base first) is counted once ({c['clones_dropped']} left out); "
             f"a maximal LR at its grid's edge is kept as the bound it is ({c['censored']} such cell(s)), in a "
             "censored-normal (Tobit) fit of log(maximal LR) on log(path-depth scale) (the rule: slope 1):", "",
             *md_table(["cells", "n", "censored", "slope [95% CI]"], rows), ""]
    if r2["path_count"] is not None and r2["lr_scale"] is not None:
        lines.append(f"Which explains the maximal LR: R^2 of log(maximal LR) on log(number of input-output paths P) "
                     f"{r2['path_count']:.2f}, on log(path-depth scale) {r2['lr_scale']:.2f} ({r2['n']} measured cells).")
    if two and two["path_count_ci"] and two["lr_scale_ci"]:
        lines.append(f"Both in one censored fit: log P {two['path_count']:+.2f} [{two['path_count_ci'][0]:+.2f}, "
                     f"{two['path_count_ci'][1]:+.2f}], log scale {two['lr_scale']:+.2f} [{two['lr_scale_ci'][0]:+.2f}, "
                     f"{two['lr_scale_ci'][1]:+.2f}] (the rule: P 0, scale 1).")
    return lines + [""]


def _sensitivity(plan: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """Pearson r (log LR) of the same runs read under every rule x loss: how much the figure
    depends on the choice of "maximal LR" (no new training)."""
    lines = ["| rule | loss | r (log LR), all | r (log LR), without base | slope vs predicted | at grid edge |",
             "|---|---|---:|---:|---:|---:|"]
    for rule in SELECTION_RULES:
        for loss in LOSS_KINDS:
            try:
                res = analyze({**plan, "rule": rule, "loss": loss}, rows)
            except DataError:  # runs stored before the tail loss was recorded
                continue
            c = res["overall"]
            mark = " (this report)" if (rule, loss) == (plan.get("rule"), plan.get("loss")) else ""
            lines.append(f"| `{rule}`{mark} | `{loss}` | {_fmt(c['pearson_log'])} | "
                         f"{_fmt(c['without_base']['pearson_log'])} | {_fmt(c['slope'])} | {res['at_edge']} |")
    return lines


def _vs_paper(meta: dict[str, Any], res: dict[str, Any]) -> list[str]:
    """One sentence per paper figure: our r beside it and the difference; where the paper has no
    figure for the family, the run's own r and slope against the rule's."""
    out = []
    c = res["overall"]
    if c["pearson_log"] is None:
        return [f"**So far {len(res['points'])} architecture(s) finished, {res['skipped']} not yet: too few for "
                "r (log LR) and a slope.**"]
    if not PAPER_R.get(_family(meta)) and c["slope"] is not None:
        nb = c["without_base"]
        ci = nb.get("slope_ci")
        out.append(f"**r (log LR) = {c['pearson_log']:.3f}, log-log slope {c['slope']:.3f} on the prediction (the rule: "
                   f"1); without the base architecture r {_fmt(nb['pearson_log'])}, slope {_fmt(nb['slope'])}"
                   + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "") + " (n = " + str(nb["n"]) + "). The paper has "
                   "no figure for this family.**")
    for what, r in PAPER_R.get(_family(meta), []):
        c = res["overall"]
        if c["pearson_log"] is None:
            continue
        nb = c["without_base"]["pearson_log"]
        out.append(f"**{what}**: r (log LR) = {c['pearson_log']:.3f} against the paper's {r} "
                   f"({c['pearson_log'] - r:+.3f})" + ("" if nb is None else
                   f"; without the base architecture {nb:.3f} ({nb - r:+.3f})") + ".")
    return out


def _budget_lines(meta: dict[str, Any], plan: dict[str, Any], res: dict[str, Any]) -> list[str]:
    """What was run: data, protocol, grid, seeds, rule, size, and the machine (from the store)."""
    record = parse_record(meta)
    search, budget = record.lr_search, record.budget
    runs = sum(len(m["runs"]) for g in plan["groups"].values() for m in g["archs"])
    epochs = search.get("epochs", 1)  # every run holds the grid LR constant for the search's epochs
    proto_text = "; ".join(f"`{label}`: init {p.init}, batch {p.batch_size}, momentum {p.momentum}, weight decay "
                           f"{p.weight_decay}, {p.precision}" for label, p in record.protocols.items())
    return [f"- data: `{record.dataset}`"
            + (f", {budget['train_subset']} training images" if budget.get("train_subset") else ", full training set"),
            f"- protocols: {proto_text}; each run {epochs} epoch(s) at a constant LR (the protocol's schedule "
            "and epochs are not used)",
            f"- grid: {search.get('points')} LRs from {search.get('lr_min')} to {search.get('lr_max')} (log-spaced), "
            f"extended past an edge up to {search.get('extend')} times; {runs} runs in the plan",
            f"- seeds: {search.get('seeds')}; rule `{res['rule']}` on the `{res['loss']}` loss"
            + (" (mean over the last 10% of the epoch's steps)" if res["loss"] == "tail" else
               " (the epoch's mean training loss, as the paper's released code logs it)"),
            f"- width {budget.get('width') or 'family default'}" + (f", cells {budget['cells']}" if budget.get("cells") else "")]


def write_validation_report(run_dir: Path) -> Path:
    """Write ``report.md``, the two figures and ``report.json`` into ``run_dir``; return the .md path."""
    run_dir = Path(run_dir)
    meta, res = load_analysis(run_dir)
    name = meta.get("name", run_dir.name)
    plan = json.loads(meta[VALIDATION_PLAN_KEY])
    rows = _rows(run_dir)
    fig = plot_predicted_measured(res, run_dir / "lr_validation.png", f"{name}: maximal LR, measured vs predicted")
    curves = plot_curves(res, run_dir / "lr_validation_curves.png", name)
    rule = ("the argmin of the final training loss per seed, averaged over seeds in log LR (the paper's rule)"
            if res["rule"] == "argmin" else
            f"the largest LR within {100 * plan['rel_tol']:g}% of the smallest mean final training loss")
    lines = [f"# LR validation: {name}", "",
             f"Family `{_family(meta)}`, base architecture `{plan['base_arch']}`. Each architecture's maximal LR is "
             f"{rule}, and is compared with `base_lr x lr_scale(arch) x kernel factor`, base_lr being the base "
             "architecture's measured maximal LR (Chen et al., ICLR 2024, eqs. 8-9).", "",
             "## Statistics", ""] + _vs_paper(meta, res) + [""] + _stats_table(meta, res) + ["",
             "Slopes are least-squares fits in log-log with Student-t 95% intervals; "
             "`sum L^3` is the sum over input-output paths of the path depth cubed."
             + (" A measured LR still at its grid's edge only bounds the maximal LR, so the last row leaves "
                "those points out too." if res["at_edge"] else ""), "",
             *_censored_lines(res, meta),
             f"![predicted vs measured]({fig.name})", "", f"![loss vs LR per architecture]({curves.name})", "",
             "## How much the figure depends on the definition of the maximal LR", "",
             "The same runs, read under each rule and training-loss definition (`nasrescale.lrsearch.select`):", ""]
    lines += _sensitivity(plan, rows) + ["",
             "## What ran", ""] + _budget_lines(meta, plan, res) + _provenance(run_dir) + ["",
             "## Per architecture", "",
             "| group | architecture | sum L^3 | lr_scale | predicted LR | measured LR | seeds' argmins | note |",
             "|---|---|---:|---:|---:|---:|---|---|"]
    for p in res["points"]:
        note = ("base; " if p["base"] else "") + (f"argmin at grid {p['edge']} edge" if p["edge"] else "")
        seeds = ", ".join("diverged" if v is None else f"{v:.4g}" for v in p["seed_lrs"]) or "-"
        lines.append(f"| {p['group']} | `{p['arch']}` | {p['sum_l3']} | {p['lr_scale']:.4f} | {p['predicted_lr']:.4g} | "
                     f"{p['measured_lr']:.4g} | {seeds} | {note.rstrip('; ')} |")
    extra = []
    if res["skipped"]:
        extra.append(f"{res['skipped']} architecture(s) are not finished yet (partial run).")
    if res["degenerate"]:
        extra.append(f"{res['degenerate']} degenerate cell(s) (no input-output path) have no maximal LR; left out.")
    if res["at_edge"]:
        extra.append(f"{res['at_edge']} measured LR(s) still have a seed's argmin at the grid's edge.")
    lines += [""] + extra + [""]
    atomic_write_text(run_dir / "report.json", to_json(res, indent=1))
    path = run_dir / "report.md"
    atomic_write_text(path, "\n".join(lines))
    return path


def _provenance(run_dir: Path) -> list[str]:
    """Machine, torch and wall time of the stored runs (from their records)."""
    with reading(run_dir) as store:
        recs = [store.record(r["key"]) or {} for r in store.rows() if r["status"] in FINAL]
    if not recs:
        return []
    prov = {(r.get("provenance") or {}).get("device_name", "?") + " / torch " + (r.get("provenance") or {}).get("torch", "?")
            for r in recs}
    wall = sum(r.get("wall_time_s") or 0.0 for r in recs)
    return [f"- ran on: {', '.join(sorted(prov))}; {len(recs)} runs, {wall / 60:.1f} min of summed job time"]
