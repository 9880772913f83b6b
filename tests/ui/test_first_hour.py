"""The first hour in the window: the main workflow, walked as a new user walks it.

One window, one story: start a run, pause it, freeze all but the head, resume,
let it finish; open the hardest mistake of the Evaluation tab in the canvas and
keep it; draw; fine-tune on my digits; see why the first run cannot be
reproduced, train a plain one and reproduce it; save it and load its weights.
Each step clicks the buttons, presses the keys and triggers the menu actions a
user would, and checks what the user sees: texts, plots, the gallery, the
canvas's reading, the card, the runs table.

Two defects the walk ran into (the bar lagging at a pause, "1 drawings") have
a test of their own after it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.core.test_finetune import mirrored_digits
from workbench.core.checkpoints.io import load_weights_file
from workbench.core.data.my_digits import MyDigits
from workbench.core.events import StepMetrics
from workbench.core.runs.listing import list_runs
from workbench.ui import dialogs
from workbench.ui.formatting import percent
from workbench.ui.panels import training as training_module
from workbench.ui.panels.draw import NO_READING
from workbench.ui.panels.my_digits_box import MyDigitsBox

from .helpers import FAST, event_signal

pytestmark = [pytest.mark.gui, pytest.mark.slow]

EPOCHS = 2  # whole epochs: the last evaluation scored the final weights
STEPS = EPOCHS * 23  # the bundled digits: 23 batches of 64 an epoch
HIDDEN = ["hidden.1.weight", "hidden.1.bias", "hidden.3.weight", "hidden.3.bias"]
# Strokes as fractions of the canvas's size: a "7", then a crossbar.
SEVEN = [(0.25, 0.2), (0.5, 0.2), (0.75, 0.2), (0.6, 0.5), (0.45, 0.8)]
CROSSBAR = [(0.35, 0.5), (0.7, 0.5)]


def press(key: Qt.Key) -> None:
    """A key press where the focus is, as the keyboard sends it."""
    QTest.keyClick(QApplication.focusWidget(), key)


def draw(canvas, stroke) -> None:
    """One stroke with real mouse press, move and release events."""
    w, h = canvas.width(), canvas.height()
    points = [QPoint(round(x * w), round(y * h)) for x, y in stroke]
    QTest.mousePress(canvas, Qt.LeftButton, Qt.NoModifier, points[0])
    for point in points[1:]:
        QTest.mouseMove(canvas, point)
    QTest.mouseRelease(canvas, Qt.LeftButton, Qt.NoModifier, points[-1])


def plain(html: str) -> str:
    """The text of a rich-text label, as read on screen."""
    return re.sub(r"<[^>]+>", "", html)


def trains(item) -> bool:
    """Whether the freeze tree's row shows its parameter checked (trainable)."""
    return item.checkState(0) == Qt.CheckState.Checked


