"""Epoch ends leave hidden tabs alone: they catch up, exactly, when shown.

The Evaluation and Layer health tabs keep every epoch's data while hidden but
draw nothing; opening the tab draws the latest epoch, the same as a panel that
drew every epoch as it came (the old path, still what a panel on its own does).
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QObject

from workbench.core.events import Evaluation, WeightHistograms
from workbench.ui.panels.evaluation import EvaluationPanel
from workbench.ui.panels.training import TrainingPanel

from .helpers import FAST, run_to_end

pytestmark = pytest.mark.gui

# Two short epochs of the bundled digits (3 steps each): two matrices, two histograms.
TWO_EPOCHS = FAST.replace(max_steps=None, epochs=2, batch_size=512)


def record(window, kinds) -> list:
    """Every event of ``kinds`` the controller emits from now on."""
    seen: list = []
    window.controller.event.connect(
        lambda ev: seen.append(ev) if isinstance(ev, kinds) else None
    )
    return seen


def drawn(panel: EvaluationPanel) -> dict:
    """What the Evaluation tab's widgets show (not what the panel keeps)."""
    matrix = panel.matrix_widget._matrix
    return {
        "matrix": None if matrix is None else np.asarray(matrix).tolist(),
        "bars": np.asarray(panel.bar_item().opts["height"]).tolist(),
        "label": panel.epoch_label.text(),
        "caption": panel.cell_images.caption.text(),
        "gallery": panel.gallery_indices().tolist(),
        "items": [panel.gallery.item(i).text() for i in range(panel.gallery.count())],
    }


def test_a_hidden_evaluation_tab_draws_nothing_then_the_latest_when_opened(
    qtbot, window
):
    window.apply_config(TWO_EPOCHS)
    evaluations = record(window, Evaluation)
    panel = window.evaluation_panel
    assert window.tabs.currentIndex() == 0  # the training curves
    run_to_end(qtbot, window, timeout=90_000)
    assert len(evaluations) == 2
    # Kept, not drawn: the matrix widget still shows the new run's empty state.
    assert panel.shown_epoch() == 1
    assert panel.stale
    assert panel.matrix_widget._matrix is None
    assert panel.bar_item().opts["height"].size == 0
    assert panel.epoch_label.text() == "no evaluation yet"

    window.tabs.setCurrentWidget(panel.parentWidget().parentWidget())
    assert panel.isVisible()
    assert not panel.stale
    last = window.current_run.history.epochs[-1].confusion
    assert drawn(panel)["matrix"] == [list(row) for row in last]

    # The same as a panel that drew every epoch as it came (the old path).
    eager = EvaluationPanel()
    qtbot.addWidget(eager)
    eager.show()
    qtbot.waitExposed(eager)
    run = window.current_run
    eager.set_class_names(run.loaders.info.class_names)
    images = run.loaders.val_images.numpy()
    for ev in evaluations:
        eager.add_evaluation(ev, images)
    assert drawn(panel) == drawn(eager)
    for cell in ((3, 3), (1, 8)):
        panel.select_cell(*cell)
        eager.select_cell(*cell)
        assert drawn(panel) == drawn(eager)
    panel.epoch_slider.setValue(0)
    eager.epoch_slider.setValue(0)
    assert drawn(panel) == drawn(eager)


def test_a_hidden_layer_health_tab_draws_its_histogram_when_opened(qtbot, window):
    window.apply_config(TWO_EPOCHS)
    histograms = record(window, WeightHistograms)
    health = window.health_panel
    run_to_end(qtbot, window, timeout=90_000)
    assert len(histograms) == 2
    xs, ys = health._histogram_curve.getData()
    assert xs.tolist() == [0.0, 1.0]  # still the placeholder
    assert health.stale
    assert health.histogram_label.text().startswith("Weight histograms appear")

    window.tabs.setCurrentWidget(health.parentWidget().parentWidget())
    assert not health.stale
    layer, epoch, _counts = health.shown_histogram()
    assert epoch == 1
    last = histograms[-1]
    i = last.layers.index(layer)
    xs, ys = health._histogram_curve.getData()
    assert xs.tolist() == list(last.edges[i])
    assert ys.tolist() == [float(c) for c in last.counts[i]]
    assert health.histogram_label.text().startswith(f"{layer} after epoch 2:")


def test_a_shown_tab_draws_each_epoch_as_it_comes(qtbot, window):
    panel = window.evaluation_panel
    window.tabs.setCurrentWidget(panel.parentWidget().parentWidget())
    window.apply_config(TWO_EPOCHS)
    matrices: list = []
    window.controller.event.connect(
        lambda ev: (
            matrices.append(drawn(panel)["matrix"])
            if isinstance(ev, Evaluation)
            else None
        )
    )
    run_to_end(qtbot, window, timeout=90_000)
    history = window.current_run.history.epochs
    # Connected after the window's handler: each epoch was drawn on arrival.
    assert matrices == [[list(r) for r in e.confusion] for e in history]
    assert not panel.stale


