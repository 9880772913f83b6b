from __future__ import annotations

import numpy as np
import pytest
import torch

from workbench.core.data.registry import DATASET_INFO
from workbench.core.models.builtins import build_model
from workbench.core.predict import (
    PredictError,
    mnist_style,
    naive_resize,
    predict,
    preprocess,
    to_model_input,
)

# Published MNIST pixel statistics (of train_images / 255), typed in by hand.
MNIST_MEAN, MNIST_STD = 0.1307, 0.3081
# The bundled digits' statistics, as measured (tests/core/test_data.py recomputes them).
DIGITS_MEAN, DIGITS_STD = 0.1558, 0.2774


def _stroke_image() -> np.ndarray:
    """A thick off-centre vertical bar on a 200x200 canvas."""
    image = np.zeros((200, 200), np.float32)
    image[20:120, 30:50] = 1.0
    return image


def _stroke_mnist_field() -> np.ndarray:
    """_stroke_image through the MNIST recipe, worked out by hand.

    The ink is exactly the 100 x 20 bar: scaled by 20/100 it is a 20 x 4 block of
    full ink (a constant stays constant under resizing), placed at
    ((28 - 20) // 2, (28 - 4) // 2) = (4, 12). Symmetric, so its centre of mass
    is already (13.5, 13.5): no shift.
    """
    field = np.zeros((28, 28), np.float32)
    field[4:24, 12:16] = 1.0
    return field


def _check_naive_stroke_field(out: np.ndarray) -> None:
    """The bar squashed by 28/200 where it was: rows 2.8-16.8, columns 4.2-7.0."""
    assert out.shape == (28, 28)
    scale = 28 / 200
    # Resizing keeps the ink's total: 100 x 20 pixels of ink times scale^2.
    assert out.sum() == pytest.approx(100 * 20 * scale**2, rel=0.01)
    ys, xs = np.indices(out.shape)
    # Pixel centres map as (i + 0.5) * scale - 0.5: the bar's centre (69.5, 39.5).
    cy, cx = (ys * out).sum() / out.sum(), (xs * out).sum() / out.sum()
    assert cy == pytest.approx(70 * scale - 0.5, abs=0.1)
    assert cx == pytest.approx(40 * scale - 0.5, abs=0.1)
    # Nothing beyond one pixel of the bar's footprint (rows 2-16, columns 4-6).
    outside = out.copy()
    outside[1:18, 3:8] = 0
    assert outside.max() == 0


def test_mnist_style_fits_20_box_and_centres_mass():
    out = mnist_style(_stroke_image())
    assert out.shape == (28, 28)
    np.testing.assert_allclose(out, _stroke_mnist_field(), atol=1e-6)
    rows = np.flatnonzero(out.max(1) > 0.1)
    assert rows[-1] - rows[0] + 1 == 20  # the long side is scaled to 20 pixels
    ys, xs = np.indices(out.shape)
    cy, cx = (ys * out).sum() / out.sum(), (xs * out).sum() / out.sum()
    assert abs(cy - 13.5) <= 0.5
    assert abs(cx - 13.5) <= 0.5


def test_naive_resize_keeps_the_off_centre_position():
    out = naive_resize(_stroke_image())
    _check_naive_stroke_field(out)
    assert out[:, :10].sum() > out[:, 14:].sum()


def test_empty_canvas_is_a_clear_error():
    with pytest.raises(PredictError, match="no ink"):
        mnist_style(np.zeros((50, 50), np.float32))


