"""`nasrescale cells` lists the op kinds; a disconnected cell is bad input (exit 2) in every
command that reads architectures."""

from __future__ import annotations

import json

import pytest

from nasrescale.cli.main import main
from nasrescale.space.ops import op_kinds

from pipeline_helpers import private_cache  # noqa: F401  (fixtures, used by name)

NO_ZERO = ('[family]\nname = "loose"\ndepth_offset = 1\nbase = \'[[0, 1, "s"]]\'\n'
           '[[ops]]\nname = "s"\nkind = "identity"\n[[ops]]\nname = "c"\nkind = "relu_conv_bn"\nkernel = 3\n'
           '[macro]\nkind = "cnn"\nwidth = 4\n')
DISCONNECTED = '[[0, 1, "c"], [2, 3, "s"]]'


def test_cells_lists_every_op_kind_with_its_properties(capsys):
    assert main(["cells"]) == 0
    out = capsys.readouterr().out
    listing = out[out.index("op kinds"):].splitlines()[2:]
    rows = {line.split()[0]: line.split(maxsplit=5) for line in listing if line.strip()}
    assert set(rows) == set(op_kinds())
    for name, kind in op_kinds().items():
        zero, depth, kernel, parametric, description = rows[name][1:]
        assert (zero, int(depth), parametric) == (str(kind.zero).lower(), kind.relu_depth, str(kind.parametric).lower())
        assert kernel == ("needed" if kind.needs_kernel else "-")
        assert description == kind.description
    assert main(["cells", "--json"]) == 0  # --json stays one object per family
    assert all("name" in json.loads(line) for line in capsys.readouterr().out.splitlines())


@pytest.mark.parametrize("command", [["analyze"], ["summary"], ["train", "--epochs", "1", "--no-checkpoint"]])
def test_a_disconnected_cell_exits_2_naming_its_nodes(capsys, tmp_path, command):
    (tmp_path / "loose.toml").write_text(NO_ZERO)
    assert main([*command, "--family-file", str(tmp_path / "loose.toml"), DISCONNECTED]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "disconnected cell: no edge joins nodes 2, 3 to the input node 0" in err
