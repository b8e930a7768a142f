"""The report of an ``lr_validation`` run: measured vs predicted maximal LR (paper Figs. 2, 3, 5).

:func:`write_validation_report` reads the run's store (read-only; a partial run reports what
is finished), applies :func:`nasrescale.lrsearch.validation.analyze`, and writes ``report.md``,
``lr_validation.png`` (predicted vs measured, log-log, with y = x), ``lr_validation_curves.png``
(loss vs LR per architecture) and ``report.json``.
:func:`summary_text` is the table ``nasrescale run`` prints at the end.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..fileio import atomic_write_text
from ..lrsearch.validation import analyze
from ..store.write import Store

__all__ = ["write_validation_report", "summary_text", "load_analysis", "PAPER_R"]

#: the paper's Pearson r between predicted and grid-searched maximal LR (CIFAR-10), per family
PAPER_R = {"mlp_dag": [("MLP topologies", 0.838), ("MLP depth", 0.962)],
           "cnn_dag": [("CNN topologies and kernel sizes", 0.856)]}


def _paper_text(family: str) -> str | None:
    figures = PAPER_R.get(family)
    if not figures:
        return None
    return "paper (CIFAR-10, full size): " + "; ".join(f"{what} r = {r}" for what, r in figures)


def load_analysis(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(meta, analysis)`` of the run in ``run_dir``.

    Raises:
        DataError: no store, or the store is not an ``lr_validation`` run.
    """
    store = Store(Path(run_dir) / "store.sqlite", readonly=True)
    try:
        meta, rows = store.meta(), store.rows()
    finally:
        store.close()
    if "validation_plan" not in meta:
        raise DataError(f"{str(run_dir)!r} holds no lr_validation run (no validation plan in its store)")
    return meta, analyze(json.loads(meta["validation_plan"]), rows)


