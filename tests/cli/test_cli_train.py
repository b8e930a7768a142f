"""``nasrescale train / summary / diagnose`` end to end on the shipped CIFAR-10 subset."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from nasrescale.cli.main import main

from pipeline_helpers import private_cache  # noqa: F401  (fixtures, used by name)


TINY = ["--width", "4", "--cells", "1", "--train-subset", "500", "--test-subset", "200", "--batch-size", "100", "--quiet"]
ALL_3X3 = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def evaluate_checkpoint(path: Path, arch: str, test_subset: int) -> tuple[float, float]:
    """Test accuracy (%) and loss of the weights in a finished checkpoint, computed here from
    the shipped subset (independently of the engine's evaluation loop)."""
    from nasrescale.data import load_dataset, subset
    from nasrescale.models import build_model
    from nasrescale.space.family_loader import get_family

    data = subset(load_dataset("cifar10-subset"), 500, test_subset, seed=0)
    model = build_model(arch, get_family("nb201"), 10, width=4, cells=1)
    model.load_state_dict(torch.load(path, weights_only=True)["model"])
    model.eval().to(memory_format=torch.channels_last)
    mean, std = torch.tensor(data.mean).view(1, 3, 1, 1), torch.tensor(data.std).view(1, 3, 1, 1)
    x = ((data.test_images.float() / 255 - mean) / std).contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        logits = model(x)
    acc = 100.0 * (logits.argmax(1) == data.test_labels).double().mean().item()
    return acc, torch.nn.functional.cross_entropy(logits, data.test_labels).item()


def test_train_prints_the_result(capsys, tmp_path):
    ckpt = tmp_path / "run.pt"
    code, out, err = run(capsys, "train", "3_33_333", "--epochs", "3", "--history", "--checkpoint", str(ckpt), *TINY)
    assert code == 0, err
    rec = json.loads(out)
    for key in ("test_accuracy", "train_loss_last", "train_loss_best", "lr", "diverged", "diverged_epoch",
                "wall_time_s", "images_per_s", "params", "arch", "protocol"):
        assert key in rec
    assert rec["arch"] == ALL_3X3
    assert rec["protocol"] == "nb201"
    assert rec["lr"] == 0.1
    assert not rec["diverged"]
    assert rec["diverged_epoch"] is None
    assert rec["epochs_run"] == 3
    assert (rec["test_split"], rec["test_images"]) == ("full", 200)
    assert (rec["precision"], rec["precision_setting"]) == ("fp32", "bf16")  # what ran: the CPU trains in fp32
    assert rec["base_lr"] is None  # nb201's fixed 0.1 is the LR, not a base LR
    losses = [h["train_loss"] for h in rec["history"]]
    assert losses[-1] < losses[0]  # a few epochs on real images: the loss falls
    # the reported figures are those of the trained weights (evaluated here, independently)
    acc, loss = evaluate_checkpoint(ckpt, "3_33_333", 200)
    assert abs(rec["test_accuracy"] - acc) <= 0.5
    assert rec["test_loss"] == pytest.approx(loss, rel=1e-4)


def test_default_checkpoint_is_removed_when_done(capsys):
    code, _, err = run(capsys, "train", "3_11_111", "--epochs", "1", *TINY)
    assert code == 0, err
    assert not list(Path(os.environ["NASRESCALE_CACHE"]).rglob("*.pt"))


def test_checkpoint_of_another_cell_is_refused(capsys, tmp_path):
    """3_11_111 and 3_44_444 have the same parameter shapes; the checkpoint identity tells them apart."""
    ckpt = str(tmp_path / "run.pt")
    assert run(capsys, "train", "3_11_111", "--epochs", "1", "--checkpoint", ckpt, *TINY)[0] == 0
    code, out, err = run(capsys, "train", "3_44_444", "--epochs", "1", "--checkpoint", ckpt, *TINY)
    assert code == 2
    assert out == ""
    assert "belongs to another run" in err
    assert "arch (" in err


def test_test_split_full_evaluates_on_the_full_test_set(capsys):
    code, out, err = run(capsys, "train", "3_11_111", "--epochs", "1", "--no-checkpoint", "--test-split", "full", *TINY)
    assert code == 0, err
    rec = json.loads(out)
    assert rec["test_split"] == "full"
    assert rec["test_images"] == 200  # --test-subset of the full test set


@pytest.mark.parametrize("split", ["x-test", "x-valid"])
def test_test_split_half_on_cifar10_exits_2_naming_the_datasets_that_have_it(capsys, split):
    code, out, err = run(capsys, "train", "3_11_111", "--epochs", "1", "--test-split", split, *TINY)
    assert code == 2
    assert "exists only for cifar100, imagenet16-120" in err
    assert out == "", "a refused run printed a record"


def test_rescaled_protocol_lr(capsys):
    code, out, _ = run(capsys, "train", "3_33_333", "--protocol", "rescaled", "--base-lr", "0.5", "--epochs", "1", *TINY)
    rec = json.loads(out)
    assert code == 0
    assert rec["init"] == "in_degree"
    assert rec["lr_scale"] == pytest.approx(0.0890871, rel=1e-6)
    assert rec["lr"] == pytest.approx(0.5 * 0.0890871, rel=1e-6)
    assert rec["lrs"] == [rec["lr"]]


@pytest.mark.parametrize("protocol", [["--protocol", "nb201"], ["--protocol", "rescaled", "--base-lr", "0.3"]])
def test_degenerate_cell_trains_to_chance_under_any_protocol(capsys, protocol):
    code, out, _ = run(capsys, "train", "0_00_000", "--epochs", "1", "--no-checkpoint", *protocol, *TINY)
    rec = json.loads(out)
    assert code == 0
    assert rec["degenerate"] is True
    assert rec["test_accuracy"] == pytest.approx(10.0, abs=0.01)
    assert rec["lr"] == (0.1 if "nb201" in protocol else 0.3)  # rescaled: no paths, scale taken as 1


def test_same_seed_same_result(capsys):
    # the same seed and thread count (a run that leaves --threads out reads the load once, and its
    # record names the count it took): the same result
    results = [json.loads(run(capsys, "train", "3_34_131", "--epochs", "2", "--seed", "7", "--no-checkpoint",
                              "--threads", "1", *TINY)[1]) for _ in range(2)]
    for key in ("test_accuracy", "test_loss", "train_loss_last"):
        assert results[0][key] == results[1][key]


def test_divergence_is_a_result_not_a_crash(capsys):
    code, out, _ = run(capsys, "train", "2_22_222_2222", "--family", "mlp_dag", "--set", "lr=50", "--epochs", "3",
                       "--width", "32", "--train-subset", "500", "--test-subset", "100", "--quiet", "--no-checkpoint")
    rec = json.loads(out)
    assert code == 0
    assert rec["diverged"] is True
    assert rec["diverged_epoch"] in (1, 2, 3)
    assert rec["test_accuracy"] is None


def test_summary_json(capsys):
    code, out, _ = run(capsys, "summary", "--json", "3_33_333", "0_00_000")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert [r["params"] for r in rows] == [1_531_546, 73_306]  # NB201's published counts
    assert rows[0]["flops_m"] == pytest.approx(220.12, abs=0.01)
    assert rows[0]["arch"] == ALL_3X3
    assert {"arch", "params", "flops_m", "params_effective", "flops_m_effective"} <= set(rows[0])


def test_diagnose_text_and_json(capsys):
    code, out, _ = run(capsys, "diagnose", "3_33_333", "--width", "8", "--cells", "1", "--batch-size", "32")
    assert code == 0
    assert "stage1 node3" in out
    assert "stage1.edge0->1" in out
    assert "in_degree_source" in out
    code, out, _ = run(capsys, "diagnose", "3_33_333", "--width", "8", "--cells", "1", "--batch-size", "32", "--json",
                       "--inits", "default,in_degree")
    doc = json.loads(out)
    assert code == 0
    assert [r["rule"] for r in doc["rules"]] == ["default", "in_degree"]


def test_killed_run_resumes_to_the_same_result(tmp_path):
    """Kill a real `nasrescale train` process after its first checkpoint, rerun the same
    command, and compare with an uninterrupted run: identical figures (CPU is deterministic)."""
    base = [sys.executable, "-m", "nasrescale", "train", "3_34_131", "--epochs", "5", "--width", "4", "--cells", "1",
            "--train-subset", "1200", "--test-subset", "200", "--batch-size", "100", "--quiet", "--seed", "3"]
    env = {**os.environ, "NASRESCALE_CACHE": str(tmp_path / "cache")}
    ckpt = tmp_path / "run.pt"
    proc = subprocess.Popen(base + ["--checkpoint", str(ckpt)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 900  # seconds on an idle machine; a starved one may take minutes to its first epoch
    while not ckpt.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert ckpt.exists(), "the run wrote no checkpoint before it ended or the deadline passed"
    state = torch.load(ckpt, weights_only=True)
    assert 1 <= state["epochs_done"] < 5, "the run should have been killed mid-way"
    # the thread count orders the reductions: the resumed run keeps the stored one (no --threads), the
    # uninterrupted run is given it (each run otherwise reads the load as it starts: a busy machine picks fewer)
    resumed = subprocess.run(base + ["--checkpoint", str(ckpt)], env=env, capture_output=True, text=True, check=True)
    fresh = subprocess.run(base + ["--no-checkpoint", "--threads", str(state["threads"])], env=env,
                           capture_output=True, text=True, check=True)
    a, b = json.loads(resumed.stdout), json.loads(fresh.stdout)
    assert a["resumed_from"] == state["epochs_done"]
    assert b["resumed_from"] is None
    assert a["provenance"]["threads"] == b["provenance"]["threads"] == state["threads"]
    for key in ("test_accuracy", "test_loss", "train_loss_last", "train_loss_best", "epochs_run"):
        assert a[key] == b[key], key
