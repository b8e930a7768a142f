"""The spectral and elr_warmup protocols by name in every command that takes a protocol or rule
(``train``, ``diagnose --rules``, pipeline files through ``run``), and their bad settings: a
one-line error naming the key, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nasrescale.protocol import SCHEDULES
from nasrescale.scaling.lr_rules import LR_RULES
from nasrescale.space.edge_factors import KERNEL_RULES

from pipeline_helpers import cli, one_thread, private_cache, tiny_pipeline  # noqa: F401  (fixtures, used by name)

TINY = ["--width", "4", "--cells", "1", "--train-subset", "100", "--test-subset", "100", "--batch-size", "50",
        "--epochs", "1", "--quiet", "--no-checkpoint"]
MLP = "2_02_002_0002"



def one_error_line(err: str, key: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert key in lines[0], err


@pytest.mark.parametrize("protocol, init", [("spectral", "spectral"), ("elr_warmup", "default")])
def test_train_takes_both_protocols_by_name(capsys, protocol: str, init: str):
    code, out, err = cli(capsys, "train", "3_13_011", "--protocol", protocol, "--history", *TINY)
    assert code == 0, err
    record = json.loads(out)
    assert (record["protocol"], record["init"], record["base_lr"]) == (protocol, init, 0.1 if init == "spectral" else None)
    entry = record["history"][0]
    assert len(entry["elr"]) == len(record["elr_layers"]) > 0
    assert ("warmup_factor" in entry) == (protocol == "elr_warmup")


@pytest.mark.parametrize("argv, key", [
    (["train", MLP, "--family", "mlp_dag", "--protocol", "elr_warmup"], "protocol.warmup_rule: 'elr_subcritical'"),
    (["train", "3_13_011", "--set", "init=xavier"], "protocol.init: expected one of"),
    (["train", "3_13_011", "--set", "warmup_rule=linear"], "protocol.warmup_rule: expected one of 'elr_subcritical'"),
    (["train", "3_13_011", "--protocol", "elr_warmup", "--epochs", "3", "--set", "warmup_epochs=1"],
     "protocol.warmup_epochs: 1 with"),
])
def test_train_refuses_bad_settings_before_training(capsys, tmp_path, argv: list[str], key: str):
    code, out, err = cli(capsys, *argv[:2], *TINY[:-1], *argv[2:], "--checkpoint", str(tmp_path / "ck.pt"))
    assert (code, out) == (2, "")
    one_error_line(err, key)
    assert not (tmp_path / "ck.pt").exists()


def test_diagnose_takes_rules_and_protocols(capsys):
    code, out, err = cli(capsys, "diagnose", "3_13_011", "--width", "4", "--cells", "1", "--batch-size", "16",
                         "--rules", "spectral,elr_warmup,nb201")
    assert code == 0, err
    assert "Feature speed" in out and "ELR warm-up factor" in out
    block_rows = [line for line in out.splitlines() if line.startswith(("stem ", "body.", "head ", "readout "))]
    assert len(block_rows) >= 8 and all(line.count("deg") == 3 for line in block_rows[-8:])
    code, out, _ = cli(capsys, "diagnose", "3_13_011", "--width", "4", "--cells", "1", "--batch-size", "16",
                       "--inits", "spectral", "--json")
    speeds = json.loads(out)["rules"][0]["feature_speed"]
    assert [s["block"] for s in speeds][:2] == ["stem", "body.0"] and all(0 <= s["angle_deg"] < 90 for s in speeds)


@pytest.mark.parametrize("rules, key", [("xavier", "--inits: unknown rule xavier"),
                                        ("mup", "--inits: protocol 'mup' uses init rule 'mup'")])
def test_diagnose_refuses_what_it_cannot_measure(capsys, rules: str, key: str):
    code, out, err = cli(capsys, "diagnose", "3_13_011", "--width", "4", "--cells", "1", "--rules", rules)
    assert (code, out) == (2, "")
    one_error_line(err, key)


def _pipeline(tmp_path: Path, family: str, archs: list[str], protocols: dict[str, str]) -> Path:
    text = tiny_pipeline("protos", archs=archs).split("[protocols.default]")[0]
    text = text.replace("[pipeline]\n", f'[pipeline]\nfamily = "{family}"\n')
    text += "".join(f"[protocols.{label}]\n{body}\n" for label, body in protocols.items())
    text += '[budget]\nepochs = 1\nbatch_size = 50\nwidth = 4\ntrain_subset = 100\ntest_subset = 100\n'
    text += ("cells = 1\n" if family == "nb201" else "") + '[executor]\ndevice = "cpu"\n'
    path = tmp_path / "protos.toml"
    path.write_text(text)
    return path


def test_a_pipeline_takes_both_protocols_and_its_dry_run_writes_nothing(capsys, tmp_path):
    path = _pipeline(tmp_path, "nb201", ["3_13_011"], {"s": 'protocol = "spectral"', "w": 'protocol = "elr_warmup"'})
    results = tmp_path / "results"
    code, out, err = cli(capsys, "run", str(path), "--results", str(results), "--dry-run")
    assert code == 0, err
    assert "2 jobs over 1 architectures (s 1, w 1)" in out
    assert not results.exists()


@pytest.mark.parametrize("family, arch, body, key", [
    ("mlp_dag", MLP, 'protocol = "elr_warmup"', "protocols.w.warmup_rule: 'elr_subcritical' warms up"),
    ("nb201", "3_13_011", 'protocol = "nb201"\ninit = "xavier"', "protocols.w.init: expected one of"),
    ("nb201", "3_13_011", 'protocol = "nb201"\nlr_rule = "sqrt"',
     "protocols.w.lr_rule: expected one of " + ", ".join(map(repr, LR_RULES.names()))
     + " (the registered LR rules), got 'sqrt'"),
    ("nb201", "3_13_011", 'protocol = "rescaled"\nbase_lr = 0.4\nkernel_rule = "max"',
     "protocols.w.kernel_rule: expected 'family' (the family's own rule) or one of "
     + ", ".join(map(repr, KERNEL_RULES.names()))),
    ("nb201", "3_13_011", 'protocol = "nb201"\nschedule = "step"',
     "protocols.w.schedule: expected one of " + ", ".join(map(repr, SCHEDULES.names()))
     + " (the registered schedules), got 'step'"),
])
def test_a_pipeline_with_a_bad_protocol_stops_before_anything_is_stored(capsys, tmp_path, family, arch, body, key):
    path = _pipeline(tmp_path, family, [arch], {"w": body})
    results = tmp_path / "results"
    for extra in ([], ["--dry-run"]):
        code, out, err = cli(capsys, "run", str(path), "--results", str(results), "--quiet", *extra)
        assert (code, out) == (2, "")
        one_error_line(err, key)
        assert not results.exists()
