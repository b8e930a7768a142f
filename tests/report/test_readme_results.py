"""README's Results table is the committed reports' (issue 52): every row of it is generated from
results/nb201_cifar10_cpu/report.json and results/nb201_trend_cpu/report.json; the landscape
sentences quote results/landscape_nb201_cpu/report.json."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from nasrescale.report.readme_table import END, START

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
              f"takes {best['cells']} cells x {best['seeds']} seeds"]
    assert b["model_ci"][1] < v["gain_margin"]  # README says "less than": only where the interval allows it
    missing = [q for q in quoted if q not in text]
    assert not missing, f"README.md's landscape verdict disagrees with results/landscape_nb201_cpu/report.json: {missing}"


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
    assert every["slope_ci"][1] < 0  # README says "against the rule, not flat"
    assert every_nobn["slope_ci"][0] < 0 < 1 < every_nobn["slope_ci"][1]  # "it holds both 1 and 0"
    missing = [q for q in quoted if q not in text]
    assert not missing, f"README.md's criterion sentences disagree with the lr_validation reports: {missing}"
