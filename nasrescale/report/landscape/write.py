"""``report.md`` of a landscape run: the rule's slope, the headroom, the ranking, each cell.

Every figure is recomputed from the store (:func:`analyze`), also written as ``report.json``.
Below :data:`~.stats.MIN_CELLS` finished cells the report gives figures only: no interval and
no verdict.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ...fileio import atomic_write_text
from ...space.encodings import parse_arch
from ...space.registry import get_family
from ...space.topology import effective_edges
from ...ranking.text import to_json
from ...store.read import StoreData, read_store
from ..common.names import short_names
from ..common.markdown import md_table
from ..common.provenance import provenance_lines
from ..common.reference import load_reference, reference_spec
from .cells import CellLandscape, read_cells, read_plan
from .criterion import criterion_rows
from .phrases import global_text, grid_text, strata_lines
from .recipe import recipe_scores
from .plots import plot_best_vs_rule, plot_landscapes
from .stats import ARMS, MIN_CELLS, arm_scores, elr_stats, headroom, ranking, slope_stats, strata_stats
from .verdict_text import bracket_lines, distortion_lines, power_lines, verdict_line
from . import verdicts as verdicts_module
from .verdicts import verdicts

__all__ = ["analyze", "write_landscape_report", "landscape_text"]


def _reference(store: StoreData) -> dict[str, float] | None:
    source, _ = load_reference(*reference_spec(store.record))
    return None if source is None else source.runs.groupby("arch")["accuracy"].mean().to_dict()


def analyze(store: StoreData, n_boot: int = 9999, n_sim: int | None = None) -> dict[str, Any]:
    """Everything the report states, from the store (and the ``criterion`` runs beside it) (JSON-able);
    ``n_sim`` scales the verdicts' simulations (0: no verdicts; default :data:`~.verdicts.N_SIM`)."""
    plan, settings = read_plan(store)
    cells, pending = read_cells(store, min(n_boot, 2000))
    out: dict[str, Any] = {"label": plan["label"], "seeds": plan["seeds"], "epochs": plan.get("epochs"),
                           "settings": plan["settings"], "cells": len(cells), "pending": pending,
                           "degenerate": sum(bool(c["degenerate"]) for c in plan["cells"].values()),
                           "per_cell": [_cell_json(c, settings.lr) for c in cells]}
    if len(cells) < 3:
        return out
    out["slope"] = slope_stats(cells, settings.lr, "vertex")
    out["slope_argmax"] = slope_stats(cells, settings.lr, "argmax")
    out["rule_constant"] = float(np.exp(np.mean([math.log(settings.lr(c.vertex) / c.lr_scale) for c in cells])))
    scores = arm_scores(cells, settings.points_per_octave)
    out["arms"] = {arm: {"lr": [settings.lr(k) for k in scores[arm]["k"]]} for arm in ARMS}
    out["arms"]["global"]["options"] = [settings.lr(k) for k in scores["global_options"]]
    out["rule_clipped"] = scores["clipped"]
    out["headroom"] = headroom(scores, n_boot)
    out["ranking"] = ranking(cells, scores, settings.top_percent, _reference(store))
    out["strata"] = strata_stats(cells, settings.strata, settings.lr, _conv_of(store))
    out["elr"] = elr_stats(cells, settings.lr, Counter(scores["global"]["k"]).most_common(1)[0][0])
    n_sim = verdicts_module.N_SIM if n_sim is None else n_sim
    if n_sim and len(cells) >= MIN_CELLS:
        recipe = (recipe_scores(settings.recipe, cells, plan["seeds"], store.path.parent.parent)
                  if settings.recipe else None)
        out["verdicts"] = verdicts(cells, settings.points_per_octave, settings.lr, n_sim, min(n_boot, 2000),
                                   recipe=recipe)
    if settings.criterion:
        out["criterion"] = criterion_rows(settings.criterion, cells, settings.lr, store.path.parent.parent,
                                          get_family(store.record.family_or("nb201")))
    return out


def _conv_of(store: StoreData) -> Callable[[str], bool]:
    """``arch -> whether a parametric op (a conv) lies on one of its live edges``, in the store's family."""
    family = get_family(store.record.family_or("nb201"))
    return lambda arch: any(family.op(op).parametric for _, _, op in effective_edges(parse_arch(arch, family), family))


