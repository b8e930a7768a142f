"""README's Results table is the committed reports' (issue 52): every row of it is generated from
results/nb201_cifar10_cpu/report.json and results/nb201_trend_cpu/report.json; the landscape
sentences quote results/landscape_nb201_cpu/report.json. The legend under it defines every
verdict word, cell set and arm, with the resample count `report --help` quotes (issue 63)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import tomllib
from pathlib import Path

import pytest

from nasrescale.cli.main import build_parser
from nasrescale.ranking.boot_counts import DEFAULT_BOOT, VERDICT_BOOT
from nasrescale.report.readme_table import ARMS, END, START, results_table

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("readme_results", ROOT / "tools" / "readme_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_results_table_agrees_with_the_reports():
    text = (ROOT / "README.md").read_text()
    assert START in text and END in text, "README.md has no generated Results table"
    shown = text.split(START, 1)[1].split(END, 1)[0].strip().splitlines()
    expected = _tool().table()
    assert shown == expected, "README.md's Results table is not the reports'; run python tools/readme_results.py"
    assert any("the paper's comparison" in line for line in shown)
    assert any("trend, 24 epochs" in line for line in shown)


def test_readme_landscape_sentences_quote_the_landscape_report():
    """The figures README's Results prose gives for the 6-epoch landscape are its report.json's."""
    text = " ".join((ROOT / "README.md").read_text().split())
    res = json.loads((ROOT / "results" / "landscape_nb201_cpu" / "report.json").read_text())
    s, og, rg = res["slope"], res["headroom"]["oracle-global"], res["headroom"]["rule-global"]
    best = [c["best_lr"] for c in res["per_cell"]]
    quoted = [f"{len(res['per_cell'])} cells",
              f"slope {s['slope']:.2f} [{s['slope_ci'][0]:+.2f}, {s['slope_ci'][1]:+.2f}]",
              f"between {min(best):.2f} and {max(best):.2f}",
              f"gains {og['mean']:+.2f} [{og['ci'][0]:+.2f}, {og['ci'][1]:+.2f}] points over one global LR",
              f"loses {-rg['mean']:.2f} [{-rg['ci'][1]:.2f}, {-rg['ci'][0]:.2f}]",
              f"is {res['ranking']['global-oracle']['tau_single']:.2f} on single runs",
              f"against {res['ranking']['seed_floor']:.2f} between two seeds"]
    missing = [q for q in quoted if q not in text]
    assert not missing, f"README.md's landscape sentences disagree with results/landscape_nb201_cpu/report.json: {missing}"


def test_readme_landscape_verdict_quotes_the_landscape_report():
    """README's verdict on the 6-epoch landscape (bracket, distortion test, power, controls, planner)
    is its report.json's: each figure and word quoted from the calibrated verdicts."""
    text = " ".join((ROOT / "README.md").read_text().split())
    v = json.loads((ROOT / "results" / "landscape_nb201_cpu" / "report.json").read_text())["verdicts"]
    b, d, det = v["bracket"], v["distortion"], v["detectable"]
    best = v["plan"]["cheapest"]
    quoted = [f"in-sample (biased up) {b['in_sample']['estimate']:+.2f}",
              f"(null p {b['cross_fitted']['p']:.2f} and {b['in_sample']['p']:.2f})",
              f"at {b['model']['estimate']:+.2f} [{b['model_ci'][0]:+.2f}, {b['model_ci'][1]:+.2f}]: less than "
              f"{v['gain_margin']:g} points",
              f"verdict is **{d['verdict']}** (gap to the seed floor {d['gap']:+.3f} [{d['ci95'][0]:+.3f}, "
              f"{d['ci95'][1]:+.3f}])",
              f"80 % power only from a true tau of {det['tau']:.2f} ({det['regret']:.2f} points of regret)",
              f"detected {'none' if not v['controls_detected'] else sum(c['detected'] for c in v['controls'])} of its "
              f"{len(v['controls'])} positive controls",
              f"takes {best['cells']} cells x {best['seeds']} seeds",
              f"runs of {v['recipe']['n']} of these cells) is "
              f"{v['recipe']['verdict'].replace(' at this design', '')} too, gap {v['recipe']['gap']:+.3f} "
              f"[{v['recipe']['ci95'][0]:+.3f}, {v['recipe']['ci95'][1]:+.3f}]"]
    assert b["model_ci"][1] < v["gain_margin"]  # README says "less than": only where the interval allows it
    missing = [q for q in quoted if q not in text]
    assert not missing, f"README.md's landscape verdict disagrees with results/landscape_nb201_cpu/report.json: {missing}"


