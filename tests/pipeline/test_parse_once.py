"""Each architecture is parsed once per run; a job holds its parsed cell; an LR still to be
searched is marked as such and never trains."""

from __future__ import annotations

import collections
import pickle
import sys

import networkx as nx
import pytest

import nasrescale.space.encodings as encodings
from nasrescale.errors import ConfigError
from nasrescale.jobs.job import DataSpec, TrainJob
from nasrescale.pipeline.runner import plan_pipeline, run_pipeline
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.protocol import LR_TO_SEARCH, LrToSearch, load_protocol
from nasrescale.space.parsed_arch import ParsedArch
from nasrescale.space.family_loader import get_family, load_families
from nasrescale.store.job_status import Status

from pipeline_helpers import tiny_pipeline


@pytest.fixture
def parse_calls(monkeypatch) -> collections.Counter:
    """Every call of ``parse_arch``, by the text parsed, wherever a module imported it by name."""
    calls: collections.Counter = collections.Counter()
    original = encodings.parse_arch

    def counted(text, *args, **kwargs):
        calls[text] += 1
        return original(text, *args, **kwargs)

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("nasrescale") and getattr(module, "parse_arch", None) is original:
            monkeypatch.setattr(module, "parse_arch", counted)
    return calls


def test_a_quickstart_run_parses_each_architecture_once(tmp_path, monkeypatch, parse_calls):
    cells: dict[str, set[int]] = collections.defaultdict(set)

    def fake_run(self: TrainJob, options=None) -> dict:
        cells[self.arch].add(id(self.cell))
        return {"key": self.key(), "arch": self.arch, "test_accuracy": 50.0, "test_loss": 1.0, "train_loss_last": 1.0,
                "diverged": False, "degenerate": False, "epochs": self.protocol.epochs, "seed": self.seed,
                "history": []}

    monkeypatch.setattr(TrainJob, "run", fake_run)
    monkeypatch.setattr(TrainJob, "fusion_key", lambda self: None)
    pipeline = load_pipeline("quickstart", {"executor.kind": "local", "executor.device": "cpu"})
    summary = run_pipeline(pipeline, tmp_path, progress=False)
    archs = pipeline.arch_list()
    assert (len(archs), summary.total, summary.counts.get(Status.DONE)) == (12, 48, 48)
    # a sampled cell is built as a graph (not parsed at all), a typed one (archs.include) parsed
    # once; every job of a cell then holds that one parsed cell (the family files' own base
    # cells, parsed when a family is loaded, are no architecture of the run)
    bases = {family.base for family in load_families().values()}
    run_calls = {text: n for text, n in parse_calls.items() if text not in bases}
    assert run_calls == {"|none~0|+|none~0|none~1|+|none~0|none~1|none~2|": 1}, run_calls
    assert sorted(cells) == sorted(archs) and all(len(ids) == 1 for ids in cells.values())


def test_jobs_of_one_cell_share_its_parsed_graph(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_pipeline(seeds=(0, 1)))
    jobs = load_pipeline(path).jobs()
    by_arch = collections.defaultdict(set)
    for job in jobs:
        assert isinstance(job.cell, ParsedArch) and nx.is_frozen(job.graph)
        by_arch[job.arch].add(id(job.graph))
    assert len(jobs) == 8 and all(len(ids) == 1 for ids in by_arch.values())


def test_a_job_pickles_with_its_cell_and_the_same_key():
    job = TrainJob.from_arch("3_13_011", get_family("nb201"), DataSpec("cifar10-subset"), load_protocol("nb201"), 2)
    back = pickle.loads(pickle.dumps(job))
    assert back.cell == job.cell and back.key() == job.key() and nx.is_frozen(back.graph)
    assert nx.utils.graphs_equal(back.graph, job.graph)
    # a job pickled when it held its string and graph apart comes back with its cell
    state = {name: value for name, value in job.__dict__.items() if name != "cell"}
    state.update(arch=job.arch, graph=nx.DiGraph(job.graph))
    old = TrainJob.__new__(TrainJob)
    old.__setstate__(state)
    assert old.cell == job.cell and old.key() == job.key() and old.graph.edges == job.graph.edges


def test_a_job_takes_a_parsed_cell_only():
    family = get_family("nb201")
    with pytest.raises(TypeError, match="from_arch"):
        TrainJob("3_13_011", family, DataSpec("cifar10-subset"), load_protocol("nb201"))
    cell = ParsedArch.parse("3_13_011", family)
    with pytest.raises(nx.NetworkXError):
        cell.graph.add_edge(0, 3, op="none")  # shared by every job of the cell: frozen


def _search_pipeline(tmp_path):
    path = tmp_path / "search.toml"
    path.write_text(tiny_pipeline().replace("base_lr = 0.3", 'base_lr = "search"'))
    return load_pipeline(path)


def test_planning_marks_a_searched_lr_and_such_a_job_never_trains(tmp_path):
    pipeline = _search_pipeline(tmp_path)
    assert plan_pipeline(pipeline, data=False).jobs is None  # planned once the search has chosen
    jobs = pipeline.with_lrs_to_search().jobs()
    searched = [j for j in jobs if j.label == "rescaled"]
    assert searched and all(j.protocol.lr is LR_TO_SEARCH and j.protocol.lr_to_search for j in searched)
    assert all(isinstance(j.protocol.lr, float) for j in jobs if j.label == "default")
    job = searched[0]
    with pytest.raises(ConfigError, match='base_lr = "search" and the LR search has not chosen it yet'):
        job.run()
    with pytest.raises(ConfigError, match="not chosen it yet"):
        job.key()  # nor stored
    chosen = pipeline.with_base_lrs({"rescaled": 0.25}).jobs()
    assert [j.protocol.lr for j in chosen if j.label == "rescaled"] == [0.25] * len(searched)


def test_the_lr_to_search_is_one_value_no_file_can_spell():
    assert pickle.loads(pickle.dumps(LR_TO_SEARCH)) is LR_TO_SEARCH and LrToSearch() is LR_TO_SEARCH
    with pytest.raises(ConfigError, match=r"protocol\.lr: expected float or none, got 'search'"):
        load_protocol("rescaled", lr="search")
