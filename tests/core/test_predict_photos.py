"""Reading an image file with a photo model: the run's exact input, any shape."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from workbench.core.data.registry import DATASET_INFO, DatasetInfo
from workbench.core.models.builtins import build_model, snapshot_state
from workbench.core.predict import (
    PredictError,
    Predictor,
    load_image,
    photo_input,
    stored_input,
)

NAMES_37 = tuple(f"breed {i}" for i in range(37))


def _folder_info(channels: int, size: int, names: tuple[str, ...]) -> DatasetInfo:
    """A folder's description as a run measures it (statistics picked by hand)."""
    return DatasetInfo(
        name="folder",
        title="Image folder pets",
        num_classes=len(names),
        class_names=names,
        mean=(0.52, 0.47, 0.40)[:channels],
        std=(0.21, 0.23, 0.26)[:channels],
        offline=True,
        image_shape=(channels, size, size),
    )


def _photo(path, size=(45, 30), seed=0):
    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 256, (*size, 3), dtype=np.uint8)).save(path)
    return path


def _predictor(model_name: str, dataset: str, info: DatasetInfo, seed: int = 3):
    model = build_model(
        model_name, info.num_classes, seed=seed, input_shape=info.image_shape
    )
    predictor = Predictor(model_name, dataset, info=info)
    predictor.load_weights(snapshot_state(model))
    model.eval()
    return predictor, model


@pytest.mark.parametrize(
    ("dataset", "info"),
    [
        ("cifar10", DATASET_INFO["cifar10"]),
        ("folder", _folder_info(1, 24, NAMES_37)),
    ],
    ids=["rgb-10-classes", "gray-37-classes"],
)
def test_a_file_reads_as_the_model_on_photo_input_bit_for_bit(tmp_path, dataset, info):
    path = _photo(tmp_path / "photo.png")
    predictor, model = _predictor("small-cnn", dataset, info)
    received: list[torch.Tensor] = []
    predictor.model.register_forward_pre_hook(
        lambda module, args: received.append(args[0].detach().clone())
    )
    reading = predictor.read_file(path, saliency=True)

    expected_input = photo_input(path, info)
    assert expected_input.shape == (1, *info.image_shape)
    assert torch.equal(reading.input, expected_input)
    assert torch.equal(received[0], expected_input)  # what the model was given
    with torch.no_grad():
        logits = model(expected_input)
    expected = torch.softmax(logits.float(), dim=1)[0].double().numpy()
    np.testing.assert_array_equal(reading.probabilities, expected)
    assert reading.class_names == info.class_names
    assert len(reading.probabilities) == info.num_classes
    # The field is the input before normalisation; one channel is (H, W).
    field = torch.from_numpy(reading.field).reshape(expected_input.shape)
    torch.testing.assert_close(info.normalise(field), expected_input)
    assert reading.saliency is not None
    assert reading.saliency.shape == info.image_shape[1:]


def test_saliency_of_colour_keeps_each_pixels_largest_channel(tmp_path):
    info = DATASET_INFO["cifar10"]
    predictor, model = _predictor("small-cnn", "cifar10", info)
    reading = predictor.read_file(_photo(tmp_path / "p.jpg"), saliency=True)
    x = reading.input.clone().requires_grad_(True)
    model(x)[0, reading.label].backward()
    expected = x.grad.abs()[0].amax(dim=0)
    expected = (expected / expected.max()).numpy()
    np.testing.assert_allclose(reading.saliency, expected, rtol=1e-4, atol=1e-6)
    assert reading.saliency.max() == pytest.approx(1.0)


def test_a_stored_colour_image_reads_as_the_loaders_feed_it():
    info = _folder_info(3, 16, ("cat", "dog", "zebra crossing"))
    predictor, _ = _predictor("mlp", "folder", info)
    image = np.random.default_rng(1).integers(0, 256, (3, 16, 16), dtype=np.uint8)
    reading = predictor.read_stored(image)
    loaders_input = info.normalise(torch.from_numpy(image).float().div(255))[None]
    assert torch.equal(reading.input, loaders_input)
    assert torch.equal(stored_input(image, info), loaders_input)
    assert reading.field.shape == (3, 16, 16)
    assert reading.class_names == ("cat", "dog", "zebra crossing")


def test_a_digit_model_reads_a_file_through_its_recipe(tmp_path):
    path = tmp_path / "seven.png"
    picture = np.full((60, 40), 255, np.uint8)  # dark ink on white paper
    picture[10:50, 18:24] = 0
    Image.fromarray(picture).save(path)
    predictor, _ = _predictor("mlp", "mnist", DATASET_INFO["mnist"])
    from_file = predictor.read_file(path)
    by_hand = predictor.read(load_image(path))
    assert torch.equal(from_file.input, by_hand.input)
    assert from_file.input.shape == (1, 1, 28, 28)


@pytest.mark.parametrize("dataset", ["cifar10", "mnist"])
def test_files_that_are_no_image_are_a_clear_error(tmp_path, dataset):
    info = DATASET_INFO[dataset]
    predictor, _ = _predictor("mlp", dataset, info)
    (tmp_path / "empty.png").write_bytes(b"")
    (tmp_path / "notes.png").write_text("just some text, no pixels", encoding="utf-8")
    whole = _photo(tmp_path / "whole.png", size=(64, 64)).read_bytes()
    (tmp_path / "cut.png").write_bytes(whole[: len(whole) // 2])
    for name in ("empty.png", "notes.png", "cut.png", "missing.png"):
        with pytest.raises(PredictError) as caught:
            predictor.read_file(tmp_path / name)
        assert name in str(caught.value)


def test_a_drawing_given_to_a_photo_model_is_refused_in_words():
    predictor, _ = _predictor("mlp", "cifar10", DATASET_INFO["cifar10"])
    with pytest.raises(PredictError, match="photos"):
        predictor.read(np.ones((28, 28), np.float32))
