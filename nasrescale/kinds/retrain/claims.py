"""What a re-evaluation at its budget can and cannot say about the paper's NB201 claims.

Chen et al. (ICLR 2024, §4.3, Fig. 4 and Fig. 9) re-train NAS-Bench-201 cells with their
architecture-aware init and LRs, "and train networks till converge" (§4.3), and report against
the benchmark's published accuracies: (1) "on average we outperform the test accuracy in
NAS-Bench-201 by 0.44 on CIFAR-10, 1.24 on CIFAR-100, and 2.09 on ImageNet16-120" (§4.3);
(2) rankings that move, most among the best cells, by more than seed noise moves them (Fig. 4
middle, Fig. 9); (3) smaller pairwise gaps between cells. :func:`claims_section` turns a
report's own numbers (the protocol pair's comparison, its split by the LR the rescaled protocol
used, each protocol's comparison with the reference, and, where the pipeline names one, the
calibrated proxy validity of its budget) into one sentence per claim, each saying what its
numbers show and no more; the verdicts themselves are :mod:`nasrescale.report.common.claim_verdicts`'.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...ranking.bands import MIN_TOPK_ROWS
from ...ranking.text import fmt
from ...scaling.lr_rules import scales_per_arch
from ...store.record import ProtocolRecord
from ...report.common.seed_floor import floor_clause
from ...report.common.claim_verdicts import effect_claim, gain_claim, noise_floor, pair_ci, ranking_claim

__all__ = ["claims_pair", "split_claim", "top_claim", "proxy_claim", "claims_section"]


def split_claim(split: Mapping[str, Any] | None) -> str:
    """Where the ranking change sits: tau between the protocols on the cells whose B-LR is at or
    above A's LR and on those below it, each beside the seed noise on the same cells; a group of
    fewer than :data:`MIN_TOPK_ROWS` cells gets no tau, as everywhere in the report.

    >>> split = {"reference_lr": 0.1, "groups": {"at or above": {"n": 7, "kendall_tau": 0.43},
    ...                                          "below": {"n": 3, "kendall_tau": 1.0}}}
    >>> split_claim(split)
    'Split by the LR B used: at or above 0.1: 7 cells, too few for a tau (fewer than 10); below 0.1: 3 cells, too few for a tau (fewer than 10).'
    """
    if not split:
        return ""
    parts = []
    for name, r in split["groups"].items():
        ci, noise = pair_ci(r, "kendall_tau"), noise_floor(r)
        if r.get("kendall_tau") is None or (r.get("n") or 0) < MIN_TOPK_ROWS:  # the report's own rule
            parts.append(f"{name} {split['reference_lr']:g}: {r.get('n')} cells, too few for a tau "
                         f"(fewer than {MIN_TOPK_ROWS})")
            continue
        floor = floor_clause(r.get("per_run_kendall_tau"), noise, ci)
        if floor:  # like for like: single runs against single runs
            parts.append(f"on the {r.get('n')} cells where B's LR is {name} {split['reference_lr']:g}, tau of the "
                         f"means {fmt(r['kendall_tau'])}" + (f" [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else "")
                         + f"; {floor}")
            continue
        level = ""
        if noise and ci is not None:
            level = ": below seed noise" if ci[1] < min(noise) else ": its CI reaches the seed level"
        parts.append(f"on the {r.get('n')} cells where B's LR is {name} {split['reference_lr']:g}, tau "
                     f"{fmt(r['kendall_tau'])}" + (f" [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else "")
                     + (f" against seed-vs-seed {', '.join(fmt(n) for n in noise)}" if noise else "") + level)
    return "Split by the LR B used: " + "; ".join(parts) + "."


def top_claim(pair: Mapping[str, Any], k: int = 10) -> str:
    """Claim (2'): the change is largest among the best cells: tau within A's top K% for the
    smallest K from ``k`` up whose subset has :data:`MIN_TOPK_ROWS` cells, with its band and
    the seed noise on the same cells (a band below the all-cell tau reads as more movement only
    when it is also below the seed-vs-seed tau there).

    >>> pair = {"kendall_tau": 0.8, "topk": [{"k_percent": 30, "n": 13, "kendall_tau": 0.23, "ci": [-0.29, 0.63]}],
    ...         "seed_noise": {"a": {"topk": [{"k_percent": 30, "kendall_tau": 0.19}]}}}
    >>> top_claim(pair).endswith("the best cells rank noisily, not clearly differently under B.")
    True
    >>> pair["seed_noise"]["a"]["topk"][0]["kendall_tau"] = 0.7
    >>> top_claim(pair).endswith("beyond seed noise, as the paper finds.")
    True
    """
    entries = sorted((e for e in pair.get("topk") or [] if e.get("k_percent", 0) >= k), key=lambda e: e["k_percent"])
    at = next((e for e in entries if e.get("n", MIN_TOPK_ROWS) >= MIN_TOPK_ROWS), None)
    whole = next((e.get("kendall_tau") for e in pair.get("topk") or [] if e.get("k_percent") == 100),
                 pair.get("kendall_tau"))
    if at is None or at.get("kendall_tau") is None or at["k_percent"] == 100:
        return f"Top {k}%: too few cells for a tau (fewer than {MIN_TOPK_ROWS})."
    band = ((pair.get("seed_noise") or {}).get("a") or {}).get("topk") or []
    seed_top = next((e.get("kendall_tau") for e in band if e.get("k_percent") == at["k_percent"]), None)
    ci = at.get("ci")
    text = (f"Within A's top {at['k_percent']}% ({at.get('n')} cells, the smallest top-K% with {MIN_TOPK_ROWS} or "
            f"more): tau {fmt(at['kendall_tau'])}" + (f" [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else "")
            + f" (all cells: {fmt(whole)})" + (f", seed-vs-seed on the same cells {fmt(seed_top)}" if seed_top is not None
                                               else ""))
    if whole is None or at["kendall_tau"] >= whole:
        return text + ": no sign that rankings move more among the best cells at this budget."
    if ci is not None and ci[1] < whole:
        if seed_top is not None and ci[1] >= seed_top:  # the seeds agree no better on these cells
            return text + (": lower than over all cells, but two seeds of A agree no better on the same cells: "
                           "the best cells rank noisily, not clearly differently under B.")
        return text + ": rankings move more among the best cells, beyond seed noise, as the paper finds."
    return text + ": lower than over all cells, but its band reaches the all-cell tau; not clearly more movement."


def _taus_here(per_protocol: Mapping[str, Mapping[str, Any] | float | None]) -> str:
    """Each protocol's tau against the benchmark; each with its cell count where the counts differ,
    so that a tau on a few cells is not read beside one on many as if alike.

    >>> _taus_here({"default": {"kendall_tau": 0.73, "n": 51}, "tuned": {"kendall_tau": 0.49, "n": 15}})
    'default 0.730 (51 cells), tuned 0.490 (15 cells)'
    >>> _taus_here({"default": {"kendall_tau": 0.73, "n": 55}, "tuned": {"kendall_tau": 0.49, "n": 55}})
    'default 0.730, tuned 0.490'
    """
    taus = {label: (r.get("kendall_tau") if isinstance(r, Mapping) else r) for label, r in per_protocol.items()}
    counts = {label: r["n"] for label, r in per_protocol.items() if isinstance(r, Mapping) and r.get("n") is not None}
    differ = len(set(counts.values())) > 1
    return ", ".join(f"{label} {fmt(tau)}" + (f" ({counts.get(label)} cells)" if differ and label in counts else "")
                     for label, tau in taus.items())


def proxy_claim(proxy: Mapping[str, Any] | None, per_protocol: Mapping[str, Mapping[str, Any] | float | None],
                baseline: str | None = None) -> str:
    """How far this budget's ranking can stand in for the benchmark's: the calibration's
    in-sample tau beside this study's out-of-sample one (its baseline against the benchmark).

    >>> proxy_claim({"source": "nosuch:x", "missing": "no result store at 'res/nosuch'"}, {"default": 0.7})
    "Proxy validity: the calibration the pipeline names (`nosuch:x`) cannot be read (no result store at 'res/nosuch'), so this budget's validity is not measured; tau against the benchmark here: default 0.700."
    """
    here = _taus_here(per_protocol)
    if not proxy:
        return f"Proxy validity: the pipeline names no calibration; tau against the benchmark here: {here}."
    if proxy.get("missing"):
        return (f"Proxy validity: the calibration the pipeline names (`{proxy.get('source')}`) cannot be read "
                f"({proxy['missing']}), so this budget's validity is not measured; tau against the benchmark "
                f"here: {here}.")
    text = (f"Proxy validity: the calibration (`{proxy.get('source')}`) validated the default protocol only, choosing "
            f"this budget as the best of its candidates on {proxy.get('n') or proxy.get('cells')} cells: tau "
            f"{fmt(proxy.get('kendall_tau'))} against the benchmark there (in-sample; seed vs seed "
            f"{fmt(proxy.get('seed_vs_seed_tau'))})")
    base = per_protocol.get(baseline) if baseline else None
    if isinstance(base, Mapping) and base.get("kendall_tau") is not None:
        text += f"; out of sample, on this study's {base.get('n')} cells, {baseline} has tau {fmt(base['kendall_tau'])}"
    return (text + f". Against the benchmark here: {here}. Claims about 200-epoch rankings carry over only as far "
            "as those taus, and for the other protocols this budget's validity is not measured.")


def claims_pair(pairs: Mapping[str, Mapping[str, Any]],
                protocols: Mapping[str, ProtocolRecord] | None) -> Mapping[str, Any] | None:
    """The protocol pair the claims are read from: the baseline (A) against a protocol whose LR
    rule is the paper's ``path_depth`` (B), else the first pair (``None`` without one). Among
    the path-depth protocols, the first whose LR was tuned at the run's budget (``tune``) is
    preferred once it has :data:`MIN_TOPK_ROWS` cells compared; until then, the first one.

    ``pairs`` maps ``"B vs A"`` to a comparison with labels ``a`` and ``b`` and its ``n``;
    ``protocols`` is the run record's protocols (label -> its :class:`~nasrescale.store.record.ProtocolRecord`).

    >>> pairs = {"elr_warmup vs default": {"a": "default", "b": "elr_warmup", "n": 50},
    ...          "rescaled vs default": {"a": "default", "b": "rescaled", "n": 50},
    ...          "principled vs default": {"a": "default", "b": "principled", "n": 12}}
    >>> rules = {label: ProtocolRecord.of(label, table) for label, table in {"elr_warmup": {"lr_rule": "fixed"},
    ...          "rescaled": {"lr_rule": "path_depth"}, "principled": {"lr_rule": "path_depth", "tune": True}}.items()}
    >>> claims_pair(pairs, rules)["b"]
    'principled'
    >>> pairs["principled vs default"]["n"] = 4  # too few cells yet: the untuned one
    >>> claims_pair(pairs, rules)["b"]
    'rescaled'
    >>> claims_pair(pairs, None)["b"]  # no LR rules recorded: the first pair
    'elr_warmup'
    """
    tables = protocols or {}

    def key(label: Any, name: str) -> Any:
        protocol = tables.get(label)
        return getattr(protocol, name) if protocol is not None else None

    first = next(iter(pairs.values()), None)
    if first is None:
        return None
    baseline = first.get("a")
    scaled = [p for p in pairs.values() if p.get("a") == baseline and scales_per_arch(key(p.get("b"), "lr_rule"))
              and not scales_per_arch(key(baseline, "lr_rule"))]
    tuned = [p for p in scaled if key(p.get("b"), "tuned") and (p.get("n") or 0) >= MIN_TOPK_ROWS]
    return next(iter(tuned or scaled), first)


def claims_section(pair: Mapping[str, Any] | None, reference: Mapping[str, Mapping[str, Any]],
                   dataset: str | None, proxy: Mapping[str, Any] | None, *, split: Mapping[str, Any] | None = None,
                   setting: str = "", trends: Sequence[str] = (),
                   effects: Sequence[Mapping[str, Any]] = (), names: Mapping[str, str] | None = None) -> list[str]:
    """The report's section: one bullet per claim (empty without a protocol pair), then one per
    effect of the 2x2 other than the pair itself (``effects``:
    :func:`~nasrescale.kinds.retrain.effects.effect_rows`), then one per budget trend built on the run
    (``trends``: :func:`~nasrescale.kinds.trend.link.trend_claim`)."""
    if not pair:
        return []
    bullets = [gain_claim(pair, dataset, names), ranking_claim(pair, setting), split_claim(split), top_claim(pair),
               proxy_claim(proxy, reference, pair.get("a"))]
    others = [row for row in effects if (row.get("a"), row.get("b")) != (pair.get("a"), pair.get("b"))]
    if others:
        bullets.append("The 2x2, each arm's global LR tuned at this budget (tabulated in the next section):\n"
                       + "\n".join(f"  - {effect_claim(row, names)}" for row in others))
    return ["## What this budget can say about the paper's claims", "",
            f"A = {pair.get('a')}, B = {pair.get('b')}; differences are B - A. The paper's figures are Chen et al., "
            "ICLR 2024, §4.3 (Fig. 4, Fig. 9): against NAS-Bench-201's published accuracies, with networks trained "
            "\"till converge\".", "",
            *[f"- {b}" for b in [*bullets, *trends] if b], ""]
