"""What a re-evaluation at its budget can and cannot say about the paper's NB201 claims.

Chen et al. (ICLR 2024, §4.3, Fig. 4 and Fig. 9) report, against NAS-Bench-201's default protocol
at 200 epochs: (1) a mean accuracy gain of +0.44 points on CIFAR-10 (+1.24 on CIFAR-100, +2.09
on ImageNet16-120) from architecture-aware init and LR; (2) rankings that move, most among the
best cells, by more than seed noise moves them; (3) smaller pairwise gaps between cells.
:func:`claims_section` turns a report's own numbers (the protocol pair's comparison, each
protocol's comparison with the reference, and, where the pipeline names one, the calibrated
proxy validity of its budget) into one sentence per claim, saying where the budget's noise is
too large to tell.

>>> pair = {"mean_diff": 0.3, "ci": {"mean_diff": [-0.2, 0.8]}, "kendall_tau": 0.5, "n": 40,
...         "seed_noise": {"a": {"kendall_tau": 0.8}, "b": {"kendall_tau": 0.7}},
...         "topk": [{"k_percent": 10, "kendall_tau": 0.1}],
...         "seed_noise_topk": None}
>>> "cannot tell" in gain_claim(pair, "cifar10")
True
"""

from __future__ import annotations

from typing import Any, Mapping

from ..ranking.text import fmt

__all__ = ["PAPER_GAIN", "claims_pair", "gain_claim", "ranking_claim", "top_claim", "proxy_claim", "claims_section"]

#: the paper's mean gain in accuracy points over the benchmark's 200-epoch protocol (§4.3)
PAPER_GAIN = {"cifar10": 0.44, "cifar100": 1.24, "imagenet16_120": 2.09}


def _ci(pair: Mapping[str, Any], key: str) -> tuple[float, float] | None:
    ci = (pair.get("ci") or {}).get(key)
    return (float(ci[0]), float(ci[1])) if ci and None not in ci else None


def gain_claim(pair: Mapping[str, Any], dataset: str | None) -> str:
    """Claim (1): the mean gain (B - A) with its CI, beside the paper's figure."""
    gain, ci = pair.get("mean_diff"), _ci(pair, "mean_diff")
    paper = PAPER_GAIN.get(str(dataset))
    if gain is None or ci is None:
        return "Mean gain: not enough finished cells for a confidence interval."
    text = f"Mean gain of B over A: {gain:+.2f} points, 95% CI [{ci[0]:+.2f}, {ci[1]:+.2f}] over {pair.get('n')} cells"
    if paper is not None:
        text += f"; the paper reports +{paper:.2f} at 200 epochs"
    if ci[0] > 0:
        verdict = "B trains these cells better at this budget"
    elif ci[1] < 0:
        verdict = "B trains these cells worse at this budget"
    else:
        verdict = "this budget cannot tell a gain from none"
    width = (ci[1] - ci[0]) / 2
    if paper is not None and width > paper:
        verdict += f" (the CI's half-width {width:.2f} exceeds the paper's effect, so it cannot tell +{paper:.2f} from 0)"
    return f"{text}: {verdict}."


