"""Training protocols: the recipe an architecture is trained with, as typed data.

Protocols ship in ``protocols/`` (TOML files; a user passes their own with
``--protocol FILE.toml``), among them:

* ``nb201`` -- NAS-Bench-201's default (docs/design.md §3): SGD lr 0.1, momentum 0.9, Nesterov,
  weight decay 5e-4 on every parameter, batch 256, 200 epochs, cosine to 0 stepped once per
  epoch, no warmup, cross-entropy, crop+flip augmentation, PyTorch default init.
* ``rescaled`` -- the same, except in-degree init and ``lr = base_lr * lr_scale(arch)``
  (Chen et al., ICLR 2024, eq. 8) times the kernel factor of ``kernel_rule``; ``lr`` (the
  base LR) has no default and must be given (``--base-lr``);
* ``spectral`` -- the same recipe in the spectral parametrization (``init = "spectral"``);
* ``elr_warmup`` -- ``nb201`` with the subcritical ELR warm-up (``warmup_rule``);
* ``mup`` (μP) and ``lr_validation`` (the LR-rule experiments); docs/protocols.md.

``precision`` is ``bf16`` (autocast on CUDA; the default, kept for speed: its accuracy parity
with fp32 has not been measured in this project) or ``fp32`` (as the benchmark trained; TF32
disabled too). The CPU always trains in fp32, whatever the setting.

A reduced budget (``epochs = 12``) keeps the cosine schedule over the reduced run.

>>> p = load_protocol("nb201")
>>> (p.lr, p.momentum, p.nesterov, p.weight_decay, p.batch_size, p.epochs, p.schedule)
(0.1, 0.9, True, 0.0005, 256, 200, 'cosine')
>>> load_protocol("nb201", {"epochs": 12}).epochs
12
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal

from .config import Overrides, apply_overrides, from_table, read_toml_file, typed_overrides
from .errors import ConfigError
from .fileio import shipped_toml_dir
from .plugins import Plugin, import_plugins
from .registry import Registry

__all__ = ["Protocol", "LrToSearch", "LR_TO_SEARCH", "load_protocol", "protocol_table", "protocol_file",
           "protocol_names", "builtin_protocols_dir", "cosine_factor", "SCHEDULES", "FAMILY_KERNEL_RULE"]

#: the schedules a protocol may name (``protocol.schedule``): the LR factor at ``t``, the
#: fraction of the post-warm-up epochs done (0 at its first epoch)
SCHEDULES: Registry[Callable[[float], float]] = Registry("protocol.schedule", "schedules", unique=True)
SCHEDULES.add("cosine", lambda t: 0.5 * (1.0 + math.cos(math.pi * t)))  # to 0 over the run
SCHEDULES.add("constant", lambda t: 1.0)

#: ``protocol.kernel_rule`` that defers to the cell family's own kernel rule
FAMILY_KERNEL_RULE = "family"


class LrToSearch:
    """The base LR of a protocol whose LR the run's search is still to choose (``base_lr =
    "search"``): the one value, :data:`LR_TO_SEARCH`. A job planned with it is checked and
    counted, never keyed, stored or trained (:meth:`Protocol.require_lr` refuses it).

    >>> LR_TO_SEARCH, LrToSearch() is LR_TO_SEARCH
    (LR_TO_SEARCH, True)
    """

    __slots__ = ()
    _one: "LrToSearch | None" = None
    #: a pipeline or protocol file cannot spell it (:mod:`nasrescale.config` leaves it out of its messages)
    in_files = False

    def __new__(cls) -> "LrToSearch":
        if cls._one is None:
            cls._one = super().__new__(cls)
        return cls._one

    def __reduce__(self) -> tuple[type, tuple[()]]:
        return LrToSearch, ()  # unpickled as the one value

    def __repr__(self) -> str:
        return "LR_TO_SEARCH"


#: the LR of a protocol still to be searched
LR_TO_SEARCH = LrToSearch()


@dataclass(frozen=True)
class Protocol:
    """One training recipe.

    Attributes:
        name: protocol name (recorded with every result).
        epochs: training epochs; the schedule spans exactly these.
        batch_size: training batch size (images).
        lr: base learning rate; ``None`` (the default, and ``rescaled``) means "must be given";
            :data:`LR_TO_SEARCH`: the run's LR search chooses it (a planned job's, before the search).
        momentum: SGD momentum.
        nesterov: Nesterov momentum.
        weight_decay: L2 penalty on every parameter (BN and biases included, as NB201).
        schedule: a name of :data:`SCHEDULES`: ``cosine`` (to 0 over ``epochs``, stepped once
            per epoch) or ``constant``.
        warmup_epochs: linear warmup epochs before the schedule (NB201: 0).
        label_smoothing: cross-entropy label smoothing (NB201: 0, plain cross-entropy).
        augment: random crop with zero padding + horizontal flip on the training set.
        init: an init rule of the registry :mod:`nasrescale.scaling.init_rules` (which checks the
            name when a job is made): ``default`` (PyTorch), ``in_degree`` (target in-degree, docs/design.md §2),
            ``in_degree_source`` (the paper's released code), ``spectral`` (Yang, Simon &
            Bernstein §4: init and per-weight LR factor) or ``mup`` (μP via Microsoft's
            ``mup`` package, trained with ``MuSGD``; the ``mup`` extra,
            :mod:`nasrescale.scaling.mup_param`).
        lr_rule: an LR rule of the registry :mod:`nasrescale.scaling.lr_rules` (checked when a
            job is made, as ``init``): ``fixed`` (every architecture gets ``lr``) or
            ``path_depth`` (``lr * lr_scale(arch)``, paper eq. 8).
        kernel_rule: kernel factor rule (paper eq. 9), applied by an LR rule that scales per
            architecture: ``family`` (:data:`FAMILY_KERNEL_RULE`, the family's setting) or a
            name of :data:`nasrescale.space.edge_factors.KERNEL_RULES`: ``none``, ``network``
            (the paper's eq. 9) or ``per_layer`` (this project's extension, not in the paper).
        precision: ``bf16`` (bf16 autocast on CUDA) or ``fp32`` (full fp32, TF32 off, as
            the benchmark trained). The CPU trains in fp32 either way. Part of a run's identity.
        mup_base_width: ``init = "mup"`` only: width of μP's base model (``None``: the
            trained model's own width, where μP equals the default parametrization).
        warmup_rule: ``None`` (the linear warmup of ``warmup_epochs``) or a name of
            :data:`nasrescale.train.elr_control.WARMUP_RULES` (checked when a job is made): ``elr_subcritical``,
            Mehmeti-Göpel & Wand's subcritical warm-up (Cor. 3.10) of the scale-invariant weights,
            then the schedule (:mod:`nasrescale.train.elr_control`; needs ``warmup_epochs = 0``
            and a network with a conv directly followed by BatchNorm).
    """

    name: str
    epochs: int = 200
    batch_size: int = 256
    lr: float | LrToSearch | None = None
    momentum: float = 0.9
    nesterov: bool = True
    weight_decay: float = 5e-4
    schedule: str = "cosine"  # a name of SCHEDULES
    warmup_epochs: int = 0
    label_smoothing: float = 0.0
    augment: bool = True
    init: str = "default"  # a name of nasrescale.scaling.init_rules (checked there: this layer is below it)
    lr_rule: str = "fixed"  # names of the registries above this layer (see the attributes)
    kernel_rule: str = FAMILY_KERNEL_RULE
    precision: Literal["bf16", "fp32"] = "bf16"
    mup_base_width: int | None = None  # None keeps the keys of protocols that predate it
    warmup_rule: str | None = None  # None: as above

    def __post_init__(self) -> None:
        checks = {  # key: (in range, the range)
            "epochs": (self.epochs >= 1, "an integer >= 1"),
            "batch_size": (self.batch_size >= 1, "an integer >= 1"),
            "lr": (self.lr is None or self.lr_to_search or 0 < self.lr < math.inf, "a finite number > 0"),
            "momentum": (0 <= self.momentum < 1, "in [0, 1)"),
            "weight_decay": (0 <= self.weight_decay < math.inf, "a finite number >= 0"),
            "warmup_epochs": (0 <= self.warmup_epochs < self.epochs, f"in [0, epochs) = [0, {self.epochs})"),
            "label_smoothing": (0 <= self.label_smoothing < 1, "in [0, 1)"),
        }
        for key, (ok, allowed) in checks.items():
            if not ok:
                raise ConfigError(f"protocol.{key}: value {getattr(self, key)!r} is out of range; it must be {allowed}")
        SCHEDULES.get(self.schedule)
        if self.nesterov and self.momentum == 0:
            raise ConfigError("protocol.nesterov: Nesterov momentum needs momentum > 0")
        if self.warmup_rule is not None and self.warmup_epochs:
            raise ConfigError(f"protocol.warmup_epochs: {self.warmup_epochs} with warmup_rule = {self.warmup_rule!r}; "
                              "that warm-up ends on its own, set warmup_epochs = 0")
        if self.mup_base_width is not None and (self.init != "mup" or self.mup_base_width < 1):
            raise ConfigError("protocol.mup_base_width: a positive width, only with init = \"mup\"")
        if self.init == "mup" and importlib.util.find_spec("mup") is None:  # μP without the extra fails here
            raise ConfigError("protocol init = \"mup\" needs Microsoft's mup package, which is not installed; "
                              "install the extra: pip install 'nasrescale[mup]'")

    @property
    def lr_to_search(self) -> bool:
        """Whether the base LR is still to be searched (:data:`LR_TO_SEARCH`)."""
        return isinstance(self.lr, LrToSearch)

    def require_lr(self) -> float:
        """The base LR, or an error saying how to give it (key ``protocol.lr``; a pipeline names
        its own key: :func:`nasrescale.pipeline.protocols.protocol_keys`) or that the LR search
        has not chosen it yet.

        A :class:`~nasrescale.jobs.job.TrainJob` calls it when it is made (one still to be
        searched is let through, to be checked and counted) and again before it is keyed or
        trained."""
        if self.lr is None:
            raise ConfigError(f"protocol.lr: protocol {self.name!r} needs a base learning rate: "
                              "pass --base-lr X (or --set lr=X)")
        if isinstance(self.lr, LrToSearch):
            raise ConfigError(f"protocol.lr: protocol {self.name!r} has base_lr = \"search\" and the LR search has "
                              "not chosen it yet: its jobs are planned to be checked and counted, not trained "
                              "(a pipeline run searches first)")
        return self.lr


def cosine_factor(epoch: int, protocol: Protocol) -> float:
    """LR multiplier for ``epoch`` (0-based): linear warmup, then the protocol's schedule
    (:data:`SCHEDULES`) over the rest, stepped once per epoch; ``cosine`` goes to 0 like
    ``CosineAnnealingLR(T_max=epochs, eta_min=0)``.

    >>> p = Protocol("t", epochs=4)
    >>> [round(cosine_factor(e, p), 4) for e in range(4)]
    [1.0, 0.8536, 0.5, 0.1464]
    """
    if epoch < protocol.warmup_epochs:
        return (epoch + 1) / (protocol.warmup_epochs + 1)
    span = protocol.epochs - protocol.warmup_epochs
    return SCHEDULES.get(protocol.schedule)((epoch - protocol.warmup_epochs) / span)


def builtin_protocols_dir() -> Path:
    """Folder of the shipped protocol files (wheel: ``nasrescale/protocols``; checkout: ``protocols/``)."""
    folder = shipped_toml_dir("protocols")
    if folder is None:
        raise ConfigError("built-in protocols not found in the nasrescale package; reinstall nasrescale")
    return folder


def protocol_names() -> list[str]:
    """Names of the shipped protocols."""
    return sorted(p.stem for p in builtin_protocols_dir().glob("*.toml"))


def protocol_table(name_or_path: str | Path) -> dict[str, Any]:
    """The ``[protocol]`` table of a shipped protocol (by name) or a protocol file, unchecked
    (:func:`load_protocol` checks it; a pipeline merges its overrides into it first), its
    ``imports`` imported and left out (:func:`protocol_file`).

    >>> protocol_table("nb201")["epochs"]
    200

    Raises:
        ConfigError: unknown name, unreadable file, a file with other tables, or an ``imports``
            entry that cannot be imported.
    """
    return protocol_file(name_or_path)[0]


def protocol_file(name_or_path: str | Path) -> tuple[dict[str, Any], tuple[Plugin, ...]]:
    """:func:`protocol_table`, and the plug-ins its ``imports`` key names (module names or ``.py``
    files relative to the protocol file's folder, :mod:`nasrescale.plugins`), imported first: the
    LR or init rules they register are then names its other keys may use.

    >>> protocol_file("nb201")[1]
    ()
    """
    path = Path(name_or_path)
    if not path.suffix:
        path = builtin_protocols_dir() / f"{name_or_path}.toml"
        if not path.is_file():
            raise ConfigError(f"unknown protocol {str(name_or_path)!r}; shipped: {', '.join(protocol_names())}, or pass a .toml file")
    doc = read_toml_file(path, "protocol")
    unknown = sorted(set(doc) - {"protocol"})
    if unknown:
        raise ConfigError(f"{path}: unknown table or key {unknown[0]!r}; a protocol file has one [protocol] table")
    table = doc.get("protocol", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: protocol: expected a table")
    table = dict(table)
    plugins = import_plugins(table.pop("imports", []), path.parent, f"{path}: protocol.imports")
    return table, plugins


def load_protocol(name_or_path: str | Path, overrides: Overrides = (), /, **settings: Any) -> Protocol:
    """Load a shipped protocol by name, or a protocol file by path, with its keys overridden
    before the one check: by keyword (``epochs=2``), by a mapping (``{"epochs": 2}``) or by
    ``KEY=VALUE`` strings (``["epochs=2"]``, parsed as the command line's ``--set``).

    >>> load_protocol("rescaled", lr=0.46, epochs=2).epochs, load_protocol("nb201", ["epochs=2"]).epochs
    (2, 2)

    Raises:
        ConfigError: unknown name, unreadable file, a bad key/value (named by key path), or a
            key given both in ``overrides`` and as a keyword.
    """
    merged = typed_overrides(overrides)
    twice = sorted({key.removeprefix("protocol.") for key in merged} & set(settings))
    if twice:
        raise ConfigError(f"protocol key {twice[0]!r} given twice (in the overrides and as a keyword); give it once")
    merged.update(settings)
    return from_table(Protocol, apply_overrides(protocol_table(name_or_path), merged, "protocol"), "protocol")
