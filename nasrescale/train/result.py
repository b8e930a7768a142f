"""What one training run reports: :class:`TrainResult`."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

__all__ = ["TrainResult"]


def _jsonable(value: Any) -> Any:
    """``value`` with NaN/inf floats replaced by ``None`` (strict JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


@dataclass(frozen=True)
class TrainResult:
    """The outcome of :func:`~nasrescale.train.train`.

    Attributes:
        test_accuracy: test top-1 accuracy in percent; ``None`` if the run diverged or was
            stopped early (``stop_after``), as no final model was evaluated.
        test_loss: mean plain cross-entropy over the test set (nats); ``None`` as above.
        train_loss_last: mean training loss of the last epoch run (NaN/inf if it diverged).
        train_loss_best: lowest epoch-mean training loss over finite epochs (NaN if none).
        train_accuracy_last: training accuracy (percent, on augmented batches) of the last epoch.
        epochs_run: epochs done in total, including those resumed from a checkpoint and the
            diverged epoch.
        diverged: an epoch's summed training loss was NaN or infinite; training stopped there.
        diverged_epoch: that epoch (1-based), else ``None``.
        wall_time_s: wall time of this call (s), training, checkpoints and evaluation.
        images_per_s: training images processed per second of training time in this call
            (evaluation and checkpoint writes excluded); ``None`` if this call trained no epoch
            (e.g. resumed from a finished checkpoint).
        lrs: initial learning rate of each param group, in order.
        history: one dict per epoch: ``epoch`` (1-based), ``train_loss``, ``train_acc``
            (percent), ``lr`` (the first param group's LR during that epoch), ``train_loss_tail``,
            and with scale-invariant layers ``elr``, ``elr_spread`` (and ``warmup_factor`` under
            the ELR warm-up).
        resumed_from: epochs done in the checkpoint this call resumed from, else ``None``.
        finished: the run is over (all epochs, or diverged); ``False`` when ``stop_after``
            ended it early and a later call should resume it.
        test_split: which test images the metrics are on (``full``, ``x-test``, ``x-valid``;
            ``ImageData.test_split``).
        test_images: how many test images the metrics are on.
        test_accuracy_released10: the paper's released-code "accuracy" (mean recall over classes
            0-9 only, :mod:`~nasrescale.train.metrics`), a compatibility metric; ``None`` as
            ``test_accuracy``.
        elr_layers: the scale-invariant layers whose effective learning rates each history entry
            holds (``elr``, in this order, with their ``elr_spread``; :mod:`~nasrescale.models.elr`);
            ``None`` for a network without any.
    """

    test_accuracy: float | None
    test_loss: float | None
    train_loss_last: float
    train_loss_best: float
    train_accuracy_last: float
    epochs_run: int
    diverged: bool
    diverged_epoch: int | None
    wall_time_s: float
    images_per_s: float | None
    lrs: list[float]
    history: list[dict[str, Any]]
    resumed_from: int | None
    finished: bool
    test_split: str = "full"
    test_images: int = 0
    test_accuracy_released10: float | None = None
    elr_layers: list[str] | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-serializable dict of every field; NaN/inf become ``None``."""
        return _jsonable(dataclasses.asdict(self))
