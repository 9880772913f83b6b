"""The Draw tab in the window: real mouse strokes, the model's exact input, teaching."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtTest import QTest

from tests.core.test_finetune import mirrored_digits
from workbench.core.config import TrainConfig
from workbench.core.data.my_digits import MyDigits
from workbench.ui.panels.draw import NO_READING

from .helpers import run_to_end

pytestmark = pytest.mark.gui

# A "7"-ish stroke and a crossbar, in canvas widget coordinates (280 x 280).
STROKE = [(70, 60), (140, 60), (210, 60), (170, 140), (130, 220)]
CROSSBAR = [(100, 140), (200, 140)]
# The window's reader is prepared like the bundled digits (FAST's dataset): their
# pixel statistics as measured (tests/core/test_data.py recomputes them).
DIGITS_MEAN, DIGITS_STD = 0.1558, 0.2774


def ink_extent(image: np.ndarray, threshold: float = 0.1) -> tuple[int, int, int, int]:
    """(first row, last row, first column, last column) of the ink."""
    inked = image > threshold
    rows = np.flatnonzero(inked.any(axis=1))
    cols = np.flatnonzero(inked.any(axis=0))
    return int(rows[0]), int(rows[-1]), int(cols[0]), int(cols[-1])


def check_shown_is_the_input(panel, model_input: torch.Tensor) -> None:
    """The preview paints the model's input de-normalised by hand, pixel for pixel."""
    x = model_input[0, 0].numpy().astype(np.float64)
    np.testing.assert_allclose(
        panel.preview.shown_image(),
        np.clip(x * DIGITS_STD + DIGITS_MEAN, 0, 1),
        atol=1e-5,
    )


def check_normalised_by_hand(reading) -> None:
    expected = (torch.from_numpy(reading.field) - DIGITS_MEAN) / DIGITS_STD
    torch.testing.assert_close(reading.input, expected[None, None])


def check_digits_recipe(field: np.ndarray) -> None:
    """The UCI digits recipe: the ink stretched over rows and columns 4-23."""
    assert field.shape == (28, 28)
    assert ink_extent(field) == (4, 23, 4, 23)
    outside = field.copy()
    outside[4:24, 4:24] = 0
    assert outside.max() == 0


def draw(canvas, points) -> None:
    """One stroke with real mouse press, move and release events."""
    QTest.mousePress(canvas, Qt.LeftButton, Qt.NoModifier, QPoint(*points[0]))
    for point in points[1:]:
        QTest.mouseMove(canvas, QPoint(*point))
    QTest.mouseRelease(canvas, Qt.LeftButton, Qt.NoModifier, QPoint(*points[-1]))


def show_draw_tab(qtbot, window):
    window.findChild(type(window.commands.open), "showDrawAction").trigger()
    panel = window.draw_panel
    assert window.tabs.currentWidget() is window.draw_page
    panel.canvas.setFixedSize(280, 280)  # widget pixels = image pixels
    qtbot.waitUntil(lambda: panel.canvas.width() == 280)
    return panel


def capture_model_inputs(panel) -> list[torch.Tensor]:
    received: list[torch.Tensor] = []
    panel.predictor.model.register_forward_pre_hook(
        lambda module, args: received.append(args[0].detach().clone())
    )
    return received


def test_strokes_are_read_and_the_preview_is_the_models_exact_input(qtbot, window):
    panel = show_draw_tab(qtbot, window)
    received = capture_model_inputs(panel)
    assert panel.prediction_label.text() == NO_READING

    draw(panel.canvas, STROKE)
    first = panel.reading
    assert first is not None
    assert torch.equal(panel.preview_tensor, received[-1])
    # The preview paints that tensor (de-normalised), pixel for pixel.
    check_shown_is_the_input(panel, received[-1])
    # The tensor is the digits recipe's field, normalised with their statistics.
    check_digits_recipe(first.field)
    check_normalised_by_hand(first)
    np.testing.assert_allclose(panel.bars.probabilities(), first.probabilities)
    assert panel.prediction_label.text().startswith(first.class_names[first.label])

    draw(panel.canvas, CROSSBAR)
    assert panel.canvas.stroke_count() == 2
    assert not torch.equal(panel.preview_tensor, first.input)

    panel.canvas.setFocus()
    QTest.keyClick(panel.canvas, Qt.Key_Z, Qt.ControlModifier)
    assert panel.canvas.stroke_count() == 1
    # Undo gives back exactly the first stroke's input, and the model read it.
    assert torch.equal(panel.preview_tensor, first.input)
    assert torch.equal(received[-1], first.input)

    panel.clear_button.click()
    assert panel.canvas.is_empty()
    assert panel.reading is None
    assert panel.prediction_label.text() == NO_READING
    assert not panel.bars.probabilities().any()

    draw(panel.canvas, STROKE)
    QTest.keyClick(panel.canvas, Qt.Key_Escape)
    assert panel.canvas.is_empty()
    assert panel.reading is None