def test_the_first_hour(qtbot, window, tmp_path, monkeypatch):
    window.resize(1500, 920)  # wide enough for the model and freeze column
    qtbot.waitUntil(lambda: window.size().toTuple() == (1500, 920))
    window.activateWindow()  # offscreen, keys reach only the active window
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5_000)
    training, freeze, model_panel = (
        window.training_panel,
        window.freeze_panel,
        window.model_panel,
    )
    bar, status = training.progress_bar, window.status_label
    tabs = {action.objectName(): action for action in window.commands.tabs}

    # 1. A fresh window says what to do first.
    assert window.loss_plot.empty_hint().startswith("Press Start (Ctrl+Return")
    assert "the loss of every step appears here" in window.loss_plot.empty_hint()
    assert training.start_button.text() == "Start"
    assert training.start_button.isEnabled()
    assert not training.pause_button.isEnabled()
    assert bar.text() == "idle"

    # 2. Two whole epochs; Pause; freeze all but the head; Resume; it finishes.
    training.max_steps_spin.setValue(0)
    assert training.max_steps_spin.text() == "no limit"
    training.epochs_spin.setValue(EPOCHS)
    with qtbot.waitSignal(event_signal(window, StepMetrics), timeout=30_000):
        training.start_button.click()
    assert not training.start_button.isEnabled()
    assert freeze.lock_label.isVisibleTo(window)  # "Pause to edit"
    assert not freeze.head_button.isEnabled()
    with qtbot.waitSignal(window.controller.pause_reached, timeout=10_000):
        training.pause_button.click()
    paused_at = window.current_run.global_step
    assert 0 < paused_at < STEPS
    assert training.pause_button.text() == "Resume"
    assert status.text().startswith(f"Paused at step {paused_at}: ")
    assert "the freeze tree is editable" in status.text()
    assert bar.text() == f"step {paused_at} / {STEPS} · paused"  # where it paused
    assert bar.value() == paused_at
    assert not freeze.lock_label.isVisibleTo(window)
    assert freeze.head_button.isEnabled()
    items = freeze.parameter_items()
    assert sorted(items) == sorted([*HIDDEN, "head.weight", "head.bias"])
    assert all(trains(item) for item in items.values())
    assert items["hidden.1.weight"].flags() & Qt.ItemFlag.ItemIsUserCheckable
    total = model_panel.count_label.text()
    assert model_panel.trainable_label.text() == f"{total} (100.0%)"

    freeze.head_button.click()
    params = dict(window.current_run.model.named_parameters())
    head = params["head.weight"].numel() + params["head.bias"].numel()
    n_params = int(total.replace(",", ""))
    assert model_panel.trainable_label.text() == (
        f"{head:,} ({100 * head / n_params:.1f}%)"
    )
    assert freeze.summary_label.text() == (
        f"{head:,} of {total} parameters train; {n_params - head:,} frozen"
    )
    for name, item in items.items():
        assert trains(item) == name.startswith("head."), name

    with qtbot.waitSignal(window.controller.run_finished, timeout=60_000):
        training.pause_button.click()  # Resume
    assert bar.text() == f"step {STEPS} / {STEPS} · finished"
    assert bar.value() == bar.maximum() == STEPS
    assert status.text().startswith(f"Finished at step {STEPS}: val accuracy ")
    assert training.start_button.text() == "Start"  # finished: Start is a new run
    assert training.pause_button.text() == "Pause"
    steps, losses = window.loss_plot.data("loss")
    assert steps.tolist() == list(range(1, STEPS + 1))
    assert np.isfinite(losses).all()
    assert window.loss_plot.point_count("smoothed") == STEPS
    assert window.accuracy_plot.point_count("validation") == EPOCHS
    qtbot.waitUntil(lambda: window.loss_plot.empty_hint() == "", timeout=2_000)
    first_run = window.run_folder
    changes = first_run.info()["mask_changes"]
    assert changes == [{"step": paused_at, "frozen": HIDDEN}]
    for name, item in freeze.parameter_items().items():  # the tree keeps the mask
        assert trains(item) == name.startswith("head."), name

    # 3. Evaluation: the hardest mistake, opened in the canvas, kept with Enter.
    tabs["showEvaluationAction"].trigger()
    assert window.tabs.currentWidget().isAncestorOf(window.evaluation_panel)
    evaluation = window.evaluation_panel
    matrix = evaluation.shown_matrix()
    assert matrix.sum() == 360  # every validation image
    accuracy = np.trace(matrix) / matrix.sum()
    assert evaluation.epoch_label.text() == (
        f"epoch {EPOCHS} of {EPOCHS} · val accuracy {accuracy:.1%}"
    )
    caption = evaluation.cell_images.caption
    assert caption.text().startswith("Click a cell of the matrix")
    errors = matrix * (1 - np.eye(len(matrix), dtype=matrix.dtype))
    assert errors.max() > 0  # two epochs of an MLP leave some mistakes
    true, predicted = (int(v) for v in np.unravel_index(errors.argmax(), matrix.shape))
    evaluation.select_cell(true, predicted)  # as a click on the cell does
    gallery = evaluation.gallery
    assert gallery.count() == matrix[true, predicted]
    assert caption.text().endswith(
        f"true {true}, predicted {predicted}, hardest first."
    )
    assert gallery.currentItem() is gallery.item(0)  # the hardest, ready to open
    gallery_percent, title = gallery.item(0).text().split("\n")
    assert title == f"{true} → {predicted}"
    assert evaluation.open_button.isEnabled()

    draw_panel = window.draw_panel
    evaluation.open_button.click()
    assert window.tabs.currentWidget() is window.draw_page
    # It reads as the gallery scored it: the same class, the same percentage.
    assert draw_panel.prediction_label.text().split() == [
        str(predicted),
        gallery_percent,
    ]
    assert draw_panel.bars.probabilities().argmax() == predicted
    opened = draw_panel.opened_label
    assert opened.isVisibleTo(window)
    assert f"(true class {true})" in opened.text()
    assert f"scored it {predicted}, {gallery_percent} after epoch 2" in opened.text()
    assert "read it differently" not in opened.text()
    assert draw_panel.label_combo.currentText() == str(true)  # preset
    assert draw_panel.add_button.text() == f"Add to my digits as {true}"
    canvas = draw_panel.canvas
    qtbot.waitUntil(canvas.hasFocus, timeout=2_000)  # the keys work at once
    press(Qt.Key.Key_Return)
    assert [sample.label for sample in MyDigits().samples()] == [true]
    assert draw_panel.sample_list.count() == 1
    assert draw_panel.counts_label.text().startswith("1 drawing (")
    assert canvas.is_empty()
    assert draw_panel.prediction_label.text() == NO_READING
    assert not opened.isVisibleTo(window)

    # 4. Draw: the reading follows the pen; keys choose the label and add.
    draw(canvas, SEVEN)
    first = draw_panel.reading
    name = first.class_names[first.label]
    assert draw_panel.prediction_label.text() == (
        f"{name}   {100 * first.confidence:.0f}%"
    )
    np.testing.assert_allclose(draw_panel.bars.probabilities(), first.probabilities)
    assert draw_panel.add_button.isEnabled()
    draw(canvas, CROSSBAR)
    second = draw_panel.reading
    assert not torch.equal(second.input, first.input)
    np.testing.assert_allclose(draw_panel.bars.probabilities(), second.probabilities)
    assert not np.allclose(second.probabilities, first.probabilities)
    press(Qt.Key.Key_7)
    assert draw_panel.add_button.text() == "Add to my digits as 7"
    press(Qt.Key.Key_Enter)
    assert [sample.label for sample in MyDigits().samples()] == [true, 7]
    assert draw_panel.sample_list.count() == 2
    assert draw_panel.prediction_label.text() == NO_READING
    # Ten more, one of each digit, written mirrored (as if drawn one by one).
    store = MyDigits()
    for image, label in mirrored_digits(per_class=1):
        store.add(image, label, style="digits")  # as the Draw tab saves them
    draw_panel.refresh_samples()
    drawings = len(store)
    assert drawings == 12
    assert draw_panel.counts_label.text().startswith(f"{drawings} drawings (")
    assert draw_panel.sample_list.count() == drawings

    # 5. Fine-tune on my digits: a before/after card; my settings come back.
    mine = window.current_config()
    assert not draw_panel.card.isVisibleTo(window)
    with qtbot.waitSignal(window.controller.fine_tune_scored, timeout=60_000):
        draw_panel.fine_tune_button.click()
    qtbot.waitUntil(lambda: window.state == "idle", timeout=5_000)  # scored
    assert draw_panel.card.isVisibleTo(window)
    card = plain(draw_panel.card.text())
    before, after, frozen = draw_panel.fine_tune_report
    assert before.mine_count == after.mine_count == drawings
    assert card.startswith("Fine-tune finished")
    assert (
        f"My digits, trained on ({drawings}): {percent(before.mine)} → "
        f"{percent(after.mine)}"
    ) in card
    assert f"test (360): {percent(before.base)} → {percent(after.base)}" in card
    assert frozen.unchanged  # the hidden layers were frozen: they still are
    assert "✔ Frozen parameters: all 4 frozen tensors are bit-identical." in card
    assert status.text().startswith(
        f"Fine-tune done: my digits {percent(before.mine)} -> {percent(after.mine)}"
    )
    assert window.current_run.config.dataset == "my-digits"  # what it trained on
    assert window.current_config() == mine  # what the panels show again
    assert window.data_panel.dataset() == "digits"
    assert training.lr_spin.value() == mine.lr
    assert training.epochs_spin.value() == EPOCHS
    assert training.start_button.text() == "Start"
    assert training.start_button.isEnabled()

    # 6. Runs: why the first run cannot be reproduced; a plain one that can.
    tabs["showRunsAction"].trigger()
    runs_panel = window.runs_panel
    reproduce = runs_panel.reproduce_button
    assert runs_panel.table.rowCount() == 2  # the first run and the fine-tune
    runs_panel.select_ids([first_run.id])
    assert not reproduce.isEnabled()
    assert reproduce.toolTip().startswith(f"Cannot reproduce: run {first_run.id} ")
    assert "changed its freeze mask while it trained" in reproduce.toolTip()
    with qtbot.assertNotEmitted(runs_panel.reproduce_requested):
        reproduce.click()

    training.reset_button.click()  # New run
    assert bar.text() == "idle"
    assert not draw_panel.card.isVisibleTo(window)  # it described the tuned model
    assert window.loss_plot.point_count("loss") == 0
    # The selected run stays overlaid on the loss plot (so it shows no hint).
    (overlaid,) = [
        n for n in window.overlay.curve_names() if window.loss_plot.has_series(n)
    ]
    assert window.loss_plot.point_count(overlaid) == STEPS
    assert window.loss_plot.empty_hint() == ""
    freeze.unfreeze_button.click()  # a plain run: every layer trains
    assert model_panel.trainable_label.text() == f"{total} (100.0%)"
    training.max_steps_spin.setValue(8)  # and a quick one
    with qtbot.waitSignal(window.controller.run_finished, timeout=60_000):
        training.start_button.click()
    assert bar.text() == "step 8 / 8 · finished"
    second_run = window.run_folder
    assert runs_panel.table.rowCount() == 3
    runs_panel.select_ids([second_run.id])
    assert reproduce.isEnabled()
    assert not reproduce.toolTip().startswith("Cannot")
    with qtbot.waitSignal(window.controller.run_finished, timeout=60_000) as ended:
        reproduce.click()
    assert ended.args[0].reproduction.reproduced
    verdict = f"{second_run.id}: reproduced: all 8 logged losses are identical"
    assert runs_panel.message_label.text() == verdict
    assert status.text() == verdict
    assert runs_panel.table.rowCount() == 4 == len(list_runs())  # and its repeat
    assert window.current_config().max_steps == 8  # my settings, still

    # 7. Save the run; load its weights into the model: the next run starts there.
    checkpoint = tmp_path / "quick.pt"
    monkeypatch.setattr(dialogs, "get_save_path", lambda *args: checkpoint)
    window.commands.save.trigger()  # File > Save checkpoint…
    assert status.text() == f"Saved {checkpoint} (step 8)"
    tabs["showDrawAction"].trigger()
    assert window.tabs.currentWidget() is window.draw_page
    monkeypatch.setattr(dialogs, "get_open_path", lambda *args: checkpoint)
    window.commands.load_weights.trigger()  # File > Load weights into the model…
    assert status.text() == "Loaded weights from quick.pt: all 6 tensors loaded"
    assert training.notes_label.text() == (
        "• Next run starts from quick.pt: all 6 tensors loaded."
    )
    assert draw_panel.source_label.text() == (
        "Loaded weights from quick.pt (the next run starts from them)"
    )
    assert bar.text() == "idle"
    assert training.start_button.text() == "Start"
    saved, _ = load_weights_file(checkpoint)
    reader = draw_panel.predictor.model.state_dict()
    assert reader.keys() == saved.keys()
    assert all(torch.equal(reader[k], v) for k, v in saved.items())
    model = freeze.model.state_dict()  # the model the next run starts from
    assert all(torch.equal(model[k], v) for k, v in saved.items())


