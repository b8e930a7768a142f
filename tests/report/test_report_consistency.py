"""The report agrees with itself: its headline bullets follow its own 10-cell rule, and every
mean says what it averages over (cells, trained runs or isomorphism classes)."""

from __future__ import annotations

from nasrescale.kinds.retrain.claims import split_claim
from nasrescale.report.common.markdown import numbers_table


def test_split_bullet_quotes_no_tau_on_fewer_than_ten_cells():
    split = {"reference_lr": 0.1, "groups": {"at or above": {"n": 7, "kendall_tau": 0.43, "ci": {"kendall_tau": [0.1, 0.8]}},
                                             "below": {"n": 3, "kendall_tau": 1.0}}}
    text = split_claim(split)
    assert "0.43" not in text and "1.000" not in text
    assert "7 cells, too few for a tau (fewer than 10)" in text and "3 cells, too few for a tau" in text


def test_the_statistics_mean_names_isomorphism_classes_when_duplicates_were_dropped():
    result = {"n": 10, "kendall_tau": 0.5, "spearman": 0.6, "pearson": 0.7, "mean_diff": 0.1, "median_diff": 0.1,
              "mean_a": 25.32, "mean_b": 25.4, "ci": {},
              "counts": {"matched": 11, "only_a": 0, "only_b": 0, "diverged_a": 0, "diverged_b": 0, "degenerate": 1,
                         "isomorphic_dropped": {"0_10_211": "1_10_021"}}}
    line = numbers_table(result)[-1]
    assert "mean accuracy A 25.32%, B 25.40% over 10 isomorphism classes (1 isomorphic duplicate left out" in line