def _cell_json(c: CellLandscape, lr: Any) -> dict[str, Any]:
    return {"arch": c.arch, "lr_scale": c.lr_scale, "sum_l3": c.sum_l3, "best_lr": lr(c.best),
            "vertex_lr": lr(c.vertex), "vertex_ci": None if c.vertex_ci is None else [lr(v) for v in c.vertex_ci],
            "edge": c.edge, "best_mean": float(np.mean(c.acc[c.best])), "lrs": [lr(k) for k in sorted(c.acc)],
            "mean_acc": [float(np.mean(c.acc[k])) for k in sorted(c.acc)]}


def _f(v: Any, digits: int = 2) -> str:
    return "-" if v is None else f"{v:+.{digits}f}" if isinstance(v, float) and digits == 2 else f"{v:.{digits}f}"


def _ci(entry: dict[str, Any], key: str = "ci", show: bool = True) -> str:
    ci = entry.get(key)
    return f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci and show else ""


def _slope_lines(res: dict[str, Any], full: bool) -> list[str]:
    s, a = res["slope"], res["slope_argmax"]
    if s["slope"] is None:
        return ["The slope is undefined (every cell has the same path-depth scale or the same best LR).", ""]
    ci = f" (95% CI {s['slope_ci'][0]:.2f} to {s['slope_ci'][1]:.2f})" if full else ""
    where = ""
    if full:
        where = (f" The rule's 1 is {'inside' if s['rule_in_ci'] else 'outside'} that interval; one global LR's 0 is "
                 f"{'inside' if s['global_in_ci'] else 'outside'}.")
    return [f"Regressed on log(path-depth scale), log(each cell's best LR) has slope **{s['slope']:.2f}**{ci} "
            f"(the rule predicts 1; one LR for every cell, 0).{where} Pearson r of the logs "
            f"{_f(s['pearson_log'], 3)} (the paper reports r on log LR for its MLPs and CNNs). By the argmax "
            f"instead of the quadratic's vertex: slope {_f(a['slope'], 3)}.", "", *strata_lines(res.get("strata"))]


def _criterion_lines(res: dict[str, Any], full: bool) -> list[str]:
    if "criterion" not in res:
        return []
    rows = [[r["source"], str(r["n"]), _f(r["slope"], 2)
             + (f" [{r['slope_ci'][0]:.2f}, {r['slope_ci'][1]:.2f}]" if full and r["slope_ci"] else ""), r["note"]]
            for r in res["criterion"]]
    return ["The paper's one-epoch criterion (constant LR, argmin of the training loss), each run with the optimizer "
            "its row names (the paper's own is plain SGD at batch 128), on the same cells:",
            "", *md_table(["best LR by", "cells", "slope on path-depth scale", "note"], rows), ""]


def _captured_text(cap: float | None, ci: list[float] | None) -> str:
    """The share of the oracle's gain over one global LR that the rule captures, in words.

    >>> _captured_text(-0.5, [-1.2, 0.1])
    "The rule captures -50% [-120%, 10%] of the oracle's gain over one global LR (below 0: the rule does worse than one global LR)"
    >>> _captured_text(None, None)[:50]
    'The cross-fitted oracle does not beat one global L'
    """
    if cap is None:
        return ("The cross-fitted oracle does not beat one global LR on average, so the rule's share of its gain is "
                "undefined (what that estimate can and cannot say: the bracket below)")
    text = f"The rule captures {100 * cap:.0f}%" + (f" [{100 * ci[0]:.0f}%, {100 * ci[1]:.0f}%]" if ci else "")
    return text + " of the oracle's gain over one global LR" + (
        " (below 0: the rule does worse than one global LR)" if cap < 0 else "")


def _headroom_lines(res: dict[str, Any], full: bool) -> list[str]:
    h = res["headroom"]
    rows = [[arm, f"{h['mean'][arm]:.2f}"] for arm in ARMS]
    rows = [[*r, *(["-", "-", "-"] if r[0] == "global" else
                   [f"{h[f'{r[0]}-global']['mean']:+.2f}{_ci(h[f'{r[0]}-global'], show=full)}",
                    f"{h[f'{r[0]}-global']['median']:+.2f}", f"{100 * h[f'{r[0]}-global']['share_gain']:.0f}%"])]
            for r in rows]
    cap = h.get("captured")
    ci = h.get("captured_ci") if full else None
    lines = md_table(["LR per cell", "mean accuracy (%)", "minus global [95% CI]", "median", "cells that gain"], rows)
    lines += ["", "oracle: each cell's own best LR, chosen on its other seeds and scored on each seed (cross-fitted); "
              "global: one LR for every cell; rule: LR = c x path-depth scale at the nearest grid point. The global LR "
              "and c are chosen leave-one-cell-out (on every other cell, then scored on this one).",
              "", global_text(res["arms"]["global"]),
              "", _captured_text(cap, ci) + (f"; {res['rule_clipped']} rule choice(s) fell outside a cell's measured "
                                             "grid (scored at its nearest point)." if res["rule_clipped"] else "."), ""]
    return lines