def test_readme_quotes_the_24_epoch_landscape_and_its_comparison():
    """README's sentences on the 24-epoch landscape (cells so far, slope, headroom, the shift from
    the 6-epoch landscape and the change of slope, the distortion verdict) are its report.json's."""
    text = " ".join((ROOT / "README.md").read_text().split())
    res = json.loads((ROOT / "results" / "landscape_nb201_24ep_cpu" / "report.json").read_text())
    s, og, c = res["slope"], res["headroom"]["oracle-global"], res["compare"]
    v = res["verdicts"]
    best, spread = v["plan"]["cheapest"], v["spread"]
    quoted = [f"on all {res['cells']} of its cells" if not res["pending"] else
              f"on the {res['cells']} of its {res['cells'] + res['pending']} cells",
              f"the slope is {s['slope']:+.2f} [{s['slope_ci'][0]:+.2f}, {s['slope_ci'][1]:+.2f}]",
              f"gains {og['mean']:+.2f} [{og['ci'][0]:+.2f}, {og['ci'][1]:+.2f}] points over one global LR",
              f"moves {c['shift_mean']:+.2f} [{c['shift_ci'][0]:+.2f}, {c['shift_ci'][1]:+.2f}] octaves",
              f"changes by {c['slope_diff']:+.2f} [{c['slope_diff_ci'][0]:+.2f}, {c['slope_diff_ci'][1]:+.2f}]",
              f"**{v['distortion']['verdict']}**",
              f"within {spread['fitted_sd']:.2f} octaves (sd) of one LR",
              f"the cells' raw best LRs (sd {spread['sd']:.2f} octaves)",
              f"takes {best['cells']} cells x {best['seeds']} seeds" if best else
              f"no design tried reaches {100 * v['power_target']:.0f} %"]
    assert spread["pattern"] == "raw"  # README says the raw best LRs are spread: only where they are
    assert c["slope_diff_ci"][1] < 1  # README says the interval excludes +1: only where it does
    missing = [q for q in quoted if q not in text]
    assert not missing, f"README.md's 24-epoch sentences disagree with its report.json: {missing}"


def _paper_to_study_ratios() -> list[float]:
    """Each cell's maximal LR with the paper's optimizer over the one with the study's."""
    def measured(run: str) -> dict[str, float]:
        points = json.loads((ROOT / "results" / run / "report.json").read_text())["points"]
        return {p["arch"]: p["measured_lr"] for p in points}

    paper, study = measured("lr_validation_nb201_paper_cpu"), measured("lr_validation_nb201_cpu")
    assert paper.keys() == study.keys()
    return [paper[a] / study[a] for a in paper]


