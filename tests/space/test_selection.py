"""Architecture selection on its own (selection through a pipeline file: ``tests/pipeline/``)."""

from __future__ import annotations

from nasrescale.space.benchmark import benchmark_accuracies
from nasrescale.space.selection import stratified_sample


def test_stratified_selection_spans_the_accuracy_range():
    acc = benchmark_accuracies("cifar10")
    picked = stratified_sample(acc, 10, seed=0)
    values = [acc[a] for a in picked]
    ranked = sorted(acc.values())
    assert values == sorted(values)  # one per stratum, low to high
    assert values[0] <= ranked[len(ranked) // 10]
    assert values[-1] >= ranked[-len(ranked) // 10 - 1]


def test_unique_selections_take_one_cell_per_isomorphism_class():
    from nasrescale.pipeline.tables import ArchSettings
    from nasrescale.space.isomorphism import canonical_form
    from nasrescale.space.family_loader import get_family
    from nasrescale.space.selection import select_archs

    nb = get_family("nb201")
    for select in ("uniform", "stratified"):
        picked = select_archs(ArchSettings(select=select, count=60, seed=3, unique=True), nb, "cifar10")
        assert len(picked) == 60
        assert len({canonical_form(a, nb) for a in picked}) == 60, select
    names = ("1_10_021", "0_10_211", "3_33_333")
    listed = select_archs(ArchSettings(select="list", names=names, unique=True), nb)
    assert len(listed) == 2
    assert len(select_archs(ArchSettings(select="list", names=names), nb)) == 3  # the default keeps all


def test_the_stored_study_keeps_its_cells_and_identity(tmp_path):
    """archs.unique defaults to false: the stratified study's selection (and so its job keys) is
    the one its store holds, and a pipeline that sets the key to false binds to that store."""
    import gzip
    from pathlib import Path

    from nasrescale.pipeline.identity import analysis_only, strip_keys
    from nasrescale.pipeline.spec import load_pipeline
    from nasrescale.store.read import read_store

    root = Path(__file__).resolve().parents[2] / "results" / "nb201_cifar10_cpu"
    pipeline = load_pipeline(root / "pipeline.toml")
    (tmp_path / "store.sqlite").write_bytes(gzip.decompress((root / "store.sqlite.gz").read_bytes()))
    stored = list(read_store(tmp_path / "store.sqlite").record.archs)
    assert pipeline.arch_list() == stored
    explicit = load_pipeline(root / "pipeline.toml", ["archs.unique=false"])
    assert strip_keys(explicit.identity(stored), analysis_only()) == strip_keys(pipeline.identity(stored), analysis_only())


def test_duplicate_architectures_in_a_list_are_merged_with_a_notice(capsys):
    from nasrescale.pipeline.tables import ArchSettings
    from nasrescale.space.family_loader import get_family
    from nasrescale.space.selection import select_archs

    names = ("3_33_333", "1_10_021", "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|"
             "nor_conv_3x3~1|nor_conv_3x3~2|")
    archs = select_archs(ArchSettings(select="list", names=names), get_family("nb201"))
    assert len(archs) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("nasrescale: note: archs.names: 1 duplicate architecture merged ([2] = [0]); "
                           "2 distinct kept")
