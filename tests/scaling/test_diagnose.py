"""diagnose's layer names: a DARTS network's edges numbered within their cell, as its node moments are."""

from __future__ import annotations


def test_darts_layer_names_number_nodes_within_their_cell():
    import re

    from nasrescale.models import build_model
    from nasrescale.scaling.diagnose import _layer_names
    from nasrescale.space.family_loader import get_family

    model = build_model("PC_DARTS", get_family("darts"), width=8, cells=3, in_shape=(3, 16, 16))
    edges = {n for n in _layer_names(model).values() if ".edge" in n}
    nodes = {int(x) for n in edges for x in re.findall(r"edge(\d+)->(\d+)", n)[0]}
    assert nodes <= set(range(7))  # 0, 1 the inputs, 2-5 the intermediate nodes (no global ids 7-13)
    assert any(".reduce.edge" in n for n in edges) and any(".edge" in n and "reduce" not in n for n in edges)
