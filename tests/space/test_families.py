"""Family files: every shipped file loads and analyzes; malformed files name the bad key."""

from __future__ import annotations

import random

import pytest

from nasrescale.space.analysis import analyze, enumerate_space, space_size
from nasrescale.space.encodings import make_graph
from nasrescale.errors import FamilyError
from nasrescale.space.family_file import parse_family, read_family_file
from nasrescale.space.family_loader import builtin_cells_dir, get_family, load_families, resolve_family

SHIPPED = sorted(p.stem for p in builtin_cells_dir().glob("*.toml"))


def test_shipped_families_are_the_expected_ones(tmp_path, monkeypatch):
    monkeypatch.delenv("NASRESCALE_CELLS", raising=False)  # the built-in families only:
    monkeypatch.chdir(tmp_path)  # no user folder, no ./cells
    assert "nb201" in SHIPPED  # the benchmark's family; the rest is whatever cells/ ships (one file, one family)
    assert sorted(load_families()) == SHIPPED, "the registry's built-in families are not the shipped files"
    for name in SHIPPED:
        assert get_family(name).name == name, f"cells/{name}.toml names another family"


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_family_loads_and_analyzes(name):
    family = get_family(name)
    base = analyze(family.base, family)
    assert base.lr_scale == 1.0
    assert not base.degenerate
    if family.structure.name != "edge_dag":  # DARTS / NB101: hand-worked cells in test_cellspaces.py
        assert base.num_paths > 0 and base.sum_depth_cubed > 0
        return
    rng = random.Random(name)
    n = family.nodes or 5
    for _ in range(20):  # random cells: the analysis agrees with brute force on the edge list
        edges = [(u, v, rng.choice(family.op_names)) for v in range(1, n) for u in range(v)]
        rec = analyze(make_graph(edges, family, n), family)
        paths = brute_force_depths(edges, family, n)
        assert rec.degenerate == (not paths) == (rec.lr_scale is None)
        assert rec.num_paths == len(paths)
        assert sorted(rec.path_depths) == sorted(paths)
        if paths:
            base = brute_force_depths(edges_of(family.base, family), family, family.nodes or base_nodes(family))
            expected = (sum(L**3 for L in base) / sum(L**3 for L in paths)) ** 0.5
            assert rec.lr_scale == pytest.approx(expected, rel=1e-12)


def edges_of(arch: str, family) -> list[tuple[int, int, str]]:
    from nasrescale.space.encodings import parse_arch

    return [(u, v, d["op"]) for u, v, d in parse_arch(arch, family).edges(data=True)]


def base_nodes(family) -> int:
    from nasrescale.space.encodings import parse_arch

    return parse_arch(family.base, family).number_of_nodes()


def brute_force_depths(edges: list[tuple[int, int, str]], family, n: int) -> list[int]:
    """Depth of every input->output path, by walking every path over non-zero edges
    (depth = the family's offset + ReLU depths of the path's ops); independent of topology.py."""
    out: dict[int, list[tuple[int, str]]] = {}
    for u, v, op in edges:
        if not family.op(op).zero:
            out.setdefault(u, []).append((v, op))
    depths: list[int] = []

    def walk(node: int, depth: int) -> None:
        if node == n - 1:
            depths.append(depth)
            return
        for v, op in out.get(node, []):
            walk(v, depth + family.op(op).relu_depth)

    walk(0, family.depth_offset)
    return depths


def test_space_sizes(nb201, mlp_dag):
    assert space_size(nb201) == 15_625
    assert space_size(mlp_dag) == 3**10 == 59_049
    first = next(enumerate_space(mlp_dag))
    assert all(d["op"] == "zero" for _, _, d in first.edges(data=True))


VALID = """
[family]
name = "t"
nodes = 3
depth_offset = 1
base = '[[0, 2, "skip"]]'

[[ops]]
name = "zero"
kind = "zero"

[[ops]]
name = "skip"
kind = "identity"
"""


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (lambda s: s.replace("nodes = 3", "nodez = 3"), "family.nodez: unknown key"),
        (lambda s: s.replace('kind = "identity"', 'kind = "teleport"'), "ops[1].kind: expected one of 'zero', 'identity'"),
        (lambda s: s.replace('kind = "identity"', 'kind = "relu_conv_bn"'), "ops[1].kernel: op kind 'relu_conv_bn' needs a kernel"),
        (lambda s: s.replace('kind = "identity"', 'kind = "identity"\nkernel = 3'), "ops[1].kernel: op kind 'identity' takes no kernel"),
        (lambda s: s.replace('name = "skip"', 'name = "zero"'), "op 'zero' defined twice"),
        (lambda s: s.replace('name = "skip"', 'name = "sk|p"'), "reserved"),
        (lambda s: s.replace("depth_offset = 1", 'depth_offset = "one"'), "family.depth_offset: expected int"),
        (lambda s: s.replace("depth_offset = 1\n", ""), "family.depth_offset: missing required key"),
        (lambda s: s.replace("nodes = 3", 'nodes = 3\nencoding = "morse"'), "family.encoding: 'morse'"),
        (lambda s: s.replace("nodes = 3", 'nodes = 3\nkernel_rule = "max"'), "family.kernel_rule: 'max'"),
        (lambda s: s + "\n[extra]\n", "extra: unknown key; allowed keys at the top level: family, ops, macro"),
        (lambda s: s.replace("[family]", "[family\n"), "not valid TOML"),
        (lambda s: s.replace('nodes = 3', 'nodes = 3\nimports = ["no_such_module_xyz"]'), "family.imports: 'no_such_module_xyz': no such module"),
        (lambda s: s.replace("nodes = 3", "nodes = 2147483648"), "family.nodes: 2147483648 is more than 64"),
    ],
)
def test_malformed_family_names_the_key(edit, fragment):
    with pytest.raises(FamilyError) as info:
        parse_family(edit(VALID), source="t.toml")
    assert fragment in str(info.value)
    assert str(info.value).startswith("t.toml")


