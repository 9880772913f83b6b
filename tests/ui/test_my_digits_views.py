"""My digits as the user sees them: thumbnails and strips in the reader's recipe."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtCore import QSize
from PySide6.QtGui import QImage

from tests.core.test_finetune import mirrored_digits
from workbench.core.data.my_digits import MyDigits
from workbench.core.data.registry import ImageArrays
from workbench.ui.panels.data import sample_strip

pytestmark = pytest.mark.gui

GAP_GREY = 60


def to_array(image: QImage) -> np.ndarray:
    gray = image.convertToFormat(QImage.Format.Format_Grayscale8)
    h, w, bpl = gray.height(), gray.width(), gray.bytesPerLine()
    buffer = np.frombuffer(gray.constBits(), np.uint8, count=bpl * h)
    return buffer.reshape(h, bpl)[:, :w].copy()


def thumbnail(item) -> np.ndarray:
    """The thumbnail's pixels at 1:1 (it is the 28x28 field scaled by 2)."""
    return to_array(item.icon().pixmap(QSize(56, 56)).toImage())[::2, ::2]


def saved_in_mnist_style(per_class: int = 1, skip=()) -> MyDigits:
    store = MyDigits()
    for image, label in mirrored_digits(per_class=per_class):
        if label not in skip:
            store.add(image, label, style="mnist")
    return store


def test_thumbnails_follow_the_readers_recipe(qtbot, window):
    store = saved_in_mnist_style()
    window.findChild(type(window.commands.open), "showDrawAction").trigger()
    panel = window.draw_panel  # reads like the bundled digits (FAST)
    panel.refresh_samples()
    assert panel.sample_list.count() == 10
    for row, sample in enumerate(store.samples()):
        shown = thumbnail(panel.sample_list.item(row))
        digits = store.field_in_style(sample, "digits")
        np.testing.assert_array_equal(shown, digits)
        assert not np.array_equal(shown, store.field(sample.id))  # saved as mnist
    # A digit and its count stay together on a wrapped line.
    assert "7:\u00a01" in panel.counts_label.text()


def cells(strip: np.ndarray, side: int = 28, gap: int = 2) -> list[list[np.ndarray]]:
    """The strip's cells, [row][column]."""
    rows = (strip.shape[0] + gap) // (side + gap)
    cols = (strip.shape[1] + gap) // (side + gap)
    return [
        [
            strip[
                r * (side + gap) : r * (side + gap) + side,
                c * (side + gap) : c * (side + gap) + side,
            ]
            for c in range(cols)
        ]
        for r in range(rows)
    ]


def test_a_digit_without_images_leaves_its_column_empty():
    rng = np.random.default_rng(0)
    labels = torch.tensor([0, 1, 3, 4, 5, 6, 7, 8, 0, 1, 3, 4, 5, 6, 7, 8])  # no 2, 9
    images = torch.from_numpy(rng.integers(0, 256, (len(labels), 28, 28), np.uint8))
    # The class in each image's corner, to read back which image a cell shows.
    images[:, 0, 0] = labels.to(torch.uint8) * 10
    strip = sample_strip(ImageArrays(images, labels, images[:0], labels[:0]))
    assert strip.shape == (2 * 28 + 2, 10 * 28 + 18)
    for row in cells(strip):
        for digit, cell in enumerate(row):
            if digit in (2, 9):
                assert (cell == GAP_GREY).all(), digit  # an empty placeholder
            else:
                assert cell[0, 0] == digit * 10


def test_the_my_digits_strip_is_prepared_like_the_base_dataset(qtbot, window):
    store = saved_in_mnist_style(per_class=2, skip=(3,))
    data = window.data_panel
    data.dataset_combo.setCurrentIndex(data.dataset_combo.findData("my-digits"))
    data.base_combo.setCurrentIndex(data.base_combo.findData("digits"))
    qtbot.waitUntil(data.is_loaded, timeout=10_000)
    strip = to_array(data.strip_label.pixmap().toImage())
    by_digit: dict[int, list] = {}
    for sample in store.samples():
        by_digit.setdefault(sample.label, []).append(sample)
    for r, row in enumerate(cells(strip)):
        for digit, cell in enumerate(row):
            if digit == 3:
                assert (cell == GAP_GREY).all()
                continue
            expected = store.field_in_style(by_digit[digit][r], "digits")
            np.testing.assert_array_equal(cell, expected)
    # Prepared like MNIST: the strip follows the choice.
    data.base_combo.setCurrentIndex(data.base_combo.findData("mnist"))
    strip = to_array(data.strip_label.pixmap().toImage())
    first = store.samples()[0]
    np.testing.assert_array_equal(
        cells(strip)[0][first.label], store.field_in_style(first, "mnist")
    )
