"""The trend sentence gives every budget's gain and each step's change (issue 52, point 4): a
path that rises to 12 epochs and falls to 24 is said as such, never as "rose from 6 to 24"."""

from __future__ import annotations

from nasrescale.kinds.trend.link import trend_claim


def _numbers() -> dict:
    gains = {6: (-0.12, [-0.66, 0.33]), 12: (0.60, [0.25, 0.92]), 24: (0.33, [-0.13, 0.54])}
    pairs = [{"a": "default", "b": "principled", "epochs": e, "n": 23, "gain": g, "gain_ci": ci, "kendall_tau": 0.8}
             for e, (g, ci) in gains.items()]
    changes = [{"a": "default", "b": "principled", "from": 6, "to": 24, "n": 23, "change": 0.46,
                "change_ci": [0.10, 0.74]},
               {"a": "default", "b": "principled", "from": 6, "to": 12, "n": 23, "change": 0.72,
                "change_ci": [0.40, 1.02], "step": True},
               {"a": "default", "b": "principled", "from": 12, "to": 24, "n": 23, "change": -0.27,
                "change_ci": [-0.55, -0.06], "step": True}]
    return {"pairs": pairs, "gain_changes": changes, "cells": 24}


def test_the_trend_sentence_names_every_budget_and_the_dip():
    text = trend_claim("trend", _numbers(), 0.44)
    assert "+0.60 [+0.25, +0.92] at 12" in text
    assert "-0.12 [-0.66, +0.33] at 6" in text and "+0.33 [-0.13, +0.54] at 24 epochs" in text
    assert "not monotone" in text
    assert "fell from 12 to 24 epochs (-0.27 [-0.55, -0.06])" in text
    assert "rose from -0.12" not in text  # no rise across the dip


def test_a_monotone_path_is_said_to_be_one():
    numbers = _numbers()
    numbers["pairs"][2] = {**numbers["pairs"][2], "gain": 0.9, "gain_ci": [0.5, 1.2]}
    numbers["gain_changes"][2] = {**numbers["gain_changes"][2], "change": 0.3, "change_ci": [0.1, 0.5]}
    text = trend_claim("trend", numbers, 0.44)
    assert "monotone, it rose from 6 to 12 epochs" in text and "not monotone" not in text
