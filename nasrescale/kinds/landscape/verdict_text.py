"""The landscape report's sections on its calibrated verdicts (:mod:`.verdicts`), in Markdown.

>>> gain_sentence({"model": {"estimate": 0.1}, "model_ci": [0.05, 0.2]}, 0.5)
'The model-based gain is +0.10 points [+0.05, +0.20]: its 95% interval lies below 0.5 points, so a per-cell LR gains less than 0.5 points on these cells.'
>>> gain_sentence({"model": {"estimate": 0.4}, "model_ci": [0.1, 0.9]}, 0.5)
'The model-based gain is +0.40 points [+0.10, +0.90]: its 95% interval reaches 0.5 points, so these runs cannot say whether a per-cell LR gains that much.'
"""

from __future__ import annotations

from typing import Any, Mapping

from ...report.common.markdown import md_table

__all__ = ["gain_sentence", "bracket_lines", "distortion_lines", "power_lines", "verdict_line", "underpowered"]

_BIAS = {"in_sample": ("in-sample", "biased up: each cell's LR and the global LR picked on the runs scored"),
         "cross_fitted": ("cross-fitted", "biased down: picked on other seeds / cells, one noisy run each"),
         "model": ("model-based", "the smoothed landscape's peak minus its value at the pooled optimum")}


def _ci(ci: Any, fmt: str = "+.2f") -> str:
    return f" [{ci[0]:{fmt}}, {ci[1]:{fmt}}]" if ci else ""


def gain_sentence(b: Mapping[str, Any], margin: float) -> str:
    """What the model-based gain's interval allows us to say (see the module's examples)."""
    est, ci = b["model"]["estimate"], b["model_ci"]
    head = f"The model-based gain is {est:+.2f} points{_ci(ci)}: its 95% interval "
    if ci[1] < margin:
        return head + f"lies below {margin:g} points, so a per-cell LR gains less than {margin:g} points on these cells."
    return head + f"reaches {margin:g} points, so these runs cannot say whether a per-cell LR gains that much."


def bracket_lines(v: Mapping[str, Any]) -> list[str]:
    """The bracket table, each estimate against its null, and the sentence the model allows."""
    b = v["bracket"]
    rows = []
    for key, (name, bias) in _BIAS.items():
        e = b[key]
        est = f"{e['estimate']:+.2f}" + (_ci(b["model_ci"]) if key == "model" else "")
        rows.append([name, est, f"{e['null_mean']:+.2f}{_ci(e['null_range'])}", f"{e['p']:.3f}", bias])
    return [f"Three estimates of what each cell's own LR gains over one global LR (accuracy points, {b['n']} cells), "
            f"each beside its null: the same estimator on {b['n_null']} landscapes simulated from the fitted pooled "
            f"curve with every cell sharing one optimum, at the measured seed noise (sd {b['sigma_seed']:.2f} points, "
            f"{b['sigma_df']} df; the smoothed fit's residual sd {b['sigma_model']:.2f}). p: the share of null values at "
            "or above the estimate.", "",
            *md_table(["estimate", "gain", "null: mean [95% range]", "p", "how it is biased"], rows), "",
            gain_sentence(b, v["gain_margin"]), ""]


def underpowered(v: Mapping[str, Any]) -> str:
    """The power words where no simulated distortion reaches 80%: the largest one simulated and
    the best power there.

    >>> underpowered({"power_curve": [{"tau": 1.0, "regret": 0.0, "p_distorted": 0.02},
    ...                               {"tau": 0.78, "regret": 1.94, "p_distorted": 0.065}]})
    'under 80% power at every distortion simulated, down to a true tau of 0.78 (1.94 points of regret; power there 6%)'
    """
    curve = v.get("power_curve") or []
    if not curve:
        return "under 80% power at every distortion simulated"
    last = min(curve, key=lambda r: (r["tau"], -r["regret"]))
    return (f"under 80% power at every distortion simulated, down to a true tau of {last['tau']:.2f} "
            f"({last['regret']:.2f} points of regret; power there {100 * last['p_distorted']:.0f}%)")


def verdict_line(v: Mapping[str, Any]) -> str:
    """The one-line verdict of the distortion test, with its power beside it."""
    d, det = v["distortion"], v.get("detectable")
    power = (f"80% power from a true tau of {det['tau']:.2f} (mean regret {det['regret']:.2f} points)" if det
             else underpowered(v))
    return (f"**One global LR against each cell's own: {d['verdict']}** (gap {d['gap']:+.3f}{_ci(d['ci95'], '+.3f')}; "
            f"this design has {power}).")


