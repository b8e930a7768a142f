"""Per-run training setup, the same for one run and a fused group.

* :class:`RunSetup`: the device-dependent settings (precision, memory format, normalization
  statistics, augmentation, batch size) and the run's RNG plumbing.
* :class:`EpochDraw`: one epoch's random draws (batch order, crop offsets, flips).
* :func:`epoch_seed` and :data:`GLOBAL_RNG_OFFSET`: how an epoch's seeds derive from the run's
  seed, so a resumed run draws exactly the batches of an uninterrupted one.
"""

from __future__ import annotations

import contextlib
import math

import torch

from ..data.types import ImageData
from ..protocol import Protocol
from .augment import draw_augmentation, stats_tensor
from .options import RunOptions
from .memory_format import default_memory_format
from .precision import cudnn_autotune, no_tf32, trained_precision

__all__ = ["RunSetup", "EpochDraw", "epoch_seed", "GLOBAL_RNG_OFFSET", "TAIL_FRACTION", "tail_start", "model_dtype",
           "loss_input"]

GLOBAL_RNG_OFFSET = 1 << 40  # keeps the global-RNG seed stream apart from the data stream


#: share of an epoch's last steps whose mean loss is reported as ``train_loss_tail``: the loss
#: "at the end of the epoch" that the maximal-LR rule reads (Chen et al., ICLR 2024, §4), less
#: noisy than the last batch and less stale than the whole epoch's mean
TAIL_FRACTION = 0.1


def tail_start(steps: int) -> int:
    """Index of the first step of an epoch's tail: the last ``ceil(TAIL_FRACTION * steps)`` steps
    (at least one).

    >>> tail_start(391), tail_start(10), tail_start(1)
    (351, 9, 0)
    """
    return steps - max(1, math.ceil(TAIL_FRACTION * steps))


def epoch_seed(seed: int, epoch: int) -> int:
    """Seed of the data generator of ``epoch`` (0-based) in a run seeded ``seed``.

    >>> epoch_seed(0, 3), epoch_seed(2, 0)
    (3, 200006)
    """
    return seed * 100003 + epoch


def model_dtype(model: torch.nn.Module) -> torch.dtype:
    """The floating dtype a model's parameters hold: the dtype its inputs are normalized to.
    float32 as built; float64 when built under ``torch.set_default_dtype(torch.float64)``, which
    the exactness tests use so that a tight tolerance holds on any CPU."""
    return next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)


def loss_input(out: torch.Tensor) -> torch.Tensor:
    """Logits for the loss: bf16/fp16 raised to fp32, fp32 and fp64 kept as they are."""
    return out if out.dtype == torch.float64 else out.float()


class RunSetup:
    """Device-dependent settings shared by the training and evaluation loops.

    ``mean`` and ``std`` are ``(C,)`` in the model's dtype: inputs are normalized channels last.
    """

    def __init__(self, device: torch.device, data: ImageData, protocol: Protocol,
                 dtype: torch.dtype = torch.float32, options: RunOptions | None = None) -> None:
        self.options = options = options or RunOptions()
        self.device = device
        cuda = device.type == "cuda"
        precision = trained_precision(protocol.precision, device.type, options.cpu_autocast)
        self.amp = precision == "bf16"  # bf16 autocast: CUDA (and the CPU when asked)
        self.exact_fp32 = cuda and precision == "fp32"  # no TF32 in convs/matmuls either
        self.cuda, self.precision = cuda, precision
        layout = options.memory_format
        self.layout = default_memory_format(device.type, precision) if layout == "auto" else layout
        self.channels_last = self.layout == "channels_last"
        self.memory_format = torch.channels_last if self.channels_last else torch.contiguous_format
        self.mean = stats_tensor(data.mean, device, dtype).view(-1)
        self.std = stats_tensor(data.std, device, dtype).view(-1)
        self.padding = data.crop_padding
        self.augment = protocol.augment
        self.batch_size = protocol.batch_size

    def autocast(self) -> torch.autocast:
        return torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.amp)

    def precision_scope(self) -> contextlib.AbstractContextManager:
        """For ``fp32`` on CUDA, TF32 off (cuDNN convs, matmuls) for the run; on CUDA with
        ``cudnn_benchmark``, cuDNN's autotuner on (the run's shapes are fixed); restored after."""
        stack = contextlib.ExitStack()
        if self.exact_fp32:
            stack.enter_context(no_tf32())
        if self.cuda and self.options.cudnn_benchmark:
            stack.enter_context(cudnn_autotune())
        return stack

    def generator(self, seed: int) -> torch.Generator:
        """A generator on the training device (CPU where the device has none), seeded ``seed``."""
        try:
            gen = torch.Generator(device=self.device)
        except RuntimeError:  # a backend without device generators: draw on the CPU, then move
            gen = torch.Generator()
        return gen.manual_seed(seed)

    def seed_global(self, seed: int) -> None:
        """Seed the global RNGs the model itself may draw from (dropout)."""
        torch.default_generator.manual_seed(seed)
        if self.device.type == "cuda":
            with torch.cuda.device(self.device):
                torch.cuda.manual_seed(seed)

    def fork_devices(self) -> list[int]:
        """CUDA devices whose global RNG state :func:`torch.random.fork_rng` must restore."""
        if self.device.type != "cuda":
            return []
        return [self.device.index if self.device.index is not None else torch.cuda.current_device()]


class EpochDraw:
    """One epoch's random draws of a run, from its seed: batch order (``perm``), crop offsets and
    flips (``aug``: ``(dy, dx, flip)``, ``None`` without augmentation) and the batch starts.

    Every member of a group draws its own, so a member's batches are its independent run's.
    A final batch of 1 sample is dropped (BatchNorm needs >= 2 in training); otherwise the last
    partial batch is kept, as NB201's loader (``drop_last=False``).
    """

    def __init__(self, n: int, gen: torch.Generator, setup: RunSetup) -> None:
        dev, bs = setup.device, setup.batch_size
        self.perm = torch.randperm(n, generator=gen, device=gen.device).to(dev)
        self.aug = tuple(t.to(dev) for t in draw_augmentation(n, setup.padding, gen)) if setup.augment else None
        self.starts = [s for s in range(0, n, bs) if min(bs, n - s) > 1]
