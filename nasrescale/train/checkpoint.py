"""Training checkpoints: crash-safe writes, safe loads, and a fingerprint tying a file to its run.

A checkpoint is a plain dict of tensors, numbers, strings, lists and dicts, so it loads with
``torch.load(path, weights_only=True)`` (no pickled code is ever executed)::

    {"format": 1, "fingerprint": str, "run": str, "seed": int, "epochs_done": int,
     "model": state_dict, "optimizer": state_dict, "scheduler": state_dict,
     "history": [{"epoch", "train_loss", "train_acc", "lr"}, ...],
     "identity": str,   # optional: JSON of the run's identity dict (below)
     "threads": int}    # optional: the intra-op CPU threads that wrote it (below)

It is written through a temporary file in the same folder that is flushed, fsync'ed and then
renamed over the target (:class:`~nasrescale.fileio.atomic_writer`), so a run killed while
writing leaves the previous checkpoint intact. ``fingerprint`` identifies the run (protocol,
seed, learning rates, data; or whatever string the caller passes): a file written by another
run is never resumed from silently.

``identity`` is the caller's description of the run as a JSON-able dict (canonical
architecture, family digest, model size, protocol, precision, test split, seed, ...; the
engine adds the precision, test split and seed it sees). On resume it is compared key by key,
and a mismatch raises :class:`~nasrescale.errors.ConfigError` naming the keys that differ
(e.g. two NB201 cells with equal parameter shapes, which the fingerprint cannot tell apart).

``threads`` is the intra-op thread count of the process that wrote the file. The thread count
sets the order of the floating-point reductions, so a run resumed with another count ends with
other figures than an uninterrupted one; ``nasrescale train`` resumes with the stored count
(:func:`stored_threads`) unless ``--threads`` says otherwise.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch

from ..config import to_table
from ..data.types import ImageData
from ..errors import ConfigError, DataError
from ..fileio import atomic_writer
from ..protocol import Protocol

__all__ = ["CHECKPOINT_FORMAT", "derive_fingerprint", "describe_run", "save_checkpoint", "load_checkpoint",
           "stored_threads", "check_resumable", "identity_json", "identity_differences", "run_identity", "resolve_identity"]

#: Version of the checkpoint layout above; bumped if it ever changes incompatibly.
CHECKPOINT_FORMAT = 1

_REQUIRED = {
    "format": int, "fingerprint": str, "run": str, "seed": int, "epochs_done": int,
    "model": dict, "optimizer": dict, "scheduler": dict, "history": list,
}


def describe_run(protocol: Protocol, seed: int, lrs: Sequence[float], data: ImageData) -> str:
    """A one-line human description of a run, stored in its checkpoint for error messages.

    >>> import torch
    >>> imgs, labels = torch.zeros(2, 3, 4, 4, dtype=torch.uint8), torch.zeros(2, dtype=torch.long)
    >>> data = ImageData("toy", imgs, labels, imgs, labels, 2, (0.5,) * 3, (0.25,) * 3)
    >>> describe_run(Protocol("nb201", epochs=12), 3, [0.1, 0.05], data)
    "protocol 'nb201' (12 epochs, batch 256), seed 3, lrs [0.1, 0.05], data 'toy' (2 train images)"
    """
    lr_text = ", ".join(f"{lr:.6g}" for lr in lrs)
    return (f"protocol {protocol.name!r} ({protocol.epochs} epochs, batch {protocol.batch_size}), seed {seed}, "
            f"lrs [{lr_text}], data {data.name!r} ({data.train_images.shape[0]} train images)")


def derive_fingerprint(protocol: Protocol, seed: int, param_groups: Sequence[dict], data: ImageData) -> str:
    """Fingerprint of what determines a training run, when the caller gives none.

    Hashes the whole protocol (precision included), the seed, every param group's LR, weight
    decay and parameter shapes, and the data's name, sizes, normalization and test split. The
    architecture and the initial weights are not covered (two cells can share every shape):
    callers pass ``identity`` to :func:`~nasrescale.train.train`, which is checked on resume.

    Returns:
        16 hex digits (64 bits of SHA-256).
    """
    groups = [{
        "lr": float(g["lr"]),
        "weight_decay": float(g.get("weight_decay", protocol.weight_decay)),
        "shapes": [list(p.shape) for p in g["params"]],
    } for g in param_groups]
    key = {
        "protocol": to_table(protocol), "seed": seed, "groups": groups,
        "data": [data.name, list(data.train_images.shape), list(data.test_images.shape), data.num_classes,
                 list(data.mean), list(data.std), data.crop_padding, data.test_split],
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def identity_json(identity: Mapping[str, Any]) -> str:
    """Canonical JSON of an identity dict (sorted keys; tuples become lists).

    >>> identity_json({"seed": 1, "arch": "3_11_111", "size": (16, 5)})
    '{"arch": "3_11_111", "seed": 1, "size": [16, 5]}'

    Raises:
        ConfigError: if the dict is not JSON-serializable (the message names the problem).
    """
    try:
        return json.dumps(dict(identity), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"train: identity must be a JSON-able dict of str keys ({err})") from None


def run_identity(identity: Mapping[str, Any], protocol: Protocol, seed: int, data: ImageData) -> str:
    """:func:`identity_json` of a run's identity: the caller's dict plus ``precision``,
    ``test_split``, ``test_images`` and ``seed`` where it lacks them."""
    return identity_json({"precision": protocol.precision, "test_split": data.test_split,
                          "test_images": int(data.test_images.shape[0]), "seed": seed, **identity})


def resolve_identity(identity: Mapping[str, Any] | None, fingerprint: str | None, protocol: Protocol, seed: int,
                     param_groups: Sequence[dict], data: ImageData) -> tuple[str | None, str]:
    """A single run's stored identity (:func:`run_identity`; ``None`` without a dict) and its
    fingerprint: the caller's, else :func:`derive_fingerprint` combined with the identity."""
    ident = None if identity is None else run_identity(identity, protocol, seed, data)
    if fingerprint is None:
        fingerprint = derive_fingerprint(protocol, seed, param_groups, data)
        if ident is not None:
            fingerprint = hashlib.sha256(f"{fingerprint}|{ident}".encode()).hexdigest()[:16]
    return ident, fingerprint