def test_readme_criterion_sentences_quote_the_censored_fits():
    """README's criterion figures (each function once, the censored slope, the path count) are the
    lr_validation reports' own."""
    text = " ".join((ROOT / "README.md").read_text().split())

    def censored(run: str) -> dict:
        return json.loads((ROOT / "results" / run / "report.json").read_text())["censored"]

    bn, nobn = censored("lr_validation_nb201_cpu"), censored("lr_validation_nb201_nobn_cpu")
    every = [f for f in bn["fits"] if f["fit"].startswith("every cell")][0]
    every_nobn = [f for f in nobn["fits"] if f["fit"].startswith("every cell")][0]
    two = nobn["two_predictors"]
    quoted = [f"({bn['cells']} cells: {bn['clones_dropped']} are isomorphic",
              f"slope on the rule's scale is {every['slope']:+.2f} [{every['slope_ci'][0]:+.2f}, "
              f"{every['slope_ci'][1]:+.2f}]",
              f"is {every_nobn['slope']:+.2f} [{every_nobn['slope_ci'][0]:+.2f}, {every_nobn['slope_ci'][1]:+.2f}]",
              f"R^2 {nobn['r2']['path_count']:.2f} against {nobn['r2']['lr_scale']:.2f}",
              f"log P {two['path_count']:+.2f} [{two['path_count_ci'][0]:+.2f}, {two['path_count_ci'][1]:+.2f}] "
              f"with log scale {two['lr_scale']:+.2f} [{two['lr_scale_ci'][0]:+.2f}, {two['lr_scale_ci'][1]:+.2f}]"]
    paper = censored("lr_validation_nb201_paper_cpu")
    every_paper = [f for f in paper["fits"] if f["fit"].startswith("every cell")][0]
    quoted.append(f"the slope is the same, {every_paper['slope']:+.2f} [{every_paper['slope_ci'][0]:+.2f}, "
                  f"{every_paper['slope_ci'][1]:+.2f}]")
    nobn_paper = censored("lr_validation_nb201_nobn_paper_cpu")
    every_np = [f for f in nobn_paper["fits"] if f["fit"].startswith("every cell")][0]
    quoted.append(f"the censored slope is {every_np['slope']:+.2f} [{every_np['slope_ci'][0]:+.2f}, "
                  f"{every_np['slope_ci'][1]:+.2f}], and P explains the maximal LR (R^2 "
                  f"{nobn_paper['r2']['path_count']:.2f} against {nobn_paper['r2']['lr_scale']:.2f})")
    assert every_np["slope_ci"][0] < 0 < 1 < every_np["slope_ci"][1]  # "the same picture": holds 1 and 0
    assert nobn_paper["r2"]["path_count"] > nobn_paper["r2"]["lr_scale"]
    ratios = _paper_to_study_ratios()
    quoted.append(f"maximal LRs are {min(ratios):.1f} to {max(ratios):.1f} times higher")
    assert every_paper["slope_ci"][1] < 0 and every["slope_ci"][0] < every_paper["slope"] < every["slope_ci"][1]
    assert every["slope_ci"][1] < 0  # README says "against the rule, not flat"
    assert every_nobn["slope_ci"][0] < 0 < 1 < every_nobn["slope_ci"][1]  # "it holds both 1 and 0"
    missing = [q for q in quoted if q not in text]
    assert not missing, f"README.md's criterion sentences disagree with the lr_validation reports: {missing}"


# -- the table defines its words (issue 63) ----------------------------------------------------
def _shown() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return text.split(START, 1)[1].split(END, 1)[0].strip().splitlines()


