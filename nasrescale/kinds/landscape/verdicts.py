"""The landscape report's calibrated verdicts: the oracle-gain bracket against its null, the
ranking-distortion test with its power and positive controls, and the design that would decide.

:func:`verdicts` computes them (JSON-able) from a landscape's finished cells; the report prints
them (:mod:`.verdict_text`). The stated sizes are module constants, named in every sentence:
:data:`TAU_MARGIN` (the equivalence margin of the distortion gap, in tau), :data:`GAIN_MARGIN`
(the size a per-cell LR's gain must be shown to stay below before a report says it gains less,
in accuracy points) and :data:`TARGET_TAU` (the true distortion the planner sizes designs for).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .cells import CellLandscape
from .inference import bracket, distortion, fit_grid, null_truth, truth_of, verdict
from .power import POWER, detectable, plan, power_at, power_curve, true_distortion, with_pattern
from .sim import CHANCE, arm_scores, fixed_scores, to_grid
from .stats import arm_scores as rule_arm_scores

__all__ = ["TAU_MARGIN", "GAIN_MARGIN", "TARGET_TAU", "N_SIM", "verdicts"]

#: equivalence margin of the distortion gap (tau)
TAU_MARGIN = 0.05
#: a per-cell LR "gains less than" this many points only where the model-based interval says so
GAIN_MARGIN = 0.5
#: the true tau (fixed LR against each cell's own) the planner sizes designs to detect
TARGET_TAU = 0.90
#: simulated landscapes per null, per point of the power curve and per design, in a report
N_SIM = 200


def _controls(cells: Sequence[CellLandscape], g: Any, per_octave: int, pooled_k: float,
              lr: Callable[[float], float]) -> list[tuple[str, np.ndarray]]:
    """The known distortions every report tests: the common grid LR farthest from the pooled
    optimum, the LR 0.1 of NAS-Bench-201's recipe where the grid has it, and the rule's LR."""
    common = g.ks[g.avail.all(axis=0)] if g.avail.all(axis=0).any() else g.ks
    far = int(common[np.argmax(np.abs(common - pooled_k))])
    out = [(f"one LR {lr(far):.3g} (the common grid LR farthest from the pooled optimum)", fixed_scores(g, far))]
    bench = [int(k) for k in common if abs(lr(int(k)) - 0.1) < 1e-9 and int(k) != far]
    if bench:
        out.append(("one LR 0.1 (NAS-Bench-201's recipe)", fixed_scores(g, bench[0])))
    rule = np.array(rule_arm_scores(cells, per_octave)["rule"]["seeds"], float)
    out.append(("the rule's LR (c x path-depth scale)", np.where(np.isnan(rule), CHANCE, rule)[:, :g.Y.shape[2]]))
    return out


def _recipe(recipe: dict[str, Any] | None, oracle: np.ndarray, rng: np.random.Generator, n_boot: int,
            detected: bool) -> dict[str, Any] | None:
    """The recipe arm's distortion test on the cells it has (:mod:`.recipe`), or why there is none."""
    if not recipe:
        return None
    if "error" in recipe or len(recipe["rows"]) < 3:
        return {"names": recipe["names"], "n": len(recipe.get("rows", [])),
                "error": recipe.get("error", "fewer than 3 of the landscape's cells have every seed's run"),
                **({"missing": recipe["missing"]} if recipe.get("missing") else {})}
    d = distortion(recipe["scores"], oracle[recipe["rows"]], rng, n_boot)
    return {"names": recipe["names"], "n": len(recipe["rows"]), **d,
            "verdict": verdict(d["ci95"], d["ci90"], TAU_MARGIN, detected),
            **({"missing": recipe["missing"]} if recipe.get("missing") else {})}


def verdicts(cells: Sequence[CellLandscape], per_octave: int, lr: Callable[[float], float], n_sim: int = 200,
             n_boot: int = 2000, seed: int = 0, recipe: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Everything :mod:`.verdict_text` prints (``None`` below 2 seeds); ``n_sim``: the simulated
    landscapes per null, per point of the power curve and per design the planner tries."""
    g = to_grid(cells, per_octave)
    if g.Y.shape[2] < 2:
        return None
    def rng(stage: int) -> np.random.Generator:  # one stream per stage: adding an arm moves no other figure
        return np.random.default_rng([seed, stage])

    out: dict[str, Any] = {"bracket": bracket(cells, per_octave, rng(0), n_null=n_sim),
                           "tau_margin": TAU_MARGIN, "gain_margin": GAIN_MARGIN, "power_target": POWER}
    fit, ref = fit_grid(g)
    sigma = out["bracket"]["sigma_seed"]  # the model-free seed noise every simulation uses
    pooled_k = (fit.pooled_optimum() + ref) * per_octave
    arms = arm_scores(g)
    controls = []
    for i, (name, scores) in enumerate(_controls(cells, g, per_octave, pooled_k, lr)):
        d = distortion(scores, arms["oracle"], rng(10 + i), n_boot)
        controls.append({"arm": name, **d, "detected": d["ci95"][0] > 0})
    detected = any(c["detected"] for c in controls)
    d = distortion(arms["global"], arms["oracle"], rng(1), n_boot)
    d["verdict"] = verdict(d["ci95"], d["ci90"], TAU_MARGIN, detected)
    out["recipe"] = _recipe(recipe, arms["oracle"], rng(2), n_boot, detected)
    truth, spread = with_pattern(truth_of(fit, ref, g, sigma), g)
    curve = power_curve(truth, per_octave, n_sim, rng(3), TAU_MARGIN)
    null = power_at(null_truth(fit, ref, g, sigma), per_octave, n_sim, rng(4), TAU_MARGIN)
    out.update({"distortion": d, "controls": controls, "controls_detected": detected,
                "fitted": true_distortion(truth), "spread": spread, "power_curve": curve, "null_rates": null,
                "detectable": detectable(curve),
                "plan": plan(truth, per_octave, TARGET_TAU, n_sim, rng(5), TAU_MARGIN)})
    return out
