"""Real MNIST digits, traced onto the canvas with the mouse, read by a trained model.

Needs the real MNIST files (``../shared/data/mnist`` beside the repository, or
``$PTCORE_TEST_MNIST_DIR``); a fresh clone without them skips this test.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from workbench.core.config import TrainConfig
from workbench.core.data.registry import DATASET_INFO
from workbench.core.data.sources import load_arrays
from workbench.core.models.builtins import snapshot_state
from workbench.core.train.engine import fit, prepare_run
from workbench.ui.panels.draw import DrawPanel
from workbench.ui.widgets.draw_widgets import CANVAS_SIDE

pytestmark = [pytest.mark.gui, pytest.mark.slow]

SCALE = CANVAS_SIDE // 28  # canvas pixels per MNIST pixel
INK = 128  # trace the pixels at least half inked


def _mnist_root() -> Path | None:
    candidates = [
        os.environ.get("PTCORE_TEST_MNIST_DIR"),
        Path(__file__).resolve().parents[3] / "shared" / "data" / "mnist",
    ]
    for candidate in candidates:
        if candidate and (Path(candidate) / "MNIST" / "raw").is_dir():
            return Path(candidate)
    return None


MNIST_ROOT = _mnist_root()


def ink_runs(image: np.ndarray) -> list[tuple[int, int, int]]:
    """(row, first column, last column) of every horizontal run of ink."""
    runs = []
    for row in range(image.shape[0]):
        inked = np.flatnonzero(image[row] >= INK)
        if inked.size == 0:
            continue
        breaks = np.flatnonzero(np.diff(inked) > 1)
        starts = np.r_[inked[0], inked[breaks + 1]]
        ends = np.r_[inked[breaks], inked[-1]]
        runs.extend((row, int(a), int(b)) for a, b in zip(starts, ends, strict=True))
    return runs


def trace(canvas, image: np.ndarray) -> None:
    """Draw over the digit's ink with the mouse, one stroke per run, pixel by pixel."""
    canvas.set_pen_width(SCALE)
    for row, first, last in ink_runs(image):
        y = row * SCALE + SCALE // 2
        xs = [col * SCALE + SCALE // 2 for col in range(first, last + 1)]
        QTest.mousePress(canvas, Qt.LeftButton, Qt.NoModifier, QPoint(xs[0], y))
        for x in xs[1:]:
            QTest.mouseMove(canvas, QPoint(x, y))
        QTest.mouseRelease(canvas, Qt.LeftButton, Qt.NoModifier, QPoint(xs[-1], y))


@pytest.mark.skipif(
    MNIST_ROOT is None,
    # "missing test data" makes tests/conftest.py list this skip in the summary.
    reason="missing test data: no MNIST/raw/ in $PTCORE_TEST_MNIST_DIR or "
    "../shared/data/mnist beside the repository",
)
def test_traced_mnist_test_digits_are_recognised(qtbot):
    arrays = load_arrays("mnist", MNIST_ROOT, download=False)
    run = prepare_run(TrainConfig(dataset="mnist"), arrays=arrays)
    fit(run)  # one epoch: ~99% on the test set

    panel = DrawPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.canvas.setFixedSize(CANVAS_SIDE, CANVAS_SIDE)
    qtbot.waitUntil(lambda: panel.canvas.width() == CANVAS_SIDE)
    panel.set_reader("small-cnn", "mnist", DATASET_INFO["mnist"].class_names)
    panel.set_weights(snapshot_state(run.model), "trained on MNIST")

    rng = np.random.default_rng(2026)
    picks = rng.choice(len(arrays.test_labels), size=10, replace=False)
    read = []
    for index in picks:
        panel.canvas.clear()
        image = arrays.test_images[index].numpy()
        trace(panel.canvas, image)
        assert panel.reading is not None
        read.append((int(arrays.test_labels[index]), panel.reading.label))
    correct = sum(truth == label for truth, label in read)
    assert correct >= 9, read
