"""Markdown tables of the report (``report.md``): job status, statistics, the top-K% curve."""

from __future__ import annotations

from typing import Any

import math

import numpy as np
import pandas as pd

from ...ranking.bands import MIN_TOPK_ROWS
from ...ranking.rank import pearson
from ...ranking.text import few_rows_note, fmt
from ...store.job_status import Status
from ...store.read import StoreData

__all__ = ["md_table", "status_table", "numbers_table", "mean_basis", "topk_table", "pearson_note", "LOW_CELLS_SHARE"]

#: the share of cells (the lowest by A) whose removal :func:`pearson_note` tries
LOW_CELLS_SHARE = 0.1

#: the status columns of the job table, in order
_STATUS_COLUMNS = (Status.DONE, Status.DIVERGED, Status.FAILED, Status.PENDING, Status.RUNNING)


def md_table(header: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def status_table(store: StoreData, labels: list[str]) -> list[str]:
    jobs = store.jobs
    rows = []
    for label in labels:
        j = jobs[jobs["protocol"] == label]
        count = j["status"].value_counts()
        done = j[(j["status"] == Status.DONE) & ~j["degenerate"]]
        rows.append([label, len(j), *(int(count.get(s, 0)) for s in _STATUS_COLUMNS),
                     int(j["degenerate"].sum()), fmt(done["test_accuracy"].mean() if len(done) else None, 2),
                     fmt(j["wall_time_s"].sum() / 60, 1)])
    return md_table(["protocol", "jobs", *map(str, _STATUS_COLUMNS), "degenerate",
                      "mean acc. of trained runs, duplicates included (%)", "train time (min)"], rows)


def numbers_table(result: dict) -> list[str]:
    ci = result["ci"]
    rows = [[name, fmt(result[key], d), "" if not ci.get(key) else f"[{fmt(ci[key][0], d)}, {fmt(ci[key][1], d)}]"]
            for name, key, d in [("Kendall tau-b", "kendall_tau", 3), ("Spearman rho", "spearman", 3),
                                 ("Pearson r", "pearson", 3), ("mean diff (B - A)", "mean_diff", 2),
                                 ("median diff (B - A)", "median_diff", 2)]]
    c = result["counts"]
    lines = md_table(["statistic", "value", "95% CI"], rows)
    lines.append("")
    lines.append(f"Matched {c['matched']} architectures (only in A: {c['only_a']}, only in B: {c['only_b']}); "
                 f"with a diverged run: A {c['diverged_a']}, B {c['diverged_b']}; degenerate: {c['degenerate']}; "
                 f"mean accuracy A {fmt(result['mean_a'], 2)}%, B {fmt(result['mean_b'], 2)}% {mean_basis(result)}.")
    return lines


def mean_basis(result: dict) -> str:
    """What a comparison's means average over: its ``n`` cells, or, where isomorphic duplicates
    were dropped, its ``n`` isomorphism classes (so they differ from a mean over every cell).

    >>> mean_basis({"n": 10, "counts": {"isomorphic_dropped": {"0_10_211": "1_10_021"}}})
    'over 10 isomorphism classes (1 isomorphic duplicate left out; a mean over every cell differs)'
    >>> mean_basis({"n": 11, "counts": {}})
    'over 11 cells'
    """
    dropped = len((result.get("counts") or {}).get("isomorphic_dropped") or {})
    if not dropped:
        return f"over {result['n']} cells"
    return (f"over {result['n']} isomorphism classes ({dropped} isomorphic duplicate{'s' if dropped > 1 else ''} "
            "left out; a mean over every cell differs)")


def _band(entry: dict) -> str:
    ci = entry.get("ci")
    return "" if not ci else f"[{fmt(ci[0])}, {fmt(ci[1])}]"


def topk_table(result: dict) -> list[str]:
    """The top-K% table: every column on the same cells (A's best K%), tau with its bootstrap
    band, the seed noise of both protocols on those cells, precision@K beside its seed-noise
    baseline; rows of fewer than :data:`~nasrescale.ranking.bands.MIN_TOPK_ROWS` cells left out
    (a sentence names them)."""
    noise = result["seed_noise"]
    bands = {s: {e["k_percent"]: e for e in (noise.get(s) or {}).get("topk", [])} for s in ("a", "b")}
    prec = {e["k_percent"]: e["precision"] for e in result["precision_at_k"]}
    rows = []
    for e in (e for e in result["topk"] if e["n"] >= MIN_TOPK_ROWS):
        k = e["k_percent"]
        seed = [bands[s].get(k, {}) for s in ("a", "b")]
        rows.append([k, e["n"], fmt(e["kendall_tau"]), _band(e),
                     *(f"{fmt(b.get('kendall_tau'))} {_band(b)}".strip() for b in seed),
                     fmt(prec.get(k), 2), *(fmt(b.get("precision"), 2) for b in seed)])
    lines = md_table(["top K%", "n", "tau A,B", "95% band", "seed-noise tau A [band]", "seed-noise tau B [band]",
                      "precision@K", "seed-noise precision A", "seed-noise precision B"], rows)
    note = few_rows_note(result["topk"])
    return lines + ([""] + [note.replace("not read as figures", "left out of the table (grey in the plot)")]
                    if note else [])


def pearson_note(merged: pd.DataFrame, result: dict, share: float = LOW_CELLS_SHARE) -> str:
    """A sentence when a few low cells drive Pearson r: r without the lowest ``share`` of the
    cells by A's accuracy, when it falls by more than 0.2 (empty otherwise).

    >>> frame = pd.DataFrame({"a": [10.0, 60, 61, 62, 63, 64, 65, 66, 67, 68],
    ...                       "b": [9.0, 67, 60, 66, 61, 65, 62, 64, 63, 60]})
    >>> pearson_note(frame, {"pearson": 0.99})[:64]
    'Pearson r 0.990 over all 10 cells is -0.391 without the 1 lowest'
    """
    n = len(merged)
    k = max(1, math.ceil(n * share))
    if result.get("pearson") is None or n - k < 3:
        return ""
    keep = merged.iloc[np.argsort(merged["a"].to_numpy(float), kind="stable")[k:]]
    rest = pearson(keep["a"], keep["b"])
    if rest is None or result["pearson"] - rest <= 0.2:
        return ""
    return (f"Pearson r {fmt(result['pearson'])} over all {n} cells is {fmt(rest)} without the {k} lowest by A's "
            "accuracy: a few low cells drive it; read the rank statistics.")
