"""Shared pieces of the pipeline and CLI tests: the tiny pipeline file, the one-thread fixture
and an in-process CLI call.

Imported by name from any test folder (``tests/conftest.py`` puts ``tests/`` on ``sys.path``,
which ``--import-mode=importlib`` does not)::

    from pipeline_helpers import TINY, one_thread  # noqa: F401  (fixtures, used by name)

A fixture imported into a test module is that module's fixture (autouse ones included), so
only the modules that import :func:`one_thread` run on one thread.

>>> 'name = "tiny"' in TINY and tiny_pipeline("x", [0, 1], ["3_11_111"]).count("[protocols.") == 2
True
"""

from __future__ import annotations

from typing import Iterator, Sequence

import pytest

DEGENERATE = "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"



def tiny_budget(schedule: bool = True) -> str:
    """The ``[budget]`` and ``[executor]`` tables of the tiny size every test pipeline trains at,
    on the CPU: a width-4, 1-cell network on 100/100 images; with ``schedule``, one epoch (2 steps
    of 50 images), else the kind's own epochs and batch size (``lr_validation``'s search settings)."""
    steps = "epochs = 1\nbatch_size = 50\n" if schedule else ""
    return f"""
[budget]
{steps}width = 4
cells = 1
train_subset = 100
test_subset = 100

[executor]
device = "cpu"
"""


TINY_BUDGET = tiny_budget()


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``nasrescale ARGV`` run in-process (argparse's exits
    included, where an option's value is refused); a traceback on stderr fails the test."""
    from nasrescale.cli.main import main

    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, out, err


def tiny_pipeline(name: str = "tiny", seeds: Sequence[int] = (0,),
                  archs: Sequence[str] = (DEGENERATE, "3_11_111")) -> str:
    """A retrain pipeline file: ``archs`` x {nb201, rescaled at base LR 0.3} x ``seeds``, one
    epoch (2 steps of 50 images) of a width-4, 1-cell network on 100/100 images, on the CPU."""
    names = ", ".join(f'"{a}"' for a in archs)
    return f"""
[pipeline]
name = "{name}"
seeds = [{", ".join(str(s) for s in seeds)}]

[archs]
select = "list"
names = [{names}]

[protocols.default]
protocol = "nb201"

[protocols.rescaled]
protocol = "rescaled"
base_lr = 0.3
{TINY_BUDGET}"""


TINY = tiny_pipeline()


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    """Tiny CPU runs: one torch thread (2 threads on a busy 2-core machine are many times slower)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:
    """A private dataset cache folder for each test."""
    monkeypatch.setenv("NASRESCALE_CACHE", str(tmp_path / "cache"))


def landscape_pipeline(name: str, archs: Sequence[str], table: str, budget: str = TINY_BUDGET,
                       reference: str = "nb201:cifar10") -> str:
    """A landscape pipeline file: ``archs`` under the ``flat`` protocol (NB201's recipe with the
    released in-degree init) at seeds 0 and 1, its ``[landscape]`` table ``table``."""
    names = ", ".join(f'"{a}"' for a in archs)
    return f"""
[pipeline]
name = "{name}"
kind = "landscape"
seeds = [0, 1]
reference = "{reference}"
[archs]
select = "list"
names = [{names}]
[protocols.flat]
protocol = "nb201"
init = "in_degree_source"
[landscape]
{table}
{budget}"""