def ranking_claim(pair: Mapping[str, Any]) -> str:
    """Claim (2): tau between the protocols against tau between each protocol's seeds."""
    tau, ci = pair.get("kendall_tau"), _ci(pair, "kendall_tau")
    noise = [((pair.get("seed_noise") or {}).get(side) or {}).get("kendall_tau") for side in ("a", "b")]
    noise = [n for n in noise if n is not None]
    if tau is None:
        return "Ranking: not enough finished cells."
    text = f"Kendall tau between A and B: {fmt(tau)}" + (f" [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else "")
    if not noise:
        return text + "; with one seed there is no noise floor to compare it with."
    floor = min(noise)
    text += f"; between one protocol's seeds: {', '.join(fmt(n) for n in noise)}"
    if ci is not None and ci[1] < floor:
        return text + ": the protocols rank the cells differently by more than seed noise does."
    if tau < floor:
        return text + ": below the seed-vs-seed tau, but its CI reaches it; not clearly beyond seed noise."
    return text + ": the protocols agree about as well as two seeds do; no ranking change beyond noise."


def top_claim(pair: Mapping[str, Any], k: int = 10) -> str:
    """Claim (2'): the change is largest among the best cells (tau within the top K%)."""
    at = {e.get("k_percent"): e.get("kendall_tau") for e in pair.get("topk") or []}
    whole, top = at.get(100, pair.get("kendall_tau")), at.get(k)
    if top is None:
        return f"Top {k}%: too few cells for a tau."
    band = ((pair.get("seed_noise") or {}).get("a") or {}).get("topk") or []
    seed_top = next((e.get("kendall_tau") for e in band if e.get("k_percent") == k), None)
    text = f"Within A's top {k}%: tau {fmt(top)} (all cells: {fmt(whole)})"
    if seed_top is not None:
        text += f", seed-vs-seed {fmt(seed_top)}"
    if whole is not None and top < whole:
        return text + ": rankings move more among the best cells, as the paper finds (few cells: a noisy tau)."
    return text + ": no sign that rankings move more among the best cells at this budget."


def proxy_claim(proxy: Mapping[str, Any] | None, per_protocol: Mapping[str, float | None]) -> str:
    """How far this budget's ranking can stand in for the benchmark's (the calibration's tau)."""
    here = ", ".join(f"{label} {fmt(tau)}" for label, tau in per_protocol.items()) or "none (the pipeline names no reference)"
    if not proxy:
        return f"Proxy validity: the pipeline names no calibration; tau against the benchmark here: {here}."
    return (f"Proxy validity: at this budget the default protocol ranks the calibration's {proxy.get('cells')} cells "
            f"with tau {fmt(proxy.get('kendall_tau'))} against the benchmark (seed vs seed "
            f"{fmt(proxy.get('seed_vs_seed_tau'))}; `{proxy.get('source')}`); here, against the benchmark: {here}. "
            "Claims about 200-epoch rankings carry over only as far as that tau.")


def claims_pair(pairs: Mapping[str, Mapping[str, Any]], protocols: Any) -> Mapping[str, Any] | None:
    """The protocol pair the claims are read from: the baseline (A) against the first protocol
    whose LR rule is the paper's ``path_depth`` (B), else the first pair (``None`` without one).

    ``pairs`` maps ``"B vs A"`` to a comparison with labels ``a`` and ``b``; ``protocols`` is the
    pipeline's ``[protocols]`` table (label -> its resolved keys).

    >>> pairs = {"elr_warmup vs default": {"a": "default", "b": "elr_warmup"},
    ...          "rescaled vs default": {"a": "default", "b": "rescaled"}}
    >>> claims_pair(pairs, {"elr_warmup": {"lr_rule": "fixed"}, "rescaled": {"lr_rule": "path_depth"}})["b"]
    'rescaled'
    >>> claims_pair(pairs, None)["b"]  # no LR rules recorded: the first pair
    'elr_warmup'
    """
    tables = protocols if isinstance(protocols, Mapping) else {}

    def rule(label: Any) -> Any:
        table = tables.get(label)
        return table.get("lr_rule") if isinstance(table, Mapping) else None

    first = next(iter(pairs.values()), None)
    if first is None:
        return None
    baseline = first.get("a")
    return next((p for p in pairs.values() if p.get("a") == baseline and rule(p.get("b")) == "path_depth"
                 and rule(baseline) != "path_depth"), first)


def claims_section(pair: Mapping[str, Any] | None, reference: Mapping[str, Mapping[str, Any]],
                   dataset: str | None, proxy: Mapping[str, Any] | None) -> list[str]:
    """The report's section: one bullet per claim (empty without a protocol pair)."""
    if not pair:
        return []
    per_protocol = {label: r.get("kendall_tau") for label, r in reference.items()}
    bullets = [gain_claim(pair, dataset), ranking_claim(pair), top_claim(pair), proxy_claim(proxy, per_protocol)]
    return ["## What this budget can say about the paper's claims", "",
            f"A = {pair.get('a')}, B = {pair.get('b')}; differences are B - A. The paper's figures are Chen et al., "
            "ICLR 2024, §4.3 (Fig. 4, Fig. 9), at the benchmark's full budget.", "",
            *[f"- {b}" for b in bullets], ""]