def _elr_lines(res: dict[str, Any], full: bool) -> list[str]:
    e = res.get("elr")
    if not e:
        return ["No run recorded effective LRs: nothing to say about them.", ""]
    fixed = e.get("fixed_lr")
    names = {"nominal": "nominal best LR", "elr_first": "effective step at the best LR, first epoch",
             "elr_last": "effective step at the best LR, last epoch"}
    if fixed is not None:
        names |= {"fixed_first": f"effective step at one LR {fixed:.3g}, first epoch",
                  "fixed_last": f"effective step at one LR {fixed:.3g}, last epoch"}
    rows = [[names[k], f"{e[k]['median']:.3g}", f"{e[k]['sd_log']:.2f}", _f(e[k]["slope"], 2)
             + (f" [{e[k]['slope_ci'][0]:.2f}, {e[k]['slope_ci'][1]:.2f}]" if full and e[k]["slope_ci"] else "")]
            for k in names]
    lines = [f"The effective step of a scale-invariant conv (a conv followed by a BatchNorm: its update acts through "
             f"it) is the epoch's scheduled LR times |grad W| / |W|, the median over the cell's live convs (dead ones, "
             f"whose ELR is 0, left out); {e['n']} cells. At each cell's best LR against one LR for every cell (the "
             "global LR most folds chose): a smaller spread across cells at the best LR than at the fixed one says "
             "the best *effective* step is the more nearly constant.", "",
             *md_table(["", "median over cells", "sd of log over cells", "slope on path-depth scale"], rows), ""]
    for when in ("first", "last"):
        d = e.get(f"spread_diff_{when}")
        if d and full:
            word = ("smaller at the best LR" if d["ci"][1] < 0 else "larger at the best LR" if d["ci"][0] > 0
                    else "not distinguishable at these cells")
            lines.append(f"Spread at the best LR minus spread at one LR, {when} epoch: {d['diff']:+.2f} "
                         f"[{d['ci'][0]:+.2f}, {d['ci'][1]:+.2f}] (bootstrap over cells): {word}.")
    return lines + [""]


def _ranking_lines(res: dict[str, Any]) -> list[str]:
    r = res["ranking"]
    top = res["settings"]["top_percent"]
    rows = [[pair.replace("-", " vs "), _f(r[pair]["tau"], 3), _f(r[pair]["tau_top"], 3), _f(r[pair]["tau_single"], 3)]
            for pair in ("global-oracle", "rule-oracle", "global-rule")]
    lines = md_table(["rankings", "Kendall tau (seed means)", f"tau, top {top}% by oracle", "tau, single runs"], rows)
    lines += ["", f"Seed floor, like for like (one seed's run against another's, global LR): tau {_f(r['seed_floor'], 3)}. "
              "The single-run column is the comparable figure: an arm's seed against another arm's other seed."]
    if "reference" in r:
        refs = ", ".join(f"{arm} {_f(r['reference'][arm], 3)}" for arm in ARMS)
        lines.append(f"Against the benchmark ({r['reference_n']} cells): {refs}.")
    return lines + [""]


def _cell_table(res: dict[str, Any], store: StoreData) -> list[str]:
    family = store.record.family_or("nb201")
    names, how = short_names([c["arch"] for c in res["per_cell"]], family)
    rows = []
    for c in sorted(res["per_cell"], key=lambda c: c["lr_scale"]):
        ci = c["vertex_ci"]
        rows.append([f"`{names[c['arch']]}`", f"{c['lr_scale']:.3f}", f"{c['sum_l3']:g}", f"{c['best_lr']:.3g}",
                     f"{c['vertex_lr']:.3g}" + (f" [{ci[0]:.3g}, {ci[1]:.3g}]" if ci else ""), c["edge"] or "",
                     f"{c['lrs'][0]:.3g}-{c['lrs'][-1]:.3g}", f"{c['best_mean']:.2f}"])
    return md_table(["cell", "path-depth scale", "sum L^3", "best LR (argmax)", "best LR (vertex) [bootstrap]",
                     "at edge", "LRs tried", "best mean acc."], rows) + ["", how, ""]