class _PaintCounter(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.paints = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.paints += 1
        return False


def test_a_step_moves_the_progress_bar_with_the_next_repaint_not_at_once(qtbot):
    # QProgressBar.setValue repaints synchronously; a logged step must not.
    panel = TrainingPanel()
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    bar = panel.progress_bar
    panel.start_progress(0, 100)
    counter = _PaintCounter()
    bar.installEventFilter(counter)
    qtbot.wait(50)
    before = counter.paints
    panel.show_step(60, 100, 1000.0)
    assert bar.value() == 60
    assert counter.paints == before  # nothing painted inside the handler
    qtbot.waitUntil(lambda: counter.paints > before)  # but soon after
    bar.removeEventFilter(counter)


def test_the_gallery_draws_each_image_once_and_never_another_runs(qtbot, monkeypatch):
    from workbench.ui.widgets import cell_images

    from .test_evaluation_panel import make_evaluation, make_images

    made: list[int] = []
    real = cell_images.thumbnail

    def counting(image, *args):
        made.append(1)
        return real(image, *args)

    monkeypatch.setattr(cell_images, "thumbnail", counting)
    panel = EvaluationPanel()
    qtbot.addWidget(panel)
    images = make_images()
    first, second = make_evaluation(0), make_evaluation(1)
    panel.add_evaluation(first, images)
    panel.select_cell(3, 3)
    assert len(made) == len(first.cell(3, 3))
    panel.add_evaluation(second, images)  # the next epoch: the same images
    fresh = set(second.cell(3, 3).tolist()) - set(first.cell(3, 3).tolist())
    assert len(made) == len(first.cell(3, 3)) + len(fresh)
    # Another run's images: every thumbnail drawn anew from them.
    other = 255 - images
    third = make_evaluation(2)
    panel.add_evaluation(third, other)
    shown = panel.gallery_indices()
    assert len(shown) > 0
    for row, index in enumerate(shown):
        icon = panel.gallery.item(row).icon()
        got = icon.pixmap(cell_images.THUMB_SIDE).toImage()
        assert got == real(other[index]).toImage()


def test_fast_steps_reach_the_window_together_each_in_order(qtbot, window, monkeypatch):
    from workbench.core.events import EpochMetrics, StepMetrics
    from workbench.ui import trainer_thread

    # Held back until the next other event: at most one delivery per epoch.
    monkeypatch.setattr(trainer_thread, "BATCH_S", 1e9)
    window.apply_config(TWO_EPOCHS)
    batches: list = []
    window.trainer.steps.connect(batches.append)
    seen = record(window, (StepMetrics, EpochMetrics))
    others = record(window, object)  # what else arrived, should this fail
    run_to_end(qtbot, window, timeout=90_000)
    steps = [ev.global_step for ev in seen if isinstance(ev, StepMetrics)]
    assert steps == list(range(1, window.current_run.global_step + 1))
    # The first step at once, then each epoch's steps before its end; the Draw
    # tab's request for weights, answered between two steps whenever it comes,
    # sends the steps before its answer too.
    sizes = [len(batch) for batch in batches]
    kinds = [type(ev).__name__ for ev in others if not isinstance(ev, StepMetrics)]
    requests = kinds.count("WeightsReady")
    assert len(batches) <= 3 + requests < len(steps), (sizes, kinds)
    first_end = next(i for i, ev in enumerate(seen) if isinstance(ev, EpochMetrics))
    per_epoch = window.current_run.steps_per_epoch
    before = [ev.global_step for ev in seen[:first_end]]
    assert before == list(range(1, per_epoch + 1))
    assert window.loss_plot.point_count("loss") == len(steps)


def test_steps_held_back_are_shown_when_the_run_pauses(qtbot, window, monkeypatch):
    from workbench.core.events import StepMetrics
    from workbench.ui import trainer_thread

    monkeypatch.setattr(trainer_thread, "BATCH_S", 1e9)
    window.apply_config(FAST.replace(max_steps=None, epochs=50))
    seen = record(window, StepMetrics)
    window.start()

    def five_steps() -> bool:
        run = window.current_run
        return run is not None and run.global_step >= 5

    qtbot.waitUntil(five_steps, timeout=60_000)
    run = window.current_run
    with qtbot.waitSignal(window.controller.pause_reached, timeout=60_000):
        window.toggle_pause()
    assert seen[-1].global_step == run.global_step  # none held back
    assert window.loss_plot.point_count("loss") == run.global_step
    with qtbot.waitSignal(window.controller.run_finished, timeout=60_000):
        window.stop()