# The bar redraws at most every PROGRESS_INTERVAL_S while running; at a pause
# it catches up with the step the status names.
def test_a_paused_run_shows_where_it_paused_on_the_bar(qtbot, window, monkeypatch):
    # Make the lag certain: the bar draws the first step, then no other.
    monkeypatch.setattr(training_module, "PROGRESS_INTERVAL_S", 3600.0)
    window.apply_config(FAST.replace(max_steps=None, epochs=50))
    training = window.training_panel
    with qtbot.waitSignal(
        event_signal(window, StepMetrics),
        timeout=30_000,
        check_params_cb=lambda ev: ev.global_step >= 2,
    ):
        training.start_button.click()
    try:
        with qtbot.waitSignal(window.controller.pause_reached, timeout=10_000):
            training.pause_button.click()
        run = window.current_run
        assert window.status_label.text().startswith(
            f"Paused at step {run.global_step:,}:"
        )
        assert training.progress_bar.text() == (
            f"step {run.global_step:,} / {run.total_steps:,} · paused"
        )
    finally:
        with qtbot.waitSignal(window.controller.run_finished, timeout=10_000):
            training.stop_button.click()


def test_one_drawing_is_counted_in_the_singular(qtbot):
    box = MyDigitsBox()
    qtbot.addWidget(box)
    (image, label), *_ = mirrored_digits(per_class=1)
    box.store.add(image, label, style="digits")
    box.refresh_samples()
    assert box.counts_label.text().startswith("1 drawing (0:")