def write_landscape_report(run_dir: Path, n_boot: int = 9999) -> Path:
    """Write ``report.md``, ``report.json`` and the figures into ``run_dir``; return the .md path."""
    run_dir = Path(run_dir)
    store = read_store(run_dir / "store.sqlite")
    res = analyze(store, n_boot)
    _, settings = read_plan(store)
    name = store.record.name or run_dir.name
    s = res["settings"]
    lines = [f"# LR landscape: {name}", "",
             f"Protocol `{res['label']}` at {res['epochs']} epoch(s), {grid_text(s)}, seeds "
             f"{', '.join(map(str, res['seeds']))}. {res['cells']} cell(s) finished"
             + (f", {res['pending']} not yet" if res["pending"] else "") + ".", ""]
    if res["cells"] < 3:
        lines += [f"**So far {res['cells']} of {res['cells'] + res['pending']} cells finished: fewer than 3, nothing "
                  "to compare yet.**", ""]
    else:
        full = res["cells"] >= MIN_CELLS
        if not full:
            lines += [f"So far on {res['cells']} cells: below {MIN_CELLS} cells the figures are shown without "
                      "intervals or verdicts.", ""]
        cells, _ = read_cells(store, 200)
        shown = res["slope"] if full else {**res["slope"], "slope_ci": None}  # no interval below MIN_CELLS
        fig = plot_best_vs_rule(cells, settings.lr, res["rule_constant"], shown, run_dir / "landscape_rule.png",
                                f"{name}: each cell's best LR vs the path-depth rule")
        curves = plot_landscapes(cells, settings.lr, run_dir / "landscape_curves.png", f"{name}: accuracy vs LR")
        h = res["headroom"]
        lines += [f"**Slope of log(best LR) on log(path-depth scale) {_f(res['slope']['slope'], 2)} on {res['cells']} "
                  f"cells (the rule: 1; one global LR: 0); oracle - global {h['oracle-global']['mean']:+.2f} points, "
                  f"rule - global {h['rule-global']['mean']:+.2f}.**", ""]
        if res.get("verdicts"):
            lines += [verdict_line(res["verdicts"]), ""]
        lines += ["## Does each cell's best LR follow the path-depth rule?", ""] + _slope_lines(res, full)
        lines += _criterion_lines(res, full)
        lines += [f"![best LR vs rule]({fig.name})", "", f"![accuracy vs LR]({curves.name})", "",
                  "## Headroom: what a per-cell LR buys over one global LR", ""] + _headroom_lines(res, full)
        if "verdicts" in res and res["verdicts"]:
            lines += ["### The gain, bracketed and set against a null", ""] + bracket_lines(res["verdicts"])
        lines += ["## The ranking each choice of LR gives", ""] + _ranking_lines(res)
        if "verdicts" in res and res["verdicts"]:
            lines += ["### Does one fixed LR distort the ranking?", ""] + distortion_lines(res["verdicts"])
            lines += ["### What this design can detect", ""] + power_lines(res["verdicts"])
        lines += ["## The effective step at each cell's best LR, against one fixed LR", ""] + _elr_lines(res, full)
        lines += ["## Each cell", ""] + _cell_table(res, store)
    lines += provenance_lines(store)
    atomic_write_text(run_dir / "report.json", to_json(res, indent=1))
    path = run_dir / "report.md"
    atomic_write_text(path, "\n".join(lines).rstrip() + "\n")
    return path


def landscape_text(run_dir: Path) -> str:
    """One paragraph for the end of ``nasrescale run``."""
    res = analyze(read_store(Path(run_dir) / "store.sqlite"), 999, n_sim=0)
    if res["cells"] < 3:
        return f"landscape: {res['cells']} cell(s) finished, {res['pending']} pending"
    s, h = res["slope"], res["headroom"]
    return (f"landscape: {res['cells']} cells; slope of log best LR on log path-depth scale "
            f"{_f(s['slope'], 2)} (rule 1, global 0); oracle - global {h['oracle-global']['mean']:+.2f} points, "
            f"rule - global {h['rule-global']['mean']:+.2f}; tau(global, oracle) {_f(res['ranking']['global-oracle']['tau'], 3)}")
