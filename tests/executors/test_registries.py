"""The executor and selection-method registries: names read by the spec, errors list them,
and a registered entry is used without touching the code that reads the spec."""

from __future__ import annotations

import pytest

from nasrescale.errors import ConfigError
from nasrescale.executors import ExecutorSettings, executor_kinds, get_executor, register_executor
from nasrescale.executors import executor_registry
from nasrescale.executors.local import LocalExecutor
from nasrescale.pipeline import preflight
from nasrescale.pipeline.spec import ArchSettings
from nasrescale.space import selection
from nasrescale.space.family_loader import get_family
from nasrescale.space.selection import SelectionMethod, select_archs, selection_methods


def test_builtin_executors_are_registered_and_an_unknown_kind_lists_them():
    assert executor_kinds() == ("local", "ray")
    with pytest.raises(ConfigError, match=r"executor.kind: expected one of 'local', 'ray' .*got 'slurm'"):
        ExecutorSettings(kind="slurm")


def test_a_registered_executor_is_accepted_by_the_settings_and_built(monkeypatch, tmp_path):
    monkeypatch.setattr(executor_registry.EXECUTORS, "_entries", dict(executor_registry.EXECUTORS._entries))
    built = []

    @register_executor("inline", summary="test only")
    def inline(settings, *, checkpoint_dir=None, progress=True):
        built.append(checkpoint_dir)
        return LocalExecutor(settings, checkpoint_dir=checkpoint_dir, progress=progress)

    settings = ExecutorSettings(kind="inline", device="cpu")
    assert isinstance(get_executor(settings, checkpoint_dir=tmp_path), LocalExecutor)
    assert built == [tmp_path]
    preflight.check_executor(settings)  # must not raise: no optional package, the local device check only


def test_preflight_names_the_missing_package_of_an_entry(monkeypatch):
    monkeypatch.setattr(executor_registry.EXECUTORS, "_entries", dict(executor_registry.EXECUTORS._entries))
    register_executor("exotic", requires="no_such_pkg_xyz", install="pip install no-such-pkg")(
        lambda settings, **kw: None)
    with pytest.raises(ConfigError, match=r'executor.kind = "exotic" needs the no_such_pkg_xyz package: '
                                          r"pip install no-such-pkg"):
        preflight.check_executor(ExecutorSettings(kind="exotic"))


def test_selection_methods_are_registered_and_an_unknown_one_lists_them():
    assert selection_methods() == ("uniform", "stratified", "list", "file")
    with pytest.raises(ConfigError, match=r"archs.select: expected one of 'uniform', 'stratified', 'list', 'file'"):
        ArchSettings(select="random")
    with pytest.raises(ConfigError, match=r'archs.names: select = "list" needs a non-empty list'):
        ArchSettings(select="list")


def test_a_registered_selection_method_is_validated_and_run(monkeypatch):
    monkeypatch.setattr(selection.METHODS, "_entries", dict(selection.METHODS._entries))

    @selection.register_selection("first_names", needs="names", needs_text="some names")
    def first(settings, family, include, dataset, base_dir):
        return include + list(settings.names[:1])

    assert isinstance(selection.selection_method("first_names"), SelectionMethod)
    with pytest.raises(ConfigError, match='archs.names: select = "first_names" needs some names'):
        ArchSettings(select="first_names")
    nb = get_family("nb201")
    cell = select_archs(ArchSettings(count=1, seed=0), nb)[0]
    assert select_archs(ArchSettings(select="first_names", names=(cell, "x")), nb) == [cell]
