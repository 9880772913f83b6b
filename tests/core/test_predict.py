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


def _trained_predictor_and_model():
    from workbench.core.models import snapshot_state
    from workbench.core.predict import Predictor

    model = build_model("small-cnn", 10, seed=1)
    predictor = Predictor("small-cnn", "mnist", tuple("0123456789"))
    predictor.load_weights(snapshot_state(model))
    return predictor, model


def test_predictor_reads_with_a_private_eval_copy():
    predictor, model = _trained_predictor_and_model()
    model.train()
    received = []
    predictor.model.register_forward_pre_hook(
        lambda module, args: received.append((module.training, args[0].clone()))
    )
    reading = predictor.read(_stroke_image())
    assert model.training  # the source model's mode is untouched
    assert len(received) == 1
    was_training, tensor = received[0]
    assert not was_training
    assert torch.equal(tensor, reading.input)
    assert torch.equal(reading.input, to_model_input(reading.field, "mnist"))
    # The private copy computes what the source model computes in eval mode.
    model.eval()
    with torch.no_grad():
        expected = torch.softmax(model(reading.input), 1)[0].double().numpy()
    np.testing.assert_allclose(reading.probabilities, expected, rtol=1e-5)
    assert reading.probabilities.sum() == pytest.approx(1.0)
    for p in predictor.model.parameters():
        assert p.data_ptr() not in {q.data_ptr() for q in model.parameters()}


def test_predictor_naive_toggle_changes_only_the_recipe():
    predictor, _ = _trained_predictor_and_model()
    styled = predictor.read(_stroke_image())
    naive = predictor.read(_stroke_image(), naive=True)
    assert naive.naive
    assert not styled.naive
    np.testing.assert_array_equal(naive.field, naive_resize(_stroke_image()))
    np.testing.assert_array_equal(styled.field, mnist_style(_stroke_image()))


def test_saliency_is_the_input_gradient_of_the_predicted_logit():
    predictor, model = _trained_predictor_and_model()
    reading = predictor.read(_stroke_image(), saliency=True)
    assert reading.saliency is not None
    assert reading.saliency.shape == (28, 28)
    assert reading.saliency.max() == pytest.approx(1.0)
    x = reading.input.clone().requires_grad_(True)
    model.eval()
    model(x)[0, reading.label].backward()
    expected = x.grad.abs()[0, 0]
    expected = (expected / expected.max()).numpy()
    np.testing.assert_allclose(reading.saliency, expected, rtol=1e-4, atol=1e-6)
    assert all(p.grad is None for p in predictor.model.parameters())


def test_predictor_refuses_weights_of_another_model():
    from workbench.core.checkpoints import CheckpointError
    from workbench.core.predict import Predictor

    predictor = Predictor("small-cnn", "mnist", tuple("0123456789"))
    with pytest.raises(CheckpointError, match="does not fit"):
        predictor.load_weights(build_model("mlp", 10).state_dict())


def test_predictor_on_an_empty_drawing_is_a_clear_error():
    predictor, _ = _trained_predictor_and_model()
    blank = np.zeros((50, 50), np.float32)
    for naive in (False, True):
        with pytest.raises(PredictError, match="no ink"):
            predictor.read(blank, naive=naive)