def test_base_must_parse_and_have_a_path(tmp_path):
    bad_base = tmp_path / "t.toml"
    bad_base.write_text(VALID.replace('[[0, 2, "skip"]]', '[[0, 2, "warp"]]'))
    with pytest.raises(FamilyError, match="family.base: unknown op 'warp'"):
        load_families([bad_base])
    bad_base.write_text(VALID.replace('[[0, 2, "skip"]]', '[[0, 1, "skip"]]'))
    with pytest.raises(FamilyError, match="no input->output path"):
        load_families([bad_base])


def test_user_family_via_path_overrides_and_resolves(tmp_path):
    user = tmp_path / "mine.toml"
    user.write_text(VALID)
    fams = load_families([user])
    assert "t" in fams
    assert "nb201" in fams
    assert resolve_family(None, [user]).name == "t"  # the one family in --family-file
    assert resolve_family(None, []).name == "nb201"
    with pytest.raises(FamilyError, match="cell family: expected one of 'cnn_dag', .*got 'nope'; add one as cells/"):
        get_family("nope")
    with pytest.raises(FamilyError, match="does not exist"):
        load_families([tmp_path / "missing.toml"])


def test_same_name_twice_in_one_folder_is_an_error(tmp_path):
    (tmp_path / "a.toml").write_text(VALID)
    (tmp_path / "b.toml").write_text(VALID)
    with pytest.raises(FamilyError, match="defined twice"):
        load_families([tmp_path])


def test_two_family_files_passed_one_by_one_replace_in_order(tmp_path):
    (tmp_path / "a.toml").write_text(VALID)
    (tmp_path / "b.toml").write_text(VALID.replace("depth_offset = 1", "depth_offset = 2"))
    assert load_families([tmp_path / "a.toml", tmp_path / "b.toml"]).get("t").depth_offset == 2
    assert load_families([tmp_path / "b.toml", tmp_path / "a.toml"]).get("t").depth_offset == 1


def test_nasrescale_cells_env_var(tmp_path, monkeypatch):
    (tmp_path / "a.toml").write_text(VALID)
    monkeypatch.setenv("NASRESCALE_CELLS", str(tmp_path))
    assert "t" in load_families()


def test_read_missing_file():
    with pytest.raises(FamilyError, match="cannot read cell family file"):
        read_family_file("/nonexistent/x.toml")


def test_a_huge_structure_setting_is_refused_before_anything_is_built():
    """Found by the long fuzz run: a DARTS family with ``steps = 2147483648`` exhausted memory
    (23 GB) instead of being refused."""
    text = (builtin_cells_dir() / "darts.toml").read_text()
    assert "\nsteps = 4\n" in text
    huge = text.replace("\nsteps = 4\n", "\nsteps = 2147483648\n", 1)
    with pytest.raises(FamilyError, match=r"structure\.steps: 2147483648 is more than 64"):
        parse_family(huge, source="darts.toml")


def test_a_user_file_replacing_a_shipped_family_says_so_once(tmp_path, capsys, monkeypatch):
    from nasrescale.space import family_loader

    monkeypatch.setattr(family_loader, "_ANNOUNCED", set())
    shipped = (family_loader.builtin_cells_dir() / "nb201.toml").read_text()
    mine = tmp_path / "nb201.toml"
    mine.write_text(shipped.replace('kernel_rule = "none"', 'kernel_rule = "network"'))
    assert family_loader.get_family("nb201", [mine]).kernel_rule == "network"
    family_loader.get_family("nb201", [mine])
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"nasrescale: note: family 'nb201' of {mine} replaces the shipped one")
    same = tmp_path / "same" / "nb201.toml"  # an identical copy changes nothing: no notice
    same.parent.mkdir()
    same.write_text(shipped)
    family_loader.get_family("nb201", [same])
    assert capsys.readouterr().err == ""