def _rows() -> list[list[str]]:
    lines = [line for line in _shown() if line.startswith("| ") and not line.startswith("| effect")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def test_each_row_names_its_cell_set_and_its_verdict_says_what_its_ci_says():
    rows = _rows()
    assert rows and all(re.fullmatch(r"\d+ cells, (2×2|trend)", row[2]) for row in rows), [r[2] for r in rows]
    for _, pair, _, gain, mde, _, _, word in rows:
        low, high = (float(v) for v in re.search(r"\[([-+.\d]+), ([-+.\d]+)\]", gain).groups())
        # the detectable gain is the CI's width in power terms: (1.96 + 0.84) / 1.96 of its half-width
        assert float(mde.lstrip("±")) == pytest.approx((high - low) / 2 * 2.8016 / 1.96, abs=0.011), (pair, gain, mde)
        holds = low <= 0 <= high
        assert word != "at the edge", "the table says on which side of 0 the CI is"
        if "holds 0" in word:
            assert holds, (pair, gain, word)
        else:  # excludes 0 (barely, driven, better, worse)
            assert not holds, (pair, gain, word)
    words = {row[-1] for row in rows}
    assert {"CI barely holds 0", "CI barely excludes 0", "CI holds 0"} <= words  # as the committed reports stand


def test_the_legend_defines_every_verdict_word_and_arm_the_table_uses():
    legend = "\n".join(_shown())
    for word in ("*B better* / *B worse*", "*driven by N cell(s)*", "*CI barely excludes 0* / *CI barely holds 0*",
                 "*CI holds 0*", "*2×2*", "*trend*"):
        assert word in legend, word
    arms = {arm for row in _rows() for arm in row[1].split(" - ")}
    assert arms == {"default", "rescaled", "flat", "principled", "tuned", "scaled", "principled_x1"}
    for arm in arms:
        assert f"- `{arm}`: " in legend, arm
    study = json.loads((ROOT / "results" / "nb201_cifar10_cpu" / "report.json").read_text())
    with pytest.raises(ValueError, match="arm\\(s\\) mystery that nasrescale.report.readme_table.ARMS does not define"):
        results_table({**study, "two_by_two": {"effects": [{**study["two_by_two"]["effects"][0], "b": "mystery"}]}})


def _protocol_entry(arm: str) -> tuple[dict, dict]:
    """``[protocols.<arm>]`` of the study's or the trend's pipeline file, and the shipped protocol it names."""
    for name in ("nb201_cifar10_cpu", "nb201_trend_cpu"):
        doc = tomllib.loads((ROOT / "pipelines" / f"{name}.toml").read_text())
        if arm in doc.get("protocols", {}):
            entry = doc["protocols"][arm]
            return entry, tomllib.loads((ROOT / "protocols" / f"{entry['protocol']}.toml").read_text())["protocol"]
    raise AssertionError(f"no [protocols.{arm}] in the study's or the trend's pipeline")


def test_each_arm_is_defined_as_its_pipeline_runs_it():
    for arm, (init_text, lr_text) in ARMS.items():
        entry, protocol = _protocol_entry(arm)
        init = entry.get("init", protocol["init"])
        assert ("PyTorch init" in init_text) == (init == "default"), arm
        assert init == "default" or f"`{init}`" in init_text, arm
        assert ("path-depth" in lr_text) == (protocol["lr_rule"] == "path_depth"), arm
        assert ("multiplier tuned" in lr_text) == bool(entry.get("tune")), arm
        assert ("search" in lr_text) == (entry.get("base_lr") == "search"), arm


def test_readme_and_report_help_quote_the_resample_counts_the_committed_reports_used():
    study = json.loads((ROOT / "results" / "nb201_cifar10_cpu" / "report.json").read_text())
    trend = json.loads((ROOT / "results" / "nb201_trend_cpu" / "report.json").read_text())
    robust = [e["robust"] for e in study["two_by_two"]["effects"]] + [p["robust"] for p in trend["pairs"]]
    assert {r["n_boot"] for r in robust} == {VERDICT_BOOT}
    assert {p["settings"]["bootstrap"] for p in study["pairs"].values()} == {DEFAULT_BOOT}
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert readme.count(f"{VERDICT_BOOT:,} resamples") >= 2  # the Results prose and the legend
    assert re.findall(r"([\d,]+) resamples", readme) == [f"{VERDICT_BOOT:,}"] * len(re.findall(r"[\d,]+ resamples", readme))
    parser = build_parser()
    report = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["report"]
    boot = next(a for a in report._actions if "--bootstrap" in a.option_strings)
    assert boot.default == DEFAULT_BOOT and f"always take {VERDICT_BOOT:,}" in boot.help
    assert f"`nasrescale report --bootstrap`, default {DEFAULT_BOOT:,}" in readme
