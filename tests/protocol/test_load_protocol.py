"""load_protocol's three ways of overriding keys: keywords, a mapping, KEY=VALUE strings."""

from __future__ import annotations

import pytest

from nasrescale.errors import ConfigError
from nasrescale.protocol import load_protocol


def test_keyword_overrides_equal_the_string_and_mapping_forms():
    by_keyword = load_protocol("rescaled", lr=0.46, epochs=2, augment=False)
    assert (by_keyword.lr, by_keyword.epochs, by_keyword.augment) == (0.46, 2, False)
    assert by_keyword == load_protocol("rescaled", ["lr=0.46", "epochs=2", "augment=false"])
    assert by_keyword == load_protocol("rescaled", {"lr": 0.46, "epochs": 2, "augment": False})
    assert by_keyword == load_protocol("rescaled", ["lr=0.46"], epochs=2, augment=False)  # both at once


def test_keyword_overrides_are_checked_like_the_others():
    with pytest.raises(ConfigError, match="protocol.epochs"):
        load_protocol("nb201", epochs="two")
    with pytest.raises(ConfigError, match="protocol.epoch"):
        load_protocol("nb201", epoch=2)
    with pytest.raises(ConfigError, match="'epochs' given twice"):
        load_protocol("nb201", ["epochs=3"], epochs=2)
    with pytest.raises(ConfigError, match="'epochs' given twice"):
        load_protocol("nb201", {"protocol.epochs": 3}, epochs=2)
