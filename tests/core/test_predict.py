from __future__ import annotations

import numpy as np
import pytest
import torch

from workbench.core.data import DATASET_INFO
from workbench.core.models import build_model
from workbench.core.predict import (
    PredictError,
    mnist_style,
    naive_resize,
    predict,
    preprocess,
    to_model_input,
)


def _stroke_image() -> np.ndarray:
    """A thick off-centre vertical bar on a 200x200 canvas."""
    image = np.zeros((200, 200), np.float32)
    image[20:120, 30:50] = 1.0
    return image


def test_mnist_style_fits_20_box_and_centres_mass():
    out = mnist_style(_stroke_image())
    assert out.shape == (28, 28)
    rows = np.flatnonzero(out.max(1) > 0.1)
    assert rows[-1] - rows[0] + 1 == 20  # the long side is scaled to 20 pixels
    ys, xs = np.indices(out.shape)
    cy, cx = (ys * out).sum() / out.sum(), (xs * out).sum() / out.sum()
    assert abs(cy - 13.5) <= 1
    assert abs(cx - 13.5) <= 1


def test_naive_resize_keeps_the_off_centre_position():
    out = naive_resize(_stroke_image())
    assert out.shape == (28, 28)
    assert out[:, :10].sum() > out[:, 14:].sum()


def test_empty_canvas_is_a_clear_error():
    with pytest.raises(PredictError, match="no ink"):
        mnist_style(np.zeros((50, 50), np.float32))


def test_normalisation_uses_the_dataset_statistics():
    info = DATASET_INFO["mnist"]
    tensor = to_model_input(np.ones((28, 28), np.float32), "mnist")
    assert tensor.shape == (1, 1, 28, 28)
    assert torch.allclose(tensor, torch.full_like(tensor, (1 - info.mean) / info.std))


def test_predict_uses_eval_mode_and_restores_training_mode():
    model = build_model("cnn", seed=0)  # has dropout: eval must make it deterministic
    model.train()
    batch = preprocess(_stroke_image(), "mnist")
    first = predict(model, batch, DATASET_INFO["mnist"].class_names)[0]
    second = predict(model, batch, DATASET_INFO["mnist"].class_names)[0]
    assert model.training
    assert first.probabilities == second.probabilities
    assert abs(sum(first.probabilities) - 1) < 1e-5
    assert first.top(3)[0][1] == max(first.probabilities)