def identity_differences(stored: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """Keys whose values differ between two identity dicts (a key missing on one side differs),
    each with both values: ``"arch ('3_11_111' in the checkpoint, '3_44_444' now)"``.

    >>> identity_differences({"arch": "a", "seed": 0}, {"arch": "b", "seed": 0, "precision": "fp32"})
    ["arch ('a' in the checkpoint, 'b' now)", "precision (missing in the checkpoint, 'fp32' now)"]
    """
    def show(d: Mapping[str, Any], k: str, where: str) -> str:
        if k not in d:
            return f"missing {where}"
        text = repr(d[k])
        return f"{text if len(text) <= 80 else text[:77] + '...'} {where}"

    return [f"{k} ({show(stored, k, 'in the checkpoint')}, {show(current, k, 'now')})"
            for k in sorted(set(stored) | set(current)) if stored.get(k, _MISSING) != current.get(k, _MISSING)]


_MISSING = object()


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> None:
    """Write ``state`` to ``path`` atomically (temp file, flush, fsync, rename); creates the folder.

    The state is serialized in memory first, so a write that fails (a full disk) raises its own
    error rather than torch's complaint about a half-written archive.

    Args:
        path: checkpoint file.
        state: the checkpoint dict (layout in the module docstring).

    Raises:
        DataError: the file could not be written (naming the cause); the previous checkpoint,
            if any, is left as it was, so a rerun resumes from it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    torch.save({"format": CHECKPOINT_FORMAT, **state}, buffer)
    try:
        with atomic_writer(path, "wb") as f:
            f.write(buffer.getbuffer())
    except OSError as err:
        if isinstance(err, DataError):
            raise
        raise DataError(f"cannot write checkpoint {str(path)!r}: {err.strerror or err}; free space (or fix the disk), "
                        "then rerun: it resumes from the last checkpoint written") from None


def load_checkpoint(path: str | Path) -> dict[str, Any] | None:
    """Read a checkpoint with ``weights_only=True``; ``None`` if the file does not exist.

    Tensors are loaded on the CPU; ``load_state_dict`` moves them to the model's device.

    Raises:
        DataError: the file is truncated, corrupt, or not a nasrescale checkpoint.
    """
    path = Path(path)
    if not path.exists():
        return None
    fix = "delete it to restart the run from epoch 0, or pass another checkpoint path"
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises RuntimeError, EOFError, UnpicklingError, ... on bad files
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        if "weights_only" in str(err):  # torch's advice to unpickle code does not apply: ours holds tensors only
            reason = "not a file of tensors"
        raise DataError(f"checkpoint {str(path)!r} is unreadable (truncated or corrupt: {reason}); {fix}") from None
    if not isinstance(state, dict):
        raise DataError(f"checkpoint {str(path)!r} is not a nasrescale training checkpoint; {fix}")
    for key, kind in _REQUIRED.items():
        if not isinstance(state.get(key), kind):
            raise DataError(f"checkpoint {str(path)!r} is not a nasrescale training checkpoint "
                            f"(entry {key!r} missing or not a {kind.__name__}); {fix}")
    if state["epochs_done"] < 1 or len(state["history"]) != state["epochs_done"]:
        raise DataError(f"checkpoint {str(path)!r} is inconsistent ({state['epochs_done']} epochs done, "
                        f"{len(state['history'])} in its history); {fix}")
    if "identity" in state and not isinstance(state["identity"], str):
        raise DataError(f"checkpoint {str(path)!r} has a malformed 'identity' entry; {fix}")
    if state["format"] != CHECKPOINT_FORMAT:
        raise DataError(f"checkpoint {str(path)!r} has format {state['format']}, this nasrescale "
                        f"reads format {CHECKPOINT_FORMAT}; {fix}")
    return state


def stored_threads(path: str | Path | None) -> int | None:
    """The thread count stored in the checkpoint at ``path``; ``None`` where there is no path, no
    file, no count (a file written before counts were stored), or the file is unreadable (the run
    that resumes from it reports that itself).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> stored_threads(folder / "absent.pt") is None, stored_threads(None) is None
    (True, True)
    >>> _ = (folder / "torn.pt").write_bytes(b"not a checkpoint")
    >>> stored_threads(folder / "torn.pt") is None
    True
    """
    if path is None:
        return None
    try:
        state = load_checkpoint(path)
    except DataError:
        return None
    threads = None if state is None else state.get("threads")
    return threads if isinstance(threads, int) and threads >= 1 else None


def check_resumable(state: dict[str, Any], fingerprint: str, run: str, path: str | Path, epochs: int,
                    identity: str | None = None) -> None:
    """Check that a loaded checkpoint belongs to this run and fits its schedule.

    Args:
        state: a dict from :func:`load_checkpoint`.
        fingerprint: this run's fingerprint.
        run: this run's :func:`describe_run` text.
        path: the checkpoint file (for the message).
        epochs: this run's total epochs.
        identity: this run's :func:`identity_json`, or ``None`` to check the fingerprint only.

    Raises:
        ConfigError: the checkpoint was written by a different run (naming the identity keys
            that differ), or has more epochs than this run's schedule.
    """
    fix = f"delete {str(path)!r} to start this run over, or pass a different checkpoint path"
    if identity is not None:
        if "identity" not in state:
            raise ConfigError(f"checkpoint {str(path)!r} was written without a run identity ({state['run']}), "
                              f"so it cannot be shown to belong to this run; {fix}")
        differing = identity_differences(json.loads(state["identity"]), json.loads(identity))
        if differing:
            raise ConfigError(f"checkpoint {str(path)!r} belongs to another run ({state['epochs_done']} epochs "
                              f"done); it differs in: {'; '.join(differing)}; {fix}")
    if state["fingerprint"] != fingerprint:
        raise ConfigError(
            f"checkpoint {str(path)!r} belongs to another run: {state['run']} (fingerprint "
            f"{state['fingerprint']}, {state['epochs_done']} epochs done); this run is {run} "
            f"(fingerprint {fingerprint}); {fix}")
    if state["epochs_done"] > epochs:
        raise ConfigError(f"checkpoint {str(path)!r} has {state['epochs_done']} epochs done, but this run "
                          f"has only {epochs}; {fix}")
