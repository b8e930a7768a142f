"""The released code's class-mean accuracy (a compatibility metric) against hand computations."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from nasrescale.data.types import ImageData
from nasrescale.protocol import Protocol
from nasrescale.train import train
from nasrescale.train.augment import normalize, stats_tensor
from nasrescale.train.metrics import class_counts, released_class_mean


def _from_confusion(conf: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Labels and predictions realising a confusion matrix (rows: true class, columns: predicted)."""
    y, p = [], []
    for t, row in enumerate(conf):
        for q, n in enumerate(row):
            y += [t] * n
            p += [q] * n
    return torch.tensor(p), torch.tensor(y)


def test_released_metric_equals_a_hand_computation_on_a_confusion_matrix():
    # 12 classes; class 3 has no test images; classes 10 and 11 are outside the released code's 10
    conf = [[0] * 12 for _ in range(12)]
    conf[0][0], conf[0][1] = 3, 1          # recall 75%
    conf[1][1] = 2                          # 100%
    conf[2][0], conf[2][2] = 4, 1           # 20%
    conf[10][10], conf[11][0] = 5, 5        # ignored by the released metric
    pred, y = _from_confusion(conf)
    hits, counts = class_counts(pred, y, 12)
    assert released_class_mean(hits, counts) == (75.0 + 100.0 + 20.0) / 10   # 7 classes with no images count 0
    top1 = 100.0 * int((pred == y).sum()) / len(y)
    assert top1 == 100.0 * (3 + 2 + 1 + 5) / 21  # the released number is not top-1
    assert released_class_mean(hits, counts) != top1


def test_released_metric_equals_top1_on_a_balanced_ten_class_set():
    conf = [[0] * 10 for _ in range(10)]
    for c in range(10):
        conf[c][c], conf[c][(c + 1) % 10] = c, 10 - c  # 10 images per class
    pred, y = _from_confusion(conf)
    hits, counts = class_counts(pred, y, 10)
    assert released_class_mean(hits, counts) == pytest.approx(100.0 * int((pred == y).sum()) / 100, rel=1e-12)


def test_engine_records_the_released_metric_of_its_final_model():
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, 256, (60, 3, 4, 4), dtype=torch.uint8, generator=g)
    y = torch.randint(0, 3, (60,), generator=g)
    data = ImageData("toy", x, y, x[:30], y[:30], 3, (0.5, 0.5, 0.5), (0.25, 0.25, 0.25), crop_padding=1)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(48, 3))
    protocol = Protocol("t", epochs=2, batch_size=10, momentum=0.0, nesterov=False, weight_decay=0.0, augment=False)
    res = train(model, data, protocol, [{"params": model.parameters(), "lr": 0.05}])
    with torch.no_grad():
        pred = model(normalize(data.test_images, stats_tensor(data.mean, "cpu"), stats_tensor(data.std, "cpu"))).argmax(1)
    recalls = [float((pred[data.test_labels == c] == c).double().mean() * 100) for c in range(3)]
    assert res.test_accuracy_released10 == pytest.approx(sum(recalls) / 10, rel=1e-12)
    assert res.to_json()["test_accuracy_released10"] == res.test_accuracy_released10