def _fmt(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _family(meta: dict[str, Any]) -> str:
    try:
        return str(json.loads(meta.get("pipeline", "{}"))["pipeline"]["family"])
    except (KeyError, TypeError, ValueError):
        return "?"


def summary_text(run_dir: Path) -> str:
    """Per-architecture measured and predicted LR, and the correlations, as plain text."""
    meta, res = load_analysis(run_dir)
    lines = [f"{'group':<14} {'arch':<24} {'lr_scale':>8} {'predicted':>10} {'measured':>10}  note"]
    for p in res["points"]:
        note = ("base" if p["base"] else "") + (f" at grid {p['edge']} edge" if p["edge"] else "")
        lines.append(f"{p['group']:<14} {p['arch']:<24} {p['lr_scale']:>8.4f} {p['predicted_lr']:>10.4g} "
                     f"{p['measured_lr']:>10.4g}  {note.strip()}")
    c = res["overall"]
    lines.append(f"n = {c['n']}: Pearson r (log LR) = {_fmt(c['pearson_log'])}, Pearson r (LR) = {_fmt(c['pearson'])}, "
                 f"Spearman rho = {_fmt(c['spearman'])}")
    paper = _paper_text(_family(meta))
    if paper:
        lines.append(paper)
    if res["skipped"]:
        lines.append(f"{res['skipped']} architecture(s) not finished yet (rerun `nasrescale run` to finish)")
    if res["at_edge"]:
        lines.append(f"{res['at_edge']} measured LR(s) at the grid's edge: widen [lr_search] for those")
    return "\n".join(lines)


def _log_ticks(axis: Any) -> None:
    """1-2-5 major ticks as plain numbers, unlabelled minor ticks (no overlapping labels)."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FormatStrFormatter("%g"))
    axis.set_minor_formatter(NullFormatter())


def _plot(res: dict[str, Any], path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 5.0), dpi=120)
    groups = list(dict.fromkeys(p["group"] for p in res["points"]))
    for i, g in enumerate(groups):
        pts = [p for p in res["points"] if p["group"] == g]
        color = f"C{i % 10}"
        inner = [p for p in pts if not p["edge"]]
        edge = [p for p in pts if p["edge"]]
        ax.scatter([p["predicted_lr"] for p in inner], [p["measured_lr"] for p in inner], s=28, color=color,
                   label=g, alpha=0.8)
        if edge:
            ax.scatter([p["predicted_lr"] for p in edge], [p["measured_lr"] for p in edge], s=28, facecolors="none",
                       edgecolors=color, label=f"{g} (at grid edge)")
        base = [p for p in pts if p["base"]]
        if base:
            ax.scatter([base[0]["predicted_lr"]], [base[0]["measured_lr"]], marker="*", s=140, color=color,
                       edgecolors="k", zorder=3, label=f"{g} base")
    values = [v for p in res["points"] for v in (p["predicted_lr"], p["measured_lr"])]
    if values:
        lo, hi = min(values) / 1.5, max(values) * 1.5
        ax.plot([lo, hi], [lo, hi], "k--", lw=1, label="y = x")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _log_ticks(ax.xaxis)
    _log_ticks(ax.yaxis)
    ax.set_xlabel("predicted maximal LR  (base_lr x lr_scale x kernel factor)")
    ax.set_ylabel("measured maximal LR (grid search)")
    c = res["overall"]
    ax.set_title(f"{title}\nPearson r: log {_fmt(c['pearson_log'])}, linear {_fmt(c['pearson'])}; "
                 f"Spearman {_fmt(c['spearman'])} (n = {c['n']})", fontsize=9)
    ax.legend(fontsize=7, loc="best")  # the spot with the fewest points
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _curves_plot(res: dict[str, Any], path: Path, title: str) -> Path:
    """Mean final training loss vs LR per architecture (diverged LRs left out), the measured
    maximal LR of each marked: the evidence behind every measured point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    finite = [loss for p in res["points"] for _, loss in p["curve"] if loss is not None]
    cap = min(finite) * 1.6 if finite else 1.0  # exploding losses would flatten the interesting part
    for i, p in enumerate(res["points"]):
        xs = [lr for lr, loss in p["curve"] if loss is not None and loss <= cap]
        ys = [loss for _, loss in p["curve"] if loss is not None and loss <= cap]
        color = plt.get_cmap("tab20")(i % 20)
        ax.plot(xs, ys, "-", color=color, lw=2.2 if p["base"] else 1.0,
                label=f"{p['arch']} (s = {p['lr_scale']:.2f})" + (" base" if p["base"] else ""))
        at = dict(p["curve"])[p["measured_lr"]]
        ax.plot([p["measured_lr"]], [at], "o", color=color, ms=5)
    ax.set_xscale("log")
    _log_ticks(ax.xaxis)
    ax.set_xlabel("learning rate")
    ax.set_ylabel("mean final training loss (nats)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, ncol=2, loc="upper left")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def write_validation_report(run_dir: Path) -> Path:
    """Write ``report.md``, ``lr_validation.png`` and ``report.json`` into ``run_dir``; return the .md path."""
    run_dir = Path(run_dir)
    meta, res = load_analysis(run_dir)
    name = meta.get("name", run_dir.name)
    plan = json.loads(meta["validation_plan"])
    fig = _plot(res, run_dir / "lr_validation.png", f"{name}: maximal LR, measured vs predicted")
    curves = _curves_plot(res, run_dir / "lr_validation_curves.png",
                          f"{name}: final training loss vs LR (dots: measured maximal LR)")
    c = res["overall"]
    lines = [f"# LR validation: {name}", "",
             f"Family `{_family(meta)}`, base architecture `{plan['base_arch']}`; each architecture's maximal LR "
             f"is grid-searched (largest LR within {100 * plan['rel_tol']:g}% of the smallest mean final training "
             "loss; diverged LRs lose) and compared with `base_lr x lr_scale(arch) x kernel factor`, base_lr being "
             "the base architecture's measured maximal LR.", "",
             f"![predicted vs measured]({fig.name})", "",
             f"![loss vs LR per architecture]({curves.name})", "",
             "| | n | Pearson r (log LR) | Pearson r (LR) | Spearman rho |", "|---|---:|---:|---:|---:|",
             f"| all | {c['n']} | {_fmt(c['pearson_log'])} | {_fmt(c['pearson'])} | {_fmt(c['spearman'])} |"]
    if len(res["groups"]) > 1:
        for g, gc in res["groups"].items():
            lines.append(f"| {g} | {gc['n']} | {_fmt(gc['pearson_log'])} | {_fmt(gc['pearson'])} | {_fmt(gc['spearman'])} |")
    paper = _paper_text(_family(meta))
    lines += [""] + ([f"{paper[0].upper()}{paper[1:]} (this run's size is in its pipeline file; small runs are "
                      "not paper-size figures)."] if paper else [])
    lines += ["", "| group | architecture | lr_scale | kernel factor | predicted LR | measured LR | note |",
              "|---|---|---:|---:|---:|---:|---|"]
    for p in res["points"]:
        note = ("base; " if p["base"] else "") + (f"grid {p['edge']} edge" if p["edge"] else "")
        lines.append(f"| {p['group']} | `{p['arch']}` | {p['lr_scale']:.4f} | {p['kernel_factor']:.3g} | "
                     f"{p['predicted_lr']:.4g} | {p['measured_lr']:.4g} | {note.rstrip('; ')} |")
    extra = []
    if res["skipped"]:
        extra.append(f"{res['skipped']} architecture(s) are not finished yet (partial run).")
    if res["degenerate"]:
        extra.append(f"{res['degenerate']} degenerate cell(s) (no input-output path) have no maximal LR; left out.")
    if res["at_edge"]:
        extra.append(f"{res['at_edge']} measured LR(s) lie at the grid's edge (the true maximum may be beyond).")
    lines += [""] + extra + [""]
    atomic_write_text(run_dir / "report.json", json.dumps(res, indent=1, allow_nan=False, default=str))
    path = run_dir / "report.md"
    atomic_write_text(path, "\n".join(lines))
    return path
