"""What holds the weights the epoch loop trains, with their optimizer and checkpoint: the loop
(:mod:`~nasrescale.train.engine`) and the step (:mod:`~nasrescale.train.step`) are the same for
any K; only this differs:

* :class:`PlainWeights` (K = 1): the caller's model, trained in place, its optimizer
  (``torch.optim.SGD``, or the member's factory such as μP's) under a ``LambdaLR`` of
  :func:`~nasrescale.protocol.cosine_factor` stepped once per epoch -- a single run computes
  exactly what a plain PyTorch loop would;
* :class:`FusedWeights` (K > 1): the members packed into one
  :class:`~nasrescale.models.fused.FusedNetwork`, :class:`~nasrescale.train.fused_sgd.FusedSGD`
  at every member's own LR under the shared cosine factor (its update captured with the network
  when the run compiles, :func:`~nasrescale.train.fused_sgd.update_for`); a diverged member is frozen (LR 0,
  its slice zeroed) while the others go on; at the end each member's weights are unpacked into
  its own model.

Each keeps its checkpoint layout (:mod:`~nasrescale.train.checkpoint`); a group's adds
``members`` (their identities, checked on resume) and ``diverged``, and its history holds every
member's entry per epoch (``None`` for a frozen one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import torch

from ..data.types import ImageData
from ..errors import ConfigError
from ..models.fused import FusedNetwork
from ..protocol import cosine_factor
from .checkpoint import check_resumable, describe_run, resolve_identity
from .fused_sgd import FusedSGD, update_for
from .members import FusedMember, check_identities, check_members, check_param_groups, group_fingerprint, lr_rows
from .run_setup import RunSetup

__all__ = ["PlainWeights", "FusedWeights"]


def _load_failed(path: str | Path, what: str, err: Exception) -> ConfigError:
    return ConfigError(f"checkpoint {str(path)!r} does not fit this {what} ({str(err).splitlines()[0]}); "
                       "delete it or pass another checkpoint path")


class PlainWeights:
    """One run (K = 1): see the module docstring."""

    k = 1

    def __init__(self, member: FusedMember, data: ImageData, setup: RunSetup) -> None:
        protocol, groups = member.protocol, check_param_groups(member.param_groups)
        lrs = [float(g["lr"]) for g in groups]
        self.module = self.structure = member.model.to(setup.device, memory_format=setup.memory_format)
        self.opt = (member.optimizer or torch.optim.SGD)(groups, lr=lrs[0], momentum=protocol.momentum,
                                                         nesterov=protocol.nesterov, weight_decay=protocol.weight_decay)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.opt, lambda e: cosine_factor(e, protocol))
        self.ident, self.fingerprint = resolve_identity(member.identity, member.fingerprint, protocol, member.seed,
                                                        groups, data)
        self.run = describe_run(protocol, member.seed, lrs, data)
        self.seed, self.epochs, self.base_lrs = member.seed, protocol.epochs, [lrs]

    def start_epoch(self, epoch: int) -> None:
        """Nothing: the scheduler already holds this epoch's LR."""

    def lr(self, member: int) -> float:  # the first param group's LR in this epoch
        return float(self.opt.param_groups[0]["lr"])

    def param_lrs(self, params: Sequence[torch.Tensor]) -> list[list[float]]:
        """This epoch's LR of each of ``params`` (one member), as the optimizer's groups hold it."""
        lr_of = {id(p): float(g["lr"]) for g in self.opt.param_groups for p in g["params"]}
        return [[lr_of.get(id(p), 0.0)] for p in params]

    def end_epoch(self) -> None:
        self.scheduler.step()

    def freeze(self, member: int) -> None:
        """Nothing to freeze: a single run ends at its divergence."""

    def resume(self, state: dict[str, Any], path: str | Path) -> tuple[list[list[dict]], list[int | None]]:
        check_resumable(state, self.fingerprint, self.run, path, self.epochs, self.ident)
        try:
            self.module.load_state_dict(state["model"])
            self.opt.load_state_dict(state["optimizer"])
            self.scheduler.load_state_dict(state["scheduler"])
        except (RuntimeError, ValueError, KeyError) as err:
            raise _load_failed(path, "model/optimizer", err) from None
        return [list(state["history"])], [None]

    def state(self, done: int, histories: list[list[dict]], diverged: list[int | None]) -> dict[str, Any]:
        return {"fingerprint": self.fingerprint, "run": self.run, "seed": self.seed, "epochs_done": done,
                "model": self.module.state_dict(), "optimizer": self.opt.state_dict(),
                "scheduler": self.scheduler.state_dict(), "history": histories[0],
                **({} if self.ident is None else {"identity": self.ident})}

    def finish(self) -> None:
        """The weights are trained in place in the caller's model."""


