"""Refusals speak the command line's terms: no Python-API advice (``complete=True``) to a CLI user,
and a long input is echoed cut with "…", never whole."""

from __future__ import annotations

import pytest

from pipeline_helpers import cli  # noqa: F401  (used by name)


def refusal(capsys, *argv: str) -> str:
    code, out, err = cli(capsys, *argv)
    assert (code, out, err.count("\n")) == (2, "", 1), err
    return err


def test_a_group_missing_a_source_says_what_to_write(capsys):
    err = refusal(capsys, "analyze", "|nor_conv_3x3~0|+|nor_conv_3x3~1|+|none~0|none~1|nor_conv_3x3~2|")
    assert "group '|nor_conv_3x3~1|' (node 2) lacks source(s) 0" in err
    assert err.rstrip().endswith("write an absent edge as none~SOURCE (here add none~0)")
    assert "complete" not in err and "parse" not in err
    fixed = "|nor_conv_3x3~0|+|none~0|nor_conv_3x3~1|+|none~0|none~1|nor_conv_3x3~2|"  # as the message says
    assert cli(capsys, "analyze", fixed)[0] == 0


@pytest.mark.parametrize("bad", [
    "|nor_conv_3x3~0|+|" + "a" * 1000 + "|",                   # a 1,000-character token
    "|nor_conv_3x3~0|+|" + "x" * 1000 + "~0|nor_conv_3x3~1|",  # ... naming an unknown op
    "|" + "nor_conv_3x3~0" * 70 + "|",                         # tokens run together
    "1" * 1000,                                                # a 1,000-digit group
    "|nor_conv_3x3~0|+" + "b" * 1000,                          # a group without its bars
])
def test_a_long_bad_input_is_echoed_cut(capsys, bad):
    err = refusal(capsys, "analyze", bad)
    assert "…" in err
    assert len(err) < 400, len(err)