def distortion_lines(v: Mapping[str, Any]) -> list[str]:
    """The test on one global LR and on the positive controls, with the verdict."""
    rows = [["one global LR (the test)", f"{v['distortion']['tau']:.3f}", f"{v['distortion']['floor']:.3f}",
             f"{v['distortion']['gap']:+.3f}{_ci(v['distortion']['ci95'], '+.3f')}", v["distortion"]["verdict"]]]
    r = v.get("recipe")
    if r and "error" not in r:
        rows.append([f"the benchmark's recipe ({', '.join(r['names'])}; {r['n']} cells)", f"{r['tau']:.3f}",
                     f"{r['floor']:.3f}", f"{r['gap']:+.3f}{_ci(r['ci95'], '+.3f')}", r["verdict"]])
    rows += [[c["arm"], f"{c['tau']:.3f}", f"{c['floor']:.3f}", f"{c['gap']:+.3f}{_ci(c['ci95'], '+.3f')}",
              "detected" if c["detected"] else "not detected"] for c in v["controls"]]
    lines = ["The gap is the two rankings' own seed-to-seed tau (the seed floor, averaged over the two arms) minus "
             "the tau between them, on single runs (one arm's seed against the other's other seed): it counts the "
             "pairs of cells the two arms order differently on both seeds alike, so seed noise alone leaves it at 0. "
             f"95% intervals over cells (bootstrap). The verdict is \"distorted\" where the interval excludes 0, "
             f"\"equivalent within {v['tau_margin']:g}\" where the 90% interval lies inside ±{v['tau_margin']:g} and the "
             "instrument detected a positive control, \"undetermined at this design\" otherwise. Positive controls: "
             "LR choices whose distortion this landscape's own data show.", "",
             *md_table(["fixed arm", "tau vs each cell's own LR", "seed floor", "gap [95% CI]", "verdict"], rows), "",
             verdict_line(v), ""]
    if r and "error" in r:
        lines += [f"The recipe arm ({', '.join(r['names'])}) is not tested: {r['error']}.", ""]
    if r and r.get("missing"):
        lines += [f"The recipe arm leaves out {', '.join(r['missing'])}: no store yet; its cells join the arm once run.",
                  ""]
    if not v["controls_detected"]:
        lines += ["The test detected none of its positive controls: at this design it cannot tell a distortion we know "
                  "is there from seed noise, so this report makes no claim that the ranking is not distorted.", ""]
    return lines


def _spread_words(v: Mapping[str, Any]) -> str:
    """What the power curve spreads (:func:`~.power.with_pattern`), in words."""
    sp = v.get("spread", {"pattern": "fitted"})
    if sp["pattern"] == "fitted":
        return "the cells' fitted optima spread about their median by a factor (0: one shared optimum; 1: as fitted)."
    what = ("the cells' raw best LRs (mean over seeds)" if sp["pattern"] == "raw" else
            "evenly spaced optima (normal scores, in the order of the cells' raw best LRs, which coincide)")
    return (f"the cells' optima set about the fitted median by a factor times {what}, sd {sp['sd']:.2f} octaves at "
            f"factor 1 (0: one shared optimum): the fitted optima barely differ (sd {sp['fitted_sd']:.2f} "
            "octaves, under a quarter grid step), so spreading them by any factor would barely move the ranking.")


def power_lines(v: Mapping[str, Any]) -> list[str]:
    """The power curve, the null's false-alarm rate, and the planner's designs."""
    f, null = v["fitted"], v["null_rates"]
    rows = [[f"{r['factor']:g}", f"{r['tau']:.3f}", f"{r['regret']:.2f}", f"{100 * r['p_distorted']:.0f}%",
             f"{100 * r['p_equivalent']:.0f}%"] for r in v["power_curve"]]
    lines = [f"Power by simulation from the smoothed landscape at the measured seed noise, {_spread_words(v)} "
             "True tau and regret are the noise-free landscape's, at the best common grid LR.", "",
             *md_table(["spread factor", "true tau", "true regret (points)", "called distorted",
                        "called equivalent"], rows), "",
             f"As fitted, one global LR's true distortion is tau {f['tau']:.3f} (regret {f['regret']:.2f} points). "
             f"With one shared optimum the test called {100 * null['distorted']:.0f}% of simulated landscapes "
             f"distorted (nominal 2.5%) and {100 * null['equivalent']:.0f}% equivalent.", ""]
    p = v["plan"]
    if p["factor"] is None:
        return lines + [f"No spread simulated gives a true tau of {p['target_tau']:g}: no design planned.", ""]
    rows = [[str(d["cells"]), str(d["seeds"]), str(d["runs"]), f"{d['true_tau']:.3f}", f"{100 * d['power']:.0f}%"]
            for d in p["designs"]]
    best = p["cheapest"]
    verdict = (f"the cheapest design reaching {100 * v['power_target']:.0f}%: {best['cells']} cells x {best['seeds']} "
               f"seeds ({best['runs']} runs)." if best else
               f"no design tried reaches {100 * v['power_target']:.0f}%.")
    return lines + [f"Designs to detect a true tau of {p['target_tau']:g} (here spread factor {p['factor']:.2f}) at the "
                    "measured noise, each cell on its grid here; more cells are drawn from the fitted ones and spread "
                    f"until their own true tau is the target; {verdict}", "",
                    *md_table(["cells", "seeds", "runs", "true tau", "power"], rows), ""]
