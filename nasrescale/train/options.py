"""How a run is carried out, as one value: :class:`RunOptions` (no torch at import).

What a run trains (model, protocol, seed; a job) and how it is carried out (device,
checkpoints, progress, speed settings) are kept apart: the second is one frozen value passed
unchanged from the CLI and the executors through ``TrainJob.run``, a fused group's run and the
engine (:func:`nasrescale.train.train`, :func:`nasrescale.train.train_fused`).

>>> RunOptions(device="cpu", stop_after=2).replace(progress=True).progress
True
>>> RunOptions(checkpoint_every=0)
Traceback (most recent call last):
...
nasrescale.errors.ConfigError: train: checkpoint_every must be >= 1, got 0
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import ConfigError

__all__ = ["RunOptions", "OnEpoch", "MEMORY_FORMATS", "COMPILE_MODES"]

#: called after each epoch with a copy of a run's history entry (a fused member's carries
#: ``member``, its index in the group; a job's carries ``key``)
OnEpoch = Callable[[dict[str, Any]], None]

#: layouts of the network's activations: ``auto`` (chosen per device and precision,
#: :func:`~nasrescale.train.memory_format.default_memory_format`), ``channels_last`` (NHWC, oneDNN's and
#: cuDNN's tensor-core convolutions) or ``contiguous`` (NCHW, PyTorch's default)
MEMORY_FORMATS = ("auto", "channels_last", "contiguous")

#: ``torch.compile`` modes of the network: ``default``, or ``reduce-overhead`` (inductor's CUDA
#: graphs of the forward and backward on CUDA; on the CPU it compiles as ``default``)
COMPILE_MODES = ("default", "reduce-overhead")


@dataclass(frozen=True)
class RunOptions:
    """How to carry out a run (the defaults suit a library call).

    Attributes:
        device: ``cpu``, ``cuda``, ``cuda:1`` (a job also takes ``auto``).
        checkpoint: the checkpoint file; resumed from if it holds this run.
        checkpoint_dir: a job's checkpoint folder (the file named by its key; ``checkpoint`` wins).
        checkpoint_every: write the checkpoint every this many epochs.
        keep_checkpoint: keep it once the run is finished (a rerun then only re-evaluates).
        stop_after: end the run after this many epochs in total, as if killed, leaving the
            checkpoint to resume from (results have ``finished=False`` and no test metrics).
        progress: show a tqdm bar over epochs.
        on_epoch: :data:`OnEpoch`, e.g. to stream curves or watch a job.
        eval_batch_size: test images per batch; ``None``: 2048 for one run, 1024 for a fused group.
        compile: ``torch.compile`` the network (inductor caches compiled graphs on disk) and a fused
            group's optimizer update (:class:`~nasrescale.train.fused_sgd.CapturedUpdate`; eager
            where compiling fails); a single run's ``torch.optim.SGD`` stays eager.
        compile_mode: :data:`COMPILE_MODES`; with ``compile``, ``reduce-overhead`` captures the
            step's forward and backward, and a fused group's update, as CUDA graphs on CUDA.
        memory_format: :data:`MEMORY_FORMATS`; the layout of weights and inputs.
        cudnn_benchmark: on CUDA, let cuDNN time its convolution algorithms for the run's fixed
            shapes and keep the fastest (``torch.backends.cudnn.benchmark``; restored after).
        split_convs: a fused group computes each convolution as K plain ones instead of one
            grouped one (:class:`~nasrescale.models.fused.MemberConv2d`).
        cpu_autocast: honour a ``bf16`` protocol on the CPU too; by default the CPU trains in
            fp32 (:func:`~nasrescale.train.precision.trained_precision`). The only option that
            changes what a run computes; ``memory_format``, ``compile``, ``compile_mode``,
            ``cudnn_benchmark`` and ``split_convs`` change its speed and at most its float rounding.
    """

    device: str = "cpu"
    checkpoint: str | Path | None = None
    checkpoint_dir: str | Path | None = None
    checkpoint_every: int = 1
    keep_checkpoint: bool = True
    stop_after: int | None = None
    progress: bool = False
    on_epoch: OnEpoch | None = None
    eval_batch_size: int | None = None
    compile: bool = False
    compile_mode: str = "default"
    memory_format: str = "auto"
    cudnn_benchmark: bool = True
    split_convs: bool = False
    cpu_autocast: bool = False

    def __post_init__(self) -> None:
        for name in ("checkpoint_every", "stop_after", "eval_batch_size"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"train: {name} must be >= 1, got {value}")
        if self.memory_format not in MEMORY_FORMATS:
            raise ConfigError(f"train: memory_format {self.memory_format!r} is unknown; use one of "
                              f"{', '.join(MEMORY_FORMATS)}")
        if self.compile_mode not in COMPILE_MODES:
            raise ConfigError(f"train: compile_mode {self.compile_mode!r} is unknown; use one of "
                              f"{', '.join(COMPILE_MODES)}")

    def replace(self, **changes: Any) -> RunOptions:
        """A copy with ``changes`` (checked like a new value)."""
        return dataclasses.replace(self, **changes)