class FusedWeights:
    """K > 1 runs as one fused network: see the module docstring."""

    def __init__(self, members: Sequence[FusedMember], data: ImageData, setup: RunSetup) -> None:
        identities, groups = check_members(members, data)
        self.protocol, self.k, self.members, self.setup = members[0].protocol, len(members), members, setup
        self.fused = FusedNetwork([m.model for m in members], setup.options.split_convs).to(
            setup.device, memory_format=setup.memory_format)
        self.module, self.structure = self.fused, self.fused.net
        params, base_lrs, wds = lr_rows(members, groups, self.fused)
        options = setup.options
        self.opt = FusedSGD(params, base_lrs, wds, members=self.k, momentum=self.protocol.momentum,
                            nesterov=self.protocol.nesterov, update=update_for(options.compile, options.compile_mode))
        self.identities, self.fingerprint = identities, group_fingerprint(identities)
        self.run = f"fused group of {self.k}: " + "; ".join(f"seed {m.seed} {m.protocol.name}" for m in members)
        self.epochs = self.protocol.epochs
        self.base_lrs = [[float(g["lr"]) for g in member_groups] for member_groups in groups]

    def start_epoch(self, epoch: int) -> None:
        self.opt.set_factor(cosine_factor(epoch, self.protocol))

    def lr(self, member: int) -> float:  # as LambdaLR computes it: base x factor
        return self.base_lrs[member][0] * self.opt.factor

    def param_lrs(self, params: Sequence[torch.Tensor]) -> list[list[float]]:
        """This epoch's LR of each of ``params`` (fused tensors), per member (0 once frozen)."""
        index = {id(p): i for i, p in enumerate(self.opt.params)}
        return [[self.opt.member_lr(index[id(p)], k) for k in range(self.k)] for p in params]

    def end_epoch(self) -> None:
        """Nothing: the next epoch sets its own LR factor."""

    def freeze(self, member: int) -> None:
        self.opt.freeze(member)
        self.fused.silence_member(member)

    def resume(self, state: dict[str, Any], path: str | Path) -> tuple[list[list[dict]], list[int | None]]:
        check_identities(state, self.identities, path)
        check_resumable(state, self.fingerprint, self.run, path, self.epochs)
        try:
            self.fused.net.load_state_dict(state["model"])
            self.opt.load_state_dict(state["optimizer"])
        except (RuntimeError, ValueError, KeyError) as err:
            raise _load_failed(path, "fused group", err) from None
        return [[e["members"][i] for e in state["history"] if e["members"][i] is not None]
                for i in range(self.k)], list(state["diverged"])

    def state(self, done: int, histories: list[list[dict]], diverged: list[int | None]) -> dict[str, Any]:
        by_epoch = [{h["epoch"]: h for h in own} for own in histories]  # None: frozen that epoch
        history = [{"epoch": e, "members": [own.get(e) for own in by_epoch]} for e in range(1, done + 1)]
        return {"fingerprint": self.fingerprint, "run": self.run, "seed": self.members[0].seed,
                "epochs_done": done, "model": self.fused.net.state_dict(), "optimizer": self.opt.state_dict(),
                "scheduler": {"epochs_done": done}, "history": history, "members": self.identities,
                "diverged": diverged}

    def finish(self) -> None:
        """Each member's weights back into its own model, as a single run leaves them."""
        for i, m in enumerate(self.members):
            m.model.to(self.setup.device, memory_format=self.setup.memory_format).load_state_dict(
                self.fused.member_state_dict(i))
