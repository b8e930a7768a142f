"""The committed GPU slice's report names its ``rescaled`` arm's init, ``in_degree`` (the target
in-degree), not the CPU study's ``in_degree_source`` (issue 52, point 7)."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_the_committed_gpu_slice_report_names_its_in_degree_init():
    text = (RESULTS / "nb201_cifar10_gpu_slices" / "report.md").read_text()
    assert "| `rescaled` | `in_degree`: by the target layer's in-degree (the paper's text) |" in text
