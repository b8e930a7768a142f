"""The ``nasrescale train`` command that reruns one stored job (``nasrescale status --commands``,
the ``train_command`` column of ``nasrescale export``).

A stored job (its ``job_json``: :meth:`nasrescale.jobs.job.TrainJob.to_json`) names everything
that determines its result: architecture, family, data (name, split, subsets, resolution),
model size, the resolved protocol and the seed. :func:`train_command` spells that as options of
``nasrescale train``: the protocol as the shipped protocol of its name (else ``nb201``) plus a
``--set KEY=VALUE`` for every key that differs from it, values written as TOML literals
(:func:`toml_literal`, what ``--set`` reads back exactly), and an ``--import`` for each plug-in of
the stored pipeline (``pipeline.imports``: module names, and ``.py`` files as absolute paths), so
that a rule of the user's own is known before the protocol is read. The command trains the job
under the same key, so on the same machine it gives the same record. A job whose family is not the one
``train`` finds under its name (an ``lr_validation`` run's kernel variant, or a family file
edited since) has no such command: :func:`not_rerunnable` says why.

>>> job = {"arch": "3_11_111", "family": "nb201", "seed": 1, "width": 4, "cells": None,
...        "data": {"name": "cifar10-subset", "path": None, "test_split": None, "train_subset": 100,
...                 "test_subset": None, "resolution": 16},
...        "protocol": {"name": "nb201", "epochs": 2, "batch_size": 256, "lr": 0.1, "momentum": 0.9,
...                     "nesterov": True, "weight_decay": 0.0005, "schedule": "cosine", "warmup_epochs": 0,
...                     "label_smoothing": 0.0, "augment": True, "init": "default", "lr_rule": "fixed",
...                     "kernel_rule": "family", "precision": "fp32"}}
>>> print(command_text(train_command(job, {"executor": {"device": "cpu"}})))
nasrescale train 3_11_111 --family nb201 --protocol nb201 --set epochs=2 --set 'precision="fp32"' --seed 1 --width 4 --dataset cifar10-subset --train-subset 100 --resolution 16 --device cpu
"""

from __future__ import annotations

import json
import math
import shlex
from typing import Any, Mapping

from ..config import to_table
from ..errors import NasRescaleError
from ..protocol import load_protocol, protocol_names
from ..space.family_loader import resolve_family

__all__ = ["train_command", "command_text", "not_rerunnable", "toml_literal", "stored_pipeline"]

#: ``job_json["data"]`` key -> the ``train`` option that sets it
_DATA_OPTIONS = (("path", "--data-path"), ("test_split", "--test-split"), ("train_subset", "--train-subset"),
                 ("test_subset", "--test-subset"), ("resolution", "--resolution"))


