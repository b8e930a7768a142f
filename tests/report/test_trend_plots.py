"""The trend's figures say why an axis is empty instead of drawing a blank frame."""

from __future__ import annotations

from matplotlib.figure import Figure

from nasrescale.kinds.trend.plots import _epochs_axis


def test_an_empty_trend_axis_says_why_and_a_plotted_one_has_a_legend():
    empty = Figure().add_subplot()
    _epochs_axis(empty, [6, 12, 24], "Kendall tau", "no tau yet")
    assert [t.get_text() for t in empty.texts] == ["no tau yet"] and empty.get_legend() is None
    assert empty.get_xlim()[0] < 6 and empty.get_xlim()[1] > 24  # a margin either side of the budgets
    drawn = Figure().add_subplot()
    drawn.plot([6, 12], [0.5, 0.6], label="default")
    _epochs_axis(drawn, [6, 12], "Kendall tau", "no tau yet")
    assert list(drawn.texts) == [] and [t.get_text() for t in drawn.get_legend().get_texts()] == ["default"]