def test_the_drawing_is_read_while_the_pen_is_still_down(qtbot, window):
    panel = show_draw_tab(qtbot, window)
    canvas = panel.canvas
    QTest.mousePress(canvas, Qt.LeftButton, Qt.NoModifier, QPoint(*STROKE[0]))
    for point in STROKE[1:3]:
        QTest.mouseMove(canvas, QPoint(*point))
    assert canvas.is_drawing()
    assert panel.reading is None  # debounced: not on every mouse move
    qtbot.waitUntil(lambda: panel.reading is not None, timeout=2_000)
    assert canvas.is_drawing()
    partial = panel.reading.input
    for point in STROKE[3:]:
        QTest.mouseMove(canvas, QPoint(*point))
    QTest.mouseRelease(canvas, Qt.LeftButton, Qt.NoModifier, QPoint(*STROKE[-1]))
    assert not torch.equal(panel.reading.input, partial)  # read again on release


def test_naive_resize_and_saliency_toggles(qtbot, window):
    panel = show_draw_tab(qtbot, window)
    draw(panel.canvas, STROKE)
    styled = panel.reading
    assert styled.saliency is not None
    np.testing.assert_allclose(panel.preview.shown_saliency(), styled.saliency)

    check_digits_recipe(styled.field)

    panel.naive_check.setChecked(True)
    naive = panel.reading
    assert naive.naive
    assert not torch.equal(naive.input, styled.input)
    check_shown_is_the_input(panel, naive.input)
    check_normalised_by_hand(naive)
    # Naive: the whole 280x280 canvas squashed by 1/10, the ink left where it
    # was drawn, not stretched: canvas pixel p maps to (p + 0.5) / 10 - 0.5,
    # give or take a pixel of blur.
    on_canvas = ink_extent(panel.canvas.image())
    for edge, canvas_edge in zip(ink_extent(naive.field), on_canvas, strict=True):
        assert abs(edge - ((canvas_edge + 0.5) / 10 - 0.5)) <= 1, on_canvas

    panel.saliency_check.setChecked(False)
    assert panel.reading.saliency is None
    assert not panel.preview.show_saliency


def test_the_answer_is_painted_before_the_saliency_is_computed(qtbot, window):
    panel = show_draw_tab(qtbot, window)
    draw(panel.canvas, STROKE)
    painted = []
    watcher = PaintWatcher(panel.bars)
    at_answer = []

    def on_answer(reading):
        # Bars painted with this reading's values; its heat map still to come.
        at_answer.append((watcher.values_painted(), reading.saliency, panel.reading))

    panel.answer_shown.connect(on_answer)
    panel.read_finished.connect(lambda reading: painted.append(reading))
    draw(panel.canvas, CROSSBAR)
    assert len(at_answer) == 1
    values, saliency, shown = at_answer[0]
    assert saliency is None
    np.testing.assert_array_equal(values, shown.probabilities)
    assert painted == [panel.reading]
    assert panel.reading.saliency is not None
    np.testing.assert_allclose(panel.preview.shown_saliency(), panel.reading.saliency)
    # Without the overlay nothing is explained: one reading, shown whole.
    panel.saliency_check.setChecked(False)
    at_answer.clear()
    draw(panel.canvas, STROKE)
    assert at_answer[0][1] is None
    assert panel.reading.saliency is None


