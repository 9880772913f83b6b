"""The Evaluation and Layer health tabs fed by a real run in the window."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from workbench.core.data.sources import load_arrays
from workbench.core.events import Evaluation
from workbench.ui.plots.curves import SMOOTHING
from workbench.ui.widgets.draw_widgets import DigitCanvas

from .helpers import (
    BACK_TO_IDLE,
    FAST,
    bias_corrected_average,
    event_signal,
    run_to_end,
)

pytestmark = pytest.mark.gui

CFG = FAST.replace(model="small-cnn", max_steps=None, epochs=2, log_every=2)


def test_matrix_gallery_and_canvas_after_a_run(qtbot, window):
    window.apply_config(CFG.replace(frozen=("block1.*",)))
    run_to_end(qtbot, window)
    panel = window.evaluation_panel
    digits = load_arrays("digits")
    n = len(digits.test_labels)
    assert panel.shown_epoch() == 1
    for epoch in (0, 1):
        panel.epoch_slider.setValue(epoch)
        matrix = panel.shown_matrix()
        assert matrix.sum() == n  # every validation image, once
        recorded = window.current_run.history.epochs[epoch].confusion
        assert matrix.tolist() == [list(row) for row in recorded]
    matrix = panel.shown_matrix()
    for true in range(10):
        for predicted in range(10):
            panel.select_cell(true, predicted)
            shown = panel.gallery_indices()
            assert len(shown) == matrix[true, predicted]
            assert (digits.test_labels.numpy()[shown] == true).all()
    # "Open in canvas" puts the selected image on the digit canvas.
    panel.select_cell(3, 3)
    index = panel.gallery_indices()[0]
    panel.open_button.click()
    assert window.tabs.currentWidget() is window.draw_page
    canvas_image = window.draw_panel.canvas.image()
    assert canvas_image.max() > 0.5
    assert window.draw_panel.reading is not None

    # Layer health: the frozen block shows a zero gradient, the head does not.
    health = window.health_panel
    for layer in ("block1.0", "block1.2"):
        steps, grads = health.grad_plot.data(layer)
        # 2 epochs of 23 steps, logged every 2: health every 10 steps and the last
        assert list(steps) == [10, 20, 30, 40, 46]
        assert not grads.any()
    _, head = health.grad_plot.data("head")
    assert (head > 0).all()
    layer, epoch, counts = health.shown_histogram()
    assert epoch == 1
    params = dict(window.current_run.model.named_modules())[layer].parameters(False)
    assert counts.sum() == sum(p.numel() for p in params)
    assert index >= 0


def test_opening_a_checkpoint_restores_the_matrices_and_health(qtbot, window, tmp_path):
    window.apply_config(CFG)
    run_to_end(qtbot, window)
    folder_checkpoint = window.run_folder.checkpoint_path
    before = [
        [list(row) for row in e.confusion] for e in window.current_run.history.epochs
    ]
    window.reset_run()
    assert window.evaluation_panel.shown_matrix() is None
    with qtbot.waitSignal(
        window.controller.state_changed,
        timeout=30_000,
        **BACK_TO_IDLE,
    ):
        window.files.open_checkpoint(folder_checkpoint)
    panel = window.evaluation_panel
    panel.epoch_slider.setValue(0)
    assert panel.shown_matrix().tolist() == before[0]
    panel.epoch_slider.setValue(1)
    assert panel.shown_matrix().tolist() == before[1]
    panel.select_cell(0, 0)
    assert len(panel.gallery_indices()) == before[1][0][0]  # the model's own
    # Layer health comes back from the run's ledger.
    # 46 steps: sampled every 10 and at the last.
    steps, _ = window.health_panel.grad_plot.data("head")
    assert steps.tolist() == [10, 20, 30, 40, 46]
    assert window.health_panel.shown_histogram() is not None
    assert np.asarray(before).sum() == 2 * 360


def test_open_in_canvas_shows_the_cells_own_validation_image(qtbot, window):
    """The gallery item opened is the validation image of that cell, not another.

    Expected images come from the test split loaded here, indexed by the
    evaluation's own predictions; the smoothed loss is checked on the way.
    """
    evaluations = []
    event_signal(window, Evaluation).connect(evaluations.append)
    window.apply_config(FAST.replace(max_steps=None, epochs=1, log_every=1))
    run_to_end(qtbot, window)
    qtbot.waitUntil(lambda: len(evaluations) == 1, timeout=5_000)
    ev = evaluations[0]
    digits = load_arrays("digits")
    val_images = digits.test_images.numpy()
    np.testing.assert_array_equal(ev.labels, digits.test_labels.numpy())
    assert len({image.tobytes() for image in val_images}) > 0.9 * len(val_images)

    panel = window.evaluation_panel
    matrix = ev.confusion()
    errors = matrix * (1 - np.eye(len(matrix), dtype=matrix.dtype))
    cells = [(int(np.argmax(np.diag(matrix))),) * 2]
    if errors.max() > 0:
        worst = np.unravel_index(errors.argmax(), matrix.shape)
        cells.append((int(worst[0]), int(worst[1])))
    for true, predicted in cells:
        panel.select_cell(true, predicted)
        hits = np.flatnonzero((ev.labels == true) & (ev.predictions == predicted))
        order = hits[np.argsort(-ev.losses[hits], kind="stable")]
        assert panel.gallery.count() == len(order) > 0
        for k in sorted({0, len(order) // 2, len(order) - 1}):
            expected = val_images[order[k]].astype(np.float32) / 255.0
            window.tabs.setCurrentIndex(0)
            panel.gallery.setCurrentRow(k)
            with qtbot.waitSignal(panel.open_in_canvas, timeout=1000) as blocker:
                panel.open_button.click()
            np.testing.assert_array_equal(blocker.args[0].pixels(), expected)
            assert window.tabs.currentWidget() is window.draw_page
            # The canvas holds that image, as a canvas shows it.
            reference = DigitCanvas()
            reference.set_image(expected)
            np.testing.assert_array_equal(
                window.draw_panel.canvas.image(), reference.image()
            )
            reference.deleteLater()
            with qtbot.waitSignal(panel.open_in_canvas, timeout=1000) as blocker:
                panel.gallery.itemDoubleClicked.emit(panel.gallery.item(k))
            np.testing.assert_array_equal(blocker.args[0].pixels(), expected)

    # The smoothed loss curve is the bias-corrected average of the raw one.
    steps, raw = window.loss_plot.data("loss")
    smoothed_steps, smoothed = window.loss_plot.data("smoothed")
    assert len(raw) == 23
    np.testing.assert_array_equal(steps, smoothed_steps)
    history = np.array(window.current_run.history.steps, dtype=float)
    np.testing.assert_allclose(raw, history[:, 1], rtol=1e-6)
    np.testing.assert_allclose(
        smoothed, bias_corrected_average(raw, SMOOTHING), rtol=1e-9
    )


def test_an_opened_image_reads_as_the_gallery_scored_it_until_drawn_on(qtbot, window):
    """Open in canvas: the scored tensor and the gallery's score, the true label set.

    One whole epoch, so the weights the Draw tab reads with are the ones that
    scored the gallery. A stroke on the image brings the canvas recipe back, and
    "Add to my digits" saves the image itself (not the canvas's enlargement).
    """
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest

    from workbench.core.data.my_digits import MyDigits

    evaluations = []
    event_signal(window, Evaluation).connect(evaluations.append)
    # bf16 training: validation still scores in fp32, as the Draw tab reads.
    cfg = FAST.replace(max_steps=None, epochs=1, log_every=1, precision="bf16")
    window.apply_config(cfg)
    run_to_end(qtbot, window)
    qtbot.waitUntil(lambda: len(evaluations) == 1, timeout=5_000)
    ev = evaluations[0]
    run = window.current_run
    # The tensors the evaluation scored, straight from the run's loader.
    scored_inputs = torch.cat([x.cpu() for x, _ in run.loaders.val])

    panel, draw = window.evaluation_panel, window.draw_panel
    matrix = ev.confusion()
    errors = matrix * (1 - np.eye(len(matrix), dtype=matrix.dtype))
    assert errors.max() > 0  # one epoch of an MLP leaves some mistakes
    true, predicted = (int(v) for v in np.unravel_index(errors.argmax(), matrix.shape))
    panel.select_cell(true, predicted)
    for row in range(min(3, panel.gallery.count())):
        index = int(panel.gallery_indices()[row])
        window.tabs.setCurrentIndex(2)  # the Evaluation tab
        draw.label_combo.setCurrentIndex((true + 1) % 10)
        panel.gallery.setCurrentRow(row)
        panel.open_button.click()
        assert window.tabs.currentWidget() is window.draw_page
        reading = draw.reading
        # The very tensor the evaluation scored, and the gallery's score.
        assert torch.equal(reading.input[0], scored_inputs[index])
        assert torch.equal(draw.preview_tensor[0], scored_inputs[index])
        assert reading.label == ev.predictions[index] == predicted
        assert reading.confidence == pytest.approx(
            float(ev.confidences[index]), abs=1e-5
        )
        gallery_percent = panel.gallery.item(row).text().split("\n")[0]
        assert draw.prediction_label.text().split()[-1] == gallery_percent
        assert draw.label_combo.currentData() == true == ev.labels[index]
        assert draw.add_button.text() == f"Add to my digits as {true}"
        assert draw.opened_label.isVisibleTo(window)
        assert f"true class {true}" in draw.opened_label.text()
        assert "read it differently" not in draw.opened_label.text()

    # A stroke on it: the canvas recipe reads the drawing, as for any drawing.
    draw.canvas.setFixedSize(280, 280)
    qtbot.waitUntil(lambda: draw.canvas.width() == 280)
    QTest.mousePress(draw.canvas, Qt.LeftButton, Qt.NoModifier, QPoint(40, 40))
    QTest.mouseMove(draw.canvas, QPoint(80, 60))
    QTest.mouseRelease(draw.canvas, Qt.LeftButton, Qt.NoModifier, QPoint(80, 60))
    drawn = draw.reading
    recipe = draw.predictor.read(draw.canvas.image(), saliency=True)
    assert torch.equal(drawn.input, recipe.input)
    assert not torch.equal(drawn.input[0], scored_inputs[index])
    assert not draw.opened_label.isVisibleTo(window)
    # Undo the stroke: the untouched image reads as scored again.
    draw.undo_button.click()
    assert torch.equal(draw.reading.input[0], scored_inputs[index])

    # Add to my digits: one click, the true class, the image exactly as stored.
    draw.add_button.click()
    (sample,) = MyDigits().samples()
    assert sample.label == true
    stored = run.loaders.val_images[index].numpy()
    np.testing.assert_array_equal(MyDigits().field(sample.id), stored)
    np.testing.assert_array_equal(MyDigits().stroke_image(sample.id), stored)
