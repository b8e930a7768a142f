"""Markdown tables of the report (``report.md``): job status, statistics, the top-K% curve."""

from __future__ import annotations

from typing import Any

from ..ranking.text import fmt
from ..store.job_status import Status
from ..store.read import StoreData

__all__ = ["md_table", "status_table", "numbers_table", "topk_table"]

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
                      "mean acc., trained (%)", "train time (min)"], rows)


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
                 f"mean accuracy A {fmt(result['mean_a'], 2)}%, B {fmt(result['mean_b'], 2)}%.")
    return lines


def topk_table(result: dict) -> list[str]:
    noise = result["seed_noise"]
    bands = {s: {e["k_percent"]: e for e in (noise.get(s) or {}).get("topk", [])} for s in ("a", "b")}
    prec = {e["k_percent"]: e["precision"] for e in result["precision_at_k"]}
    rows = [[e["k_percent"], e["n"], fmt(e["kendall_tau"]),
             *(fmt(bands[s].get(e["k_percent"], {}).get("kendall_tau")) for s in ("a", "b")),
             fmt(prec.get(e["k_percent"]), 2)] for e in result["topk"]]
    return md_table(["top K%", "n", "tau A,B", "seed-noise tau A", "seed-noise tau B", "precision@K"], rows)