def test_normalisation_uses_the_dataset_statistics():
    field = np.zeros((28, 28), np.float32)
    field[4:24, 12:16] = 1.0
    field[0, 0] = 0.5
    tensor = to_model_input(field, "mnist")
    assert tensor.shape == (1, 1, 28, 28)
    assert tensor.dtype == torch.float32
    # By hand: blank -0.1307/0.3081 = -0.4242, full ink 0.8693/0.3081 = 2.8215.
    assert tensor[0, 0, 1, 1].item() == pytest.approx(-0.42421, abs=1e-4)
    assert tensor[0, 0, 10, 13].item() == pytest.approx(2.82149, abs=1e-4)
    assert tensor[0, 0, 0, 0].item() == pytest.approx(1.19864, abs=1e-4)
    expected = (torch.from_numpy(field) - MNIST_MEAN) / MNIST_STD
    torch.testing.assert_close(tensor[0, 0], expected)
    # Another dataset, its own statistics.
    digits = to_model_input(field, "digits")
    torch.testing.assert_close(
        digits[0, 0], (torch.from_numpy(field) - DIGITS_MEAN) / DIGITS_STD
    )


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
    from workbench.core.models.builtins import snapshot_state
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
    np.testing.assert_allclose(reading.field, _stroke_mnist_field(), atol=1e-6)
    expected_input = (torch.from_numpy(reading.field) - MNIST_MEAN) / MNIST_STD
    torch.testing.assert_close(reading.input, expected_input[None, None])
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
    # Each field is what its recipe makes of the drawing (worked out by hand)...
    _check_naive_stroke_field(naive.field)
    np.testing.assert_allclose(styled.field, _stroke_mnist_field(), atol=1e-6)
    # ...and the rest of the reading is the same: normalised alike, read alike.
    for reading in (naive, styled):
        expected = (torch.from_numpy(reading.field) - MNIST_MEAN) / MNIST_STD
        torch.testing.assert_close(reading.input, expected[None, None])
    assert not np.allclose(naive.probabilities, styled.probabilities)


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
    from workbench.core.checkpoints.io import CheckpointError
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


def _forward_threads(predictor) -> list[int]:
    """The intra-op thread count during each of the reader's forward passes."""
    seen: list[int] = []
    predictor.model.register_forward_pre_hook(
        lambda _module, _args: seen.append(torch.get_num_threads())
    )
    return seen


@pytest.mark.skipif(torch.get_num_threads() < 2, reason="needs 2 intra-op threads")
@pytest.mark.parametrize("how", ["read", "read_stored", "read_file"])
def test_predictor_reads_on_one_thread_and_restores_the_count(tmp_path, how):
    from PIL import Image

    predictor, _ = _trained_predictor_and_model()
    seen = _forward_threads(predictor)
    before = torch.get_num_threads()
    image = _stroke_image()
    if how == "read":
        predictor.read(image, saliency=True)
    elif how == "read_stored":
        predictor.read_stored(np.uint8(255 * image[:28, :28]), saliency=True)
    else:
        Image.fromarray(np.uint8(255 * image)).save(tmp_path / "digit.png")
        predictor.read_file(tmp_path / "digit.png", saliency=True)
    assert seen == [1]
    assert torch.get_num_threads() == before


def test_saliency_costs_one_forward_pass_and_changes_no_probability():
    predictor, _ = _trained_predictor_and_model()
    seen = _forward_threads(predictor)
    plain = predictor.read(_stroke_image())
    explained = predictor.read(_stroke_image(), saliency=True)
    assert len(seen) == 2  # one pass each, saliency included
    assert np.array_equal(explained.probabilities, plain.probabilities)
    assert torch.equal(explained.input, plain.input)
    assert not explained.input.requires_grad
    # The overlay is the one two passes made: an inference-mode pass for the
    # label, then a gradient pass for the map (rounding aside: thread counts).
    two_pass = predictor.saliency(plain.input, plain.label)
    np.testing.assert_allclose(explained.saliency, two_pass, rtol=0, atol=1e-6)


def test_explain_adds_the_saliency_a_one_pass_read_gives():
    predictor, _ = _trained_predictor_and_model()
    plain = predictor.read(_stroke_image())
    assert plain.saliency is None
    seen = _forward_threads(predictor)
    explained = predictor.explain(plain)
    assert seen == [1]  # one gradient pass, on this thread alone
    assert explained.saliency is not None
    one_pass = predictor.read(_stroke_image(), saliency=True)
    np.testing.assert_allclose(explained.saliency, one_pass.saliency, atol=1e-6)
    assert np.array_equal(explained.probabilities, plain.probabilities)
    assert explained.input is plain.input
    assert plain.saliency is None  # a new reading; the answer is left as it was


def test_predictor_reads_in_eval_mode_whatever_a_module_was_set_to():
    predictor, _ = _trained_predictor_and_model()
    before = predictor.read(_stroke_image())
    batch_norm = next(
        m for m in predictor.model.modules() if isinstance(m, torch.nn.BatchNorm2d)
    )
    batch_norm.train()  # one module only: its running statistics would move
    again = predictor.read(_stroke_image(), saliency=True)
    assert not any(m.training for m in predictor.model.modules())
    assert np.array_equal(again.probabilities, before.probabilities)
