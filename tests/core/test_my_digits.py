"""The user's drawings on disk: add, relabel, delete, split, and damage."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.build import build_loaders
from workbench.core.data.my_digits import INDEX_NAME, MyDigits
from workbench.core.data.registry import DataError
from workbench.core.data.sources import load_run_arrays, mix_replay


def drawing(label: int, side: int = 280) -> np.ndarray:
    """A crude, label-dependent drawing: a bar whose position encodes the label."""
    image = np.zeros((side, side), np.float32)
    left = 20 + label * 22
    image[40:240, left : left + 18] = 1.0
    image[40 + label * 15 : 60 + label * 15, 20:260] = 0.8
    return image


def ink_extent(field: np.ndarray, threshold: float = 0.1) -> tuple[int, int, int, int]:
    """(first row, last row, first column, last column) of the ink, in [0, 1] units."""
    inked = field > threshold
    rows = np.flatnonzero(inked.any(axis=1))
    cols = np.flatnonzero(inked.any(axis=0))
    return int(rows[0]), int(rows[-1]), int(cols[0]), int(cols[-1])


def centre_of_mass(field: np.ndarray) -> tuple[float, float]:
    ys, xs = np.indices(field.shape)
    mass = field.sum()
    return float((ys * field).sum() / mass), float((xs * field).sum() / mass)


def test_added_drawings_are_listed_with_both_images(my_digits_dir):
    store = MyDigits()
    assert store.folder == my_digits_dir
    sample = store.add(drawing(3), 3)
    assert [s.id for s in store.samples()] == [sample.id]
    assert sample.label == 3
    assert sample.style == "mnist"
    strokes = store.stroke_image(sample.id)
    assert strokes.dtype == np.uint8
    assert strokes.shape == (280, 280)
    np.testing.assert_array_equal(strokes, np.rint(drawing(3) * 255).astype(np.uint8))
    field = store.field(sample.id)
    assert field.dtype == np.uint8
    assert field.shape == (28, 28)
    # The MNIST recipe, checked by hand: drawing(3)'s ink is 200 rows x 240
    # columns (rows 40-239, columns 20-259), so the long side becomes 20 pixels
    # and the other round(200 * 20 / 240) = 17, the aspect kept...
    pixels = field.astype(np.float64) / 255
    top, bottom, left, right = ink_extent(pixels)
    assert (bottom - top + 1, right - left + 1) == (17, 20)
    # ...placed by centre of mass at the field's centre (the clip does not bite
    # here: the box can move 4 columns and 5 rows either way).
    cy, cx = centre_of_mass(pixels)
    assert abs(cy - 13.5) <= 0.5
    assert abs(cx - 13.5) <= 0.5
    # The index is plain JSON a user can read.
    data = json.loads((store.folder / INDEX_NAME).read_text())
    assert data["samples"][0]["label"] == 3


def test_relabel_and_delete():
    store = MyDigits()
    a = store.add(drawing(1), 1)
    b = store.add(drawing(2), 2)
    store.relabel(a.id, 7)
    assert [(s.id, s.label) for s in store.samples()] == [(a.id, 7), (b.id, 2)]
    store.delete(a.id)
    assert [s.id for s in store.samples()] == [b.id]
    assert not (store.folder / f"{a.id}.png").exists()
    with pytest.raises(DataError, match="no drawing"):
        store.delete(a.id)
    with pytest.raises(DataError, match="0-9"):
        store.relabel(b.id, 10)


def test_bad_input_is_refused_and_nothing_is_written():
    store = MyDigits()
    with pytest.raises(DataError, match="no ink"):
        store.add(np.zeros((50, 50), np.float32), 1)
    with pytest.raises(DataError, match="0-9"):
        store.add(drawing(1), -1)
    assert store.samples() == []
    assert not (store.folder / INDEX_NAME).exists()


def test_a_damaged_index_is_reported_and_left_alone():
    store = MyDigits()
    store.add(drawing(1), 1)
    index = store.folder / INDEX_NAME
    index.write_text("{not json")
    with pytest.raises(DataError, match="damaged"):
        store.samples()
    with pytest.raises(DataError, match="damaged"):
        store.add(drawing(2), 2)
    assert index.read_text() == "{not json"


def test_split_holds_out_every_fifth_drawing_of_a_class():
    store = MyDigits()
    for _ in range(6):
        store.add(drawing(4), 4)
    for _ in range(3):
        store.add(drawing(8), 8)
    arrays = store.arrays("mnist")
    assert arrays.train_labels.tolist() == [4, 4, 4, 4, 4, 8, 8, 8]
    assert arrays.test_labels.tolist() == [4]
    assert arrays.train_images.dtype == torch.uint8
    assert arrays.train_images.shape == (8, 28, 28)


def test_fields_are_remade_in_the_style_a_run_asks_for():
    store = MyDigits()
    store.add(drawing(5), 5, style="mnist")
    sample_id = store.samples()[0].id
    digits = store.arrays("digits").train_images[0].numpy()
    mnist = store.arrays("mnist").train_images[0].numpy()
    assert digits.dtype == mnist.dtype == np.uint8
    np.testing.assert_array_equal(mnist, store.field(sample_id))  # the stored field
    # The UCI digits recipe, checked by hand: the ink's box (200 x 240) is
    # stretched to 8x8, shown as 20x20 at rows and columns 4-23, aspect not kept.
    pixels = digits.astype(np.float64) / 255
    assert ink_extent(pixels) == (4, 23, 4, 23)
    outside = pixels.copy()
    outside[4:24, 4:24] = 0
    assert outside.max() == 0
    # The MNIST recipe keeps the aspect instead: 17 rows for 20 columns.
    top, bottom, left, right = ink_extent(mnist.astype(np.float64) / 255)
    assert (bottom - top + 1, right - left + 1) == (17, 20)
    # The drawing's layout survives: its full-height bar (columns 130-147, so
    # 110-127 of the 240-column box) lands at columns 9.2-10.7 of the 20.
    column_ink = pixels[4:24, 4:24].sum(axis=0)
    assert 8 <= int(np.argmax(column_ink)) <= 11


def test_no_drawings_is_a_clear_error():
    with pytest.raises(DataError, match="no drawings yet"):
        MyDigits().arrays()


def test_my_digits_run_mixes_replay_and_normalises_like_its_base(tiny_arrays):
    store = MyDigits()
    for label in range(10):
        store.add(drawing(label), label)
    cfg = TrainConfig(dataset="my-digits", base_dataset="mnist", replay=40)
    arrays = load_run_arrays(cfg, base_arrays=tiny_arrays)
    mine = store.arrays("mnist")
    assert len(arrays.train_labels) == len(mine.train_labels) + 40
    assert torch.equal(arrays.test_images, mine.test_images)
    assert torch.equal(arrays.train_images[:10], mine.train_images)
    # The replay is a fixed, seeded pick of base training images.
    again = mix_replay(mine, tiny_arrays, 40, cfg.seed)
    assert torch.equal(again.train_images, arrays.train_images)
    loaders = build_loaders(cfg, "cpu", arrays=arrays)
    x, _ = next(iter(loaders.val if len(loaders.val) else loaders.train))
    # MNIST's statistics: a blank pixel becomes -mean/std.
    assert x.min().item() == pytest.approx(-0.1307 / 0.3081, rel=1e-4)


def test_replay_needs_my_digits():
    with pytest.raises(ConfigError, match="replay"):
        TrainConfig(dataset="digits", replay=10)
    with pytest.raises(ConfigError, match="base_dataset"):
        TrainConfig(dataset="my-digits", base_dataset="kmnist")