def toml_literal(value: Any) -> str:
    """``value`` (a JSON value: bool, number, string, list, table) as a TOML literal, which
    ``--set KEY=VALUE`` parses back to an equal value (floats exactly).

    >>> [toml_literal(v) for v in (True, 3, 0.1, float("-inf"), "a\\"b", [1, "x"], {"k": 2})]
    ['true', '3', '0.1', '-inf', '"a\\\\"b"', '[1, "x"]', '{k = 2}']
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):  # a JSON string is a TOML basic string, but for DEL (escaped here)
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_literal(v)}" if not str(k).isidentifier()
                               else f"{k} = {toml_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML literal for {value!r}")


def _protocol_options(protocol: Mapping[str, Any]) -> list[str]:
    """``--protocol NAME`` and one ``--set`` per key where ``protocol`` differs from that shipped protocol."""
    name = str(protocol.get("name", "nb201"))
    base_name = name if name in protocol_names() else "nb201"
    try:
        base = to_table(load_protocol(base_name))
    except NasRescaleError:  # a shipped protocol this machine cannot load (μP without its package)
        base_name, base = "nb201", to_table(load_protocol("nb201"))
    words = ["--protocol", base_name]
    for key in [*protocol, *(k for k in base if k not in protocol)]:
        value = protocol.get(key)
        if value != base.get(key) or type(value) is not type(base.get(key)):
            words += ["--set", f"{key}={'none' if value is None else toml_literal(value)}"]
    return words


def _import_options(pipeline: Mapping[str, Any]) -> list[str]:
    """``--import ENTRY`` for each plug-in the stored pipeline names (``pipeline.imports``).

    >>> _import_options({"pipeline": {"imports": ["/runs/my_rules.py", "their_rules"]}})
    ['--import', '/runs/my_rules.py', '--import', 'their_rules']
    >>> _import_options({"pipeline": {"imports": "oops"}}), _import_options({})
    ([], [])
    """
    entries = (pipeline.get("pipeline") or {}).get("imports")
    if not isinstance(entries, list):
        return []
    return [word for entry in entries if isinstance(entry, str) and entry for word in ("--import", entry)]


def train_command(job: Mapping[str, Any], pipeline: Mapping[str, Any] | None = None) -> list[str]:
    """The ``nasrescale train`` command line (as words) that reruns the stored job ``job``.

    Args:
        job: the job's stored definition (``job_json``).
        pipeline: the resolved pipeline of its store (``meta.pipeline``): its
            ``pipeline.family_file`` (as written, relative to the pipeline file), its
            ``pipeline.imports`` and ``executor.device`` are added where set.
    """
    pipeline = pipeline or {}
    words = ["nasrescale", "train", str(job["arch"]), "--family", str(job["family"])]
    family_file = (pipeline.get("pipeline") or {}).get("family_file")
    if family_file:
        words += ["--family-file", str(family_file)]
    words += _import_options(pipeline)
    words += _protocol_options(job.get("protocol") or {})
    words += ["--seed", str(job.get("seed", 0))]
    for key in ("width", "cells"):
        if job.get(key) is not None:
            words += [f"--{key}", str(job[key])]
    norm = (pipeline.get("budget") or {}).get("norm")
    if norm is not None:
        words += ["--norm", str(norm)]
    data = job.get("data") or {}
    words += ["--dataset", str(data.get("name", "cifar10-subset"))]
    for key, option in _DATA_OPTIONS:
        if data.get(key) is not None:
            words += [option, str(data[key])]
    device = (pipeline.get("executor") or {}).get("device")
    if device and device != "auto":
        words += ["--device", str(device)]
    return words


def not_rerunnable(job: Mapping[str, Any], pipeline: Mapping[str, Any] | None = None) -> str | None:
    """Why :func:`train_command` cannot rerun ``job`` (its family's digest is not that of the family
    ``train`` resolves under its name), or ``None``: it can, or this machine cannot tell (the
    pipeline's family file is not where it was given)."""
    family_file = ((pipeline or {}).get("pipeline") or {}).get("family_file")
    norm = ((pipeline or {}).get("budget") or {}).get("norm")
    try:
        family = resolve_family(str(job.get("family")), [family_file] if family_file else [])
        if norm is not None:  # as `train --norm` builds it
            from ..models.norms import with_norm

            family = with_norm(family, str(norm))
    except NasRescaleError:
        return None
    if family.digest() == job.get("family_digest"):
        return None
    return (f"its cell family is not the {family.name!r} that `nasrescale train --family {family.name}` builds "
            f"(digest {job.get('family_digest')} here, {family.digest()} there): a kernel variant of "
            "validation.kernels, or a family file changed since the run")


def command_text(words: list[str]) -> str:
    """The command line of ``words``, quoted for a POSIX shell."""
    return shlex.join(words)


def stored_pipeline(text: str | None) -> dict[str, Any]:
    """A store's resolved pipeline (its ``meta.pipeline`` text), or ``{}`` where none parses.

    >>> stored_pipeline('{"executor": {"device": "cpu"}}'), stored_pipeline("{oops"), stored_pipeline(None)
    ({'executor': {'device': 'cpu'}}, {}, {})
    """
    try:
        value = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