class PaintWatcher(QObject):
    """Records the values a ProbabilityBars widget had when last painted."""

    def __init__(self, bars) -> None:
        super().__init__(bars)
        self._bars = bars
        self._painted: np.ndarray | None = None
        bars.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if watched is self._bars and event.type() == QEvent.Type.Paint:
            self._painted = self._bars.probabilities()
        return False

    def values_painted(self) -> np.ndarray | None:
        return None if self._painted is None else self._painted.copy()


def test_reading_during_a_run_uses_weights_copied_between_steps(qtbot, window):
    from tests.ui.test_window import start_long_run

    panel = show_draw_tab(qtbot, window)
    draw(panel.canvas, STROKE)
    start_long_run(qtbot, window)
    run = window.current_run
    qtbot.waitUntil(
        lambda: panel.source_label.text().startswith("Live"), timeout=10_000
    )
    assert panel.predictor.model is not run.model
    live = panel.reading.probabilities.copy()
    with qtbot.waitSignal(window.controller.pause_reached, timeout=10_000):
        window.toggle_pause()
    # Paused: nothing trains, so the reader copies the run's weights directly.
    step = run.global_step
    assert panel.source_label.text().startswith(f"mlp after step {step:,}")
    assert run.model.training  # reading never switched the trained model to eval
    draw(panel.canvas, CROSSBAR)
    assert run.model.training
    assert panel.reading is not None
    assert not np.array_equal(panel.reading.probabilities, live)
    with qtbot.waitSignal(window.controller.run_finished, timeout=10_000):
        window.stop()


@pytest.mark.slow
def test_teach_loop_add_relabel_delete_and_fine_tune(qtbot, window, error_dialogs):
    panel = show_draw_tab(qtbot, window)
    panel.fine_tune_button.click()  # no trained model yet
    assert error_dialogs.titles() == ["Nothing to fine-tune yet"]
    error_dialogs.shown.clear()

    window.apply_config(TrainConfig(dataset="digits", epochs=10))
    run_to_end(qtbot, window, timeout=60_000)
    panel.fine_tune_button.click()  # a trained model, but no drawings yet
    assert error_dialogs.titles() == ["No drawings yet"]
    error_dialogs.shown.clear()
    base_model = window.current_run.model
    assert not any(not p.requires_grad for p in base_model.parameters())

    for image, label in mirrored_digits(per_class=4):
        panel.open_in_canvas(image)
        QTest.keyClick(panel.canvas, getattr(Qt, f"Key_{label}"))
        assert panel.add_button.text() == f"Add to my digits as {label}"
        panel.add_button.click()
        assert panel.canvas.is_empty()  # ready for the next drawing
    assert panel.sample_list.count() == 40
    store = MyDigits()
    assert store.counts() == [4] * 10

    # Relabel one drawing, then delete it with the Delete key.
    item = panel.sample_list.item(0)
    item.setSelected(True)
    panel.label_combo.setCurrentIndex(9)
    panel.relabel_button.click()
    assert store.samples()[0].label == 9
    panel.sample_list.item(0).setSelected(True)
    panel.sample_list.setFocus()
    QTest.keyClick(panel.sample_list, Qt.Key_Delete)
    assert len(store) == 39
    assert panel.sample_list.count() == 39

    frozen_before = {
        name: p.detach().clone()
        for name, p in base_model.named_parameters()
        if not name.startswith("head.")
    }
    with qtbot.waitSignal(window.controller.fine_tune_scored, timeout=60_000):
        panel.fine_tune_button.click()
    run = window.current_run
    assert run.config.dataset == "my-digits"
    assert run.config.base_dataset == "digits"
    assert window.data_panel.dataset() == "digits"  # the user's settings are back
    assert sorted(run.config.frozen) == sorted(frozen_before)  # all but the head
    before, after, frozen = panel.fine_tune_report
    assert before.mine_count == after.mine_count == 39
    assert after.mine >= before.mine + 0.2
    assert after.base >= before.base - 0.05
    assert frozen.unchanged
    params = dict(run.model.named_parameters())
    for name, tensor in frozen_before.items():
        assert torch.equal(params[name].detach(), tensor), name
    card = panel.card.text()
    assert "bit-identical" in card
    assert "My digits, trained on (39)" in card
    # The reader now reads with the fine-tuned weights.
    assert panel.source_label.text().startswith(
        f"small-cnn after step {run.global_step}"
    )


