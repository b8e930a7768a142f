"""``nasrescale summary`` (network cost) and ``nasrescale diagnose`` (init-rule evidence)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..errors import NasRescaleError
from ..space.encodings import format_arch
from .shared_options import (add_family_options, add_model_options, add_option, family_from_args, int_at_least,
                             positive_float, parse_archs, read_archs, seed_int)

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``summary`` and ``diagnose`` commands."""
    p = sub.add_parser(
        "summary", help="parameters and FLOPs of architectures' networks",
        description="Cost of each architecture's network, counted like NAS-Bench-201's cost info: "
                    "params (exact) and flops_m (millions of multiply-accumulates per image, every op "
                    "of the string run); *_effective counts only what the pruned network runs. DARTS-style "
                    "networks are counted from their layers' shapes, without building or running them.",
    )
    p.add_argument("archs", nargs="+", metavar="ARCH", help="architecture (any encoding); - reads stdin")
    add_family_options(p)
    add_model_options(p)
    p.add_argument("--classes", type=int_at_least(2), default=10, metavar="K", help="readout classes (default 10)")
    p.add_argument("--image-size", type=int_at_least(1), default=32, metavar="PX", help="input height and width (default 32)")
    p.add_argument("--json", action="store_true", help="one JSON object per line per architecture")
    p.set_defaults(func=run_summary)

    p = sub.add_parser(
        "diagnose", help="activation moments, one-step pre-activation change and feature speed under each init rule",
        description="For one architecture and each init rule (or protocol): the second moment of every cell node "
                    "at init, per layer the mean squared change of its pre-activations after one plain SGD step "
                    "on a batch of the shipped CIFAR-10 subset (the paper's eq. 7 desideratum), and per block "
                    "of the network the backward-feature angle at init with the feature speed formula's "
                    "predicted vs measured update of its output after that step (Chizat & Netrapalli, Thm. 2.1).",
    )
    p.add_argument("arch", metavar="ARCH", help="architecture (any encoding)")
    add_family_options(p)
    add_model_options(p)
    add_option(p, "--inits", former=["--rules"], metavar="R,R,..",
               help="comma-separated init rules or shipped protocols (a protocol: its init rule, per-parameter "
                    "LRs and ELR warm-up; default: every weight init rule, nasrescale.scaling.init)")
    add_option(p, "--batch-size", former=["--batch"], type=int_at_least(2), default=128, metavar="B",
               help="images in the batch (default 128)")
    add_option(p, "--base-lr", former=["--lr"], type=positive_float, default=0.1, metavar="X",
               help="LR of the single plain SGD step for an init rule, the same for every layer; the base LR of "
                    "a protocol that has none (default 0.1)")
    p.add_argument("--seed", type=seed_int, default=0, metavar="S", help="seed of the init and of the batch (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run_diagnose)


def run_summary(args: argparse.Namespace) -> int:
    """Print each architecture's cost."""
    from ..models import model_cost  # torch: imported only when needed, so the CLI starts fast

    family = family_from_args(args)
    archs = parse_archs(read_archs(args.archs), family, args)  # all checked before printing
    shape = (3, args.image_size, args.image_size)
    first = model_cost(archs[0], family, args.classes, width=args.width, cells=args.cells, in_shape=shape) \
        if archs else None  # a size the skeleton refuses is refused before anything is printed
    if not args.json:
        print(f"{'params':>10} {'flops_m':>9} {'params_eff':>10} {'flops_m_eff':>11}  arch")
    for i, graph in enumerate(archs):
        cost = first if i == 0 and first is not None else \
            model_cost(graph, family, args.classes, width=args.width, cells=args.cells, in_shape=shape)
        arch = format_arch(graph, family)
        if args.json:
            print(json.dumps({"arch": arch, "family": family.name, **cost}))
        else:
            print(f"{cost['params']:>10,} {cost['flops_m']:>9.3f} {cost['params_effective']:>10,} "
                  f"{cost['flops_m_effective']:>11.3f}  {arch}")
    return 0


def run_diagnose(args: argparse.Namespace) -> int:
    """Measure every requested init rule on one batch and print a comparison."""
    # torch and the modules that load it: imported only when the command runs, so the CLI starts fast
    import torch

    from ..data import load_dataset
    from ..models import build_model
    from ..scaling.diagnose import diagnose_rule
    from ..train.augment import normalize, stats_tensor

    family = family_from_args(args)
    graph = parse_archs([args.arch], family, args)[0]
    settings = _diagnosed(args.inits)
    data = load_dataset("cifar10-subset")
    if not 2 <= args.batch_size <= data.train_images.shape[0]:
        raise NasRescaleError(f"--batch-size {args.batch_size}: must be between 2 and {data.train_images.shape[0]}")
    generator = torch.Generator().manual_seed(args.seed)
    idx = torch.randperm(data.train_images.shape[0], generator=generator)[: args.batch_size]
    mean, std = stats_tensor(data.mean, "cpu"), stats_tensor(data.std, "cpu")
    x, y = normalize(data.train_images[idx], mean, std), data.train_labels[idx]

    def build():  # the same initial weights for every rule, before the rule is applied
        torch.manual_seed(args.seed)
        return build_model(graph, family, data.num_classes, width=args.width, cells=args.cells)

    results = [diagnose_rule(build, name, x, y, args.base_lr, protocol) for name, protocol in settings]
    if args.json:
        print(json.dumps({"arch": args.arch, "family": family.name, "lr": args.base_lr, "batch": args.batch_size,
                          "rules": [r.to_json() for r in results]}))
        return 0
    print(_diagnosis_text(results, args.base_lr))
    print(_feature_speed_text(results))
    return 0


def _diagnosed(text: str | None) -> list[tuple[str, Any]]:
    """``--inits``: each name with its protocol (``None`` for an init rule).

    Raises:
        NasRescaleError: an empty list, an unknown name, or a protocol whose init rule is not a
            weight rule (μP, trained with its own optimizer).
    """
    from ..protocol import load_protocol, protocol_names  # cheap, but with the torch-backed imports for symmetry
    from ..scaling.init import weight_rules

    known = weight_rules()
    names = list(known) if text is None else [r.strip() for r in text.split(",") if r.strip()]
    if not names:
        raise NasRescaleError(f"--inits: no rule given; known rules: {', '.join(known)}")
    out = []
    for name in names:
        if name in known:
            out.append((name, None))
        elif name in protocol_names():
            protocol = load_protocol(name)
            if protocol.init not in known:
                raise NasRescaleError(f"--inits: protocol {name!r} uses init rule {protocol.init!r}, which trains with "
                                      f"its own optimizer; diagnose measures the weight init rules ({', '.join(known)}) "
                                      "and the protocols built on them")
            out.append((name, protocol))
        else:
            raise NasRescaleError(f"--inits: unknown rule {name}; known: {', '.join(known)}, or a shipped protocol "
                                  f"({', '.join(protocol_names())})")
    return out


def _diagnosis_text(results: list, lr: float) -> str:  # noqa: ANN001 - list of RuleDiagnosis
    col = 18
    head = "".join(f"{r.rule:>{col}}" for r in results)
    lines = ["Second moment E[x^2] of each cell node at init (cells of equal width averaged):",
             f"{'stage/node':<24}{head}"]
    first = results[0]
    for stage, nodes in first.node_moments.items():
        for node in nodes:
            vals = "".join(f"{r.node_moments[stage][node]:>{col}.4g}" for r in results)
            lines.append(f"{f'stage{stage + 1} node{node}':<24}{vals}")
    lines += ["", f"Pre-activation change E[(z'-z)^2] after one SGD step at lr {lr} (E[z^2] at init in brackets):",
              f"{'layer':<24}{head}"]
    for layer in first.layer_change:
        vals = "".join(f"{f'{r.layer_change[layer]:.2e} [{r.layer_moments[layer]:.2g}]':>{col}}" for r in results)
        lines.append(f"{layer:<24}{vals}")
    lines.append(f"{'loss at init':<24}" + "".join(f"{r.loss:>{col}.4f}" for r in results))
    factors = [r.warmup_factor for r in results]
    if any(f is not None for f in factors):
        lines.append(f"{'ELR warm-up factor':<24}" + "".join(f"{'-' if f is None else f'{f:.3g}':>{col}}" for f in factors))
    return "\n".join(lines)


def _feature_speed_text(results: list) -> str:  # noqa: ANN001 - list of RuleDiagnosis
    """Per trunk block and rule: the backward-feature angle at init and the one-step update of the
    block's output, predicted by the feature speed formula / measured (RMS)."""
    col = 26
    lines = ["", "Feature speed (Chizat & Netrapalli, Thm. 2.1): angle theta between the feature velocity and minus "
             "the backward pass at init, and the RMS update of each block's output after the step, "
             "formula -> measured:", f"{'block':<12}" + "".join(f"{r.rule:>{col}}" for r in results)]
    for i, block in enumerate(results[0].feature_speed):
        cells = []
        for r in results:
            b = r.feature_speed[i]
            cells.append(f"{b.angle_deg:5.1f}deg {b.predicted_rms:.2e}->{b.measured_rms:.2e}")
        lines.append(f"{block.block:<12}" + "".join(f"{c:>{col}}" for c in cells))
    return "\n".join(lines)
