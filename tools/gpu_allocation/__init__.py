"""The benchmark and a slice of the re-evaluation inside a time-limited GPU allocation (a SLURM job's
wall time, a preemptible instance): docs/gpu_allocation.md.

The steps (``all`` = env bench parity modes reeval) run in order within ``--budget`` seconds, each
killed at the end of its share, and write into one output folder (``--out``, else ``$OUT``) that
``allocation.json`` sums up: ``env`` (software, device, data pack; ``pytest -m gpu``), ``bench``
(``benchmarks/train_throughput.py``: peaks per precision, like-for-like speed-ups), ``parity``
(``benchmarks/parity.py``: 10 seeds per arm past the anneal), ``modes`` (eager vs compile vs CUDA
graphs), ``reeval`` (``nasrescale run PIPELINE --time-limit``, its store copied into the folder
while it runs, in the precision the plan chose). On a GPU, ``all`` follows the loan's plan
(:mod:`gpu_allocation.plan`): measuring capped at about 3 minutes, what is committed for the GPU
kind and code skipped, the rest science, in bf16 only after a committed parity verdict of
"equivalent" (:mod:`gpu_allocation.precision`). Without a GPU, ``plan`` prints that plan (the
loan's dry run), ``size`` measures what is copied to the GPU machine and ``collect FOLDER`` merges
an output folder into the results root; ``--dry-run`` shrinks every step to seconds on the CPU.

Modules: :mod:`~gpu_allocation.cli` (the command line), :mod:`~gpu_allocation.runner` (the budget
and the output folder), :mod:`~gpu_allocation.steps` (what each step runs), :mod:`~gpu_allocation.sizes`
(their sizes), :mod:`~gpu_allocation.process` (a step's process and its end), :mod:`~gpu_allocation.plan`,
:mod:`~gpu_allocation.committed` (what earlier loans committed), :mod:`~gpu_allocation.precision`,
:mod:`~gpu_allocation.transfer` (``size``) and :mod:`~gpu_allocation.collect`.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ROOT", "MIB"]

#: the repository root (this package lives in its tools/ folder)
ROOT = Path(__file__).resolve().parents[2]
MIB = 2**20