def test_my_digits_is_a_dataset_in_the_data_panel(qtbot, window):
    store = MyDigits()
    for image, label in mirrored_digits(per_class=5):
        store.add(image, label)
    window.draw_panel.refresh_samples()
    data = window.data_panel
    assert not data.base_combo.isVisibleTo(window)
    data.dataset_combo.setCurrentIndex(data.dataset_combo.findData("my-digits"))
    assert data.base_combo.isVisibleTo(window)
    data.replay_spin.setValue(64)
    qtbot.waitUntil(data.is_loaded, timeout=10_000)
    assert data.count_label.text() == "40 training · 10 test images"
    cfg = window.current_config()
    assert (cfg.dataset, cfg.base_dataset, cfg.replay) == ("my-digits", "mnist", 64)
    data.base_combo.setCurrentIndex(data.base_combo.findData("digits"))
    window.apply_config(window.current_config().replace(max_steps=3, model="mlp"))
    run_to_end(qtbot, window)
    assert window.current_run.loaders.train.num_samples == 40 + 64
    assert window.current_run.config.base_dataset == "digits"
    # A new drawing is seen by the next run: the panel does not serve a stale copy.
    store.add(mirrored_digits(per_class=1)[0][0], 0)
    window.draw_panel.samples_changed.emit()
    qtbot.waitUntil(data.is_loaded, timeout=10_000)
    assert data.count_label.text() == "41 training · 10 test images"


@pytest.mark.skipif(torch.get_num_threads() < 2, reason="needs 2 intra-op threads")
def test_weights_load_on_one_thread_while_a_run_trains(qtbot, monkeypatch):
    from workbench.core.models.builtins import build_model, snapshot_state
    from workbench.core.predict import Predictor
    from workbench.ui.panels.draw import DrawPanel

    panel = DrawPanel()
    qtbot.addWidget(panel)
    panel.set_reader("small-cnn", "digits")
    loads: list[int] = []
    load = Predictor.load_weights

    def counting_load(predictor, state):
        loads.append(torch.get_num_threads())
        load(predictor, state)

    monkeypatch.setattr(Predictor, "load_weights", counting_load)
    state = snapshot_state(build_model("small-cnn", 10, seed=3))
    everyone = torch.get_num_threads()
    panel.set_weights(state, "idle")  # nothing trains: every thread may help
    panel.set_training_active(True)
    panel.set_weights(state, "live")  # the trainer has the cores
    assert loads == [everyone, 1]
    assert torch.get_num_threads() == everyone
    for name, tensor in panel.predictor.model.state_dict().items():
        assert torch.equal(tensor, state[name]), name


def test_only_a_photo_models_read_gives_an_openmp_pool_back(
    qtbot, tmp_path, monkeypatch
):
    from PIL import Image

    from workbench.core.data.registry import DATASET_INFO
    from workbench.ui.panels import draw as draw_module

    released: list[bool] = []
    monkeypatch.setattr(
        draw_module, "release_openmp_pool", lambda: released.append(True) or True
    )
    panel = draw_module.DrawPanel()
    qtbot.addWidget(panel)
    panel.set_training_active(True)
    panel.set_reader("small-cnn", "digits")
    digit = np.zeros((28, 28), np.uint8)
    digit[5:23, 12:16] = 255
    panel.open_in_canvas(digit)  # read on the GUI thread alone: no pool built
    assert panel.reading is not None
    assert released == []
    info = DATASET_INFO["cifar10"]
    panel.set_reader("small-cnn", "cifar10", info=info)
    photo = np.random.default_rng(1).integers(0, 256, (32, 32, 3), np.uint8)
    Image.fromarray(photo).save(tmp_path / "photo.png")
    assert panel.open_image_file(tmp_path / "photo.png")
    panel.read_now()  # as fresh live weights make it: read on every thread
    assert released
