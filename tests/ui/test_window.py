"""The window end to end: a run in the trainer thread, stop, pause, errors, settings."""

from __future__ import annotations

import pytest
import torch
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.events import (
    CompileFinished,
    CompileStarted,
    EpochMetrics,
    StepMetrics,
    TrainResult,
)
from workbench.core.models.builtins import build_model
from workbench.core.train.engine import TrainingError
from workbench.ui import dialogs
from workbench.ui.main_window import MainWindow
from workbench.ui.panels.training import TrainingPanel

from .helpers import FAST, event_signal, run_to_end

pytestmark = pytest.mark.gui

OBJECT_NAMES = (
    "datasetCombo",
    "modelCombo",
    "freezeTree",
    "deviceCombo",
    "batchSizeSpin",
    "workersSpin",
    "pinMemoryCheck",
    "precisionCombo",
    "compileCheck",
    "optimizerCombo",
    "lrSpin",
    "epochsSpin",
    "seedSpin",
    "startButton",
    "pauseButton",
    "stopButton",
    "progressBar",
    "lossPlot",
    "accuracyPlot",
    "statusLabel",
    "mainTabs",
    "digitCanvas",
    "clearCanvasButton",
    "probabilityPlot",
    "predictionLabel",
    "inputPreview",
    "addSampleButton",
    "fineTuneButton",
    "fineTuneCard",
    "sampleList",
)


def start_long_run(qtbot, window):
    """Start a run too long to end by itself; return once its first step is in."""
    window.apply_config(FAST.replace(max_steps=None, epochs=50))
    with qtbot.waitSignal(event_signal(window, StepMetrics), timeout=30_000):
        window.start()


def test_every_named_widget_exists_once(window):
    for name in OBJECT_NAMES:
        found = window.findChildren(QWidget, name)
        assert len(found) == 1, name


def test_window_constructs_without_arguments(qtbot):
    win = MainWindow()
    qtbot.addWidget(win)
    assert win.current_config() == TrainConfig()
    assert event_signal(win, StepMetrics) is not None  # the thread's signals are public
    qtbot.waitUntil(lambda: not win.data_panel.is_busy(), timeout=30_000)
    win.close()


def test_short_run_end_to_end(qtbot, window):
    steps, epochs, done = [], [], []
    event_signal(window, StepMetrics).connect(steps.append)
    event_signal(window, EpochMetrics).connect(epochs.append)
    event_signal(window, TrainResult).connect(done.append)
    run_to_end(qtbot, window)

    assert [s.global_step for s in steps] == [1, 2, 3, 4]
    assert all(isinstance(s, E.StepMetrics) for s in steps)
    assert len(epochs) == 1
    assert done[0].global_step == 4
    assert not done[0].stopped
    assert window.state == "idle"
    assert window.current_run is not None
    assert window.current_run.global_step == 4
    # Plots were fed from the signals.
    assert window.loss_plot.point_count("loss") == 4
    assert window.loss_plot.point_count("smoothed") == 4
    assert window.accuracy_plot.point_count("validation") == 1
    assert window.training_panel.progress_bar.value() == 4
    assert "Finished at step 4" in window.status_label.text()
    assert window.training_panel.start_button.isEnabled()
    assert window.data_panel.dataset_combo.isEnabled()
    # The run is finished: Start begins a new run.
    assert window.training_panel.start_button.text() == "Start"


def test_controls_are_locked_while_running(qtbot, window):
    start_long_run(qtbot, window)
    assert window.state == "running"
    for widget in (
        window.data_panel.dataset_combo,
        window.model_panel.model_combo,
        window.device_panel.device_combo,
        window.loader_panel.batch_spin,
        window.speed_panel.compile_check,
        window.training_panel.lr_spin,
        window.freeze_panel.head_button,
        window.training_panel.start_button,
    ):
        assert not widget.isEnabled(), widget.objectName()
    # The tree stays readable but cannot be edited.
    assert not window.freeze_panel.is_editable()
    item = window.freeze_panel.parameter_items()["head.weight"]
    assert not item.flags() & Qt.ItemFlag.ItemIsUserCheckable
    assert window.training_panel.pause_button.isEnabled()
    assert window.training_panel.stop_button.isEnabled()
    assert not window.commands.open.isEnabled()
    assert not window.commands.save.isEnabled()
    with qtbot.waitSignal(window.controller.run_finished, timeout=10_000):
        window.training_panel.stop_button.click()
    assert window.freeze_panel.is_editable()


def test_stop_ends_within_a_batch_and_continue_resumes(qtbot, window):
    results = []
    event_signal(window, TrainResult).connect(results.append)
    start_long_run(qtbot, window)
    with qtbot.waitSignal(window.controller.run_finished, timeout=10_000):
        window.stop()
    stopped_at = results[-1].global_step
    assert results[-1].stopped
    assert window.current_run.global_step == stopped_at
    assert window.training_panel.start_button.text() == "Continue"
    assert "Stopped" in window.status_label.text()

    # Continue: the same run goes on from where it stopped.
    run = window.current_run
    window.apply_config(window.current_config().replace(max_steps=stopped_at + 2))
    run_to_end(qtbot, window)
    assert window.current_run.global_step == stopped_at + 2
    assert window.current_run.history.steps[0][0] == 1  # history kept
    # max_steps changed: the run was restored with the new settings
    assert window.current_run is not run


def test_continue_without_changes_iterates_the_same_run(qtbot, window):
    start_long_run(qtbot, window)
    with qtbot.waitSignal(window.controller.run_finished, timeout=10_000):
        window.stop()
    run = window.current_run
    step = run.global_step
    assert window.controller.plan(window.current_config()).kind == "continue"
    steps = []
    event_signal(window, StepMetrics).connect(steps.append)
    with qtbot.waitSignal(event_signal(window, StepMetrics), timeout=30_000):
        window.start()
    # (pytest-qt's blocker.args may hold a later emission: read the list instead)
    assert steps[0].global_step == step + 1
    with qtbot.waitSignal(window.controller.run_finished, timeout=10_000):
        window.stop()
    assert window.current_run is run
    assert window.loss_plot.point_count("loss") == len(run.history.steps)


def test_pause_holds_the_run_and_resume_goes_on(qtbot, window):
    steps = []
    event_signal(window, StepMetrics).connect(steps.append)
    start_long_run(qtbot, window)
    with qtbot.waitSignal(window.controller.pause_reached, timeout=10_000):
        window.training_panel.pause_button.click()
    assert window.state == "paused"
    assert window.training_panel.pause_button.text() == "Resume"
    assert window.freeze_panel.is_editable()  # editable while paused
    assert window.commands.save.isEnabled()
    assert "Paused at step" in window.status_label.text()
    count = len(steps)
    with qtbot.assertNotEmitted(event_signal(window, StepMetrics), wait=300):
        pass
    assert len(steps) == count
    with qtbot.waitSignal(event_signal(window, StepMetrics), timeout=10_000):
        window.training_panel.pause_button.click()  # Resume
    assert window.state == "running"
    assert not window.freeze_panel.is_editable()
    assert steps[count].global_step == steps[count - 1].global_step + 1
    with qtbot.waitSignal(window.controller.run_finished, timeout=10_000):
        window.stop()


def test_stop_while_paused(qtbot, window):
    start_long_run(qtbot, window)
    with qtbot.waitSignal(window.controller.pause_reached, timeout=10_000):
        window.toggle_pause()
    with qtbot.waitSignal(window.controller.run_finished, timeout=10_000):
        window.stop()
    assert window.state == "idle"
    assert window.training_panel.pause_button.text() == "Pause"


def test_freeze_edit_while_paused_applies_on_resume(qtbot, window):
    steps = []
    event_signal(window, StepMetrics).connect(steps.append)
    start_long_run(qtbot, window)
    with qtbot.waitSignal(window.controller.pause_reached, timeout=10_000):
        window.toggle_pause()
    run = window.current_run
    # The tree shows the model that trains.
    assert window.freeze_panel.model is run.model
    paused_at = run.global_step
    params = dict(run.model.named_parameters())
    trainable_before = window.model_panel.trainable_label.text()
    window.freeze_panel.parameter_items()["hidden.1.weight"].setCheckState(
        0, Qt.CheckState.Unchecked
    )
    assert not params["hidden.1.weight"].requires_grad
    assert window.model_panel.trainable_label.text() != trainable_before  # at once
    frozen_value = params["hidden.1.weight"].detach().clone()
    other_value = params["hidden.3.weight"].detach().clone()
    window.toggle_pause()
    qtbot.waitUntil(
        lambda: len(steps) >= 1 and steps[-1].global_step >= paused_at + 3,
        timeout=10_000,
    )
    with qtbot.waitSignal(window.controller.run_finished, timeout=10_000):
        window.stop()
    assert (params["hidden.1.weight"] == frozen_value).all()  # frozen: not updated
    assert not (params["hidden.3.weight"] == other_value).all()  # the rest trains
    group = run.optimizer.param_groups[0]["params"]
    assert all(p.requires_grad for p in group)
    assert len({id(p) for p in group}) == len(group)  # no parameter twice
    assert all(p is not params["hidden.1.weight"] for p in group)
    assert len(run.optimizer.param_groups) == 1


def test_all_frozen_refuses_to_start(qtbot, window, error_dialogs):
    from workbench.core.train.freezing import set_frozen

    model = window.freeze_panel.model
    set_frozen(model, [n for n, _ in model.named_parameters()])
    window.start()
    assert window.state == "idle"
    assert window.trainer.isRunning() is False
    assert error_dialogs.titles() == ["Nothing to train"]
    error_dialogs.shown.clear()


def test_error_in_the_run_shows_a_dialog_and_returns_to_idle(
    qtbot, window, monkeypatch, error_dialogs
):
    def broken(*args, **kwargs):
        raise TrainingError("the loss became nan at step 3")

    monkeypatch.setattr("workbench.core.session.prepare_run", broken)
    with qtbot.waitSignal(window.controller.run_failed, timeout=10_000):
        window.start()
    qtbot.waitUntil(lambda: window.state == "idle")
    title, message, details = error_dialogs.shown[0]
    assert title == "Training failed"
    assert message == "the loss became nan at step 3"
    assert "Traceback" in details
    assert "TrainingError" in details
    assert window.training_panel.start_button.isEnabled()
    assert not window.training_panel.stop_button.isEnabled()
    assert "Failed" in window.status_label.text()
    error_dialogs.shown.clear()


def test_unexpected_exception_names_its_type(qtbot, window, monkeypatch, error_dialogs):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr("workbench.core.session.prepare_run", broken)
    with qtbot.waitSignal(window.controller.run_finished, timeout=10_000):
        window.start()
    assert error_dialogs.shown[0][1] == "ZeroDivisionError: division by zero"
    error_dialogs.shown.clear()


def test_closing_mid_run_stops_the_thread(qtbot, window):
    import time

    start_long_run(qtbot, window)
    started = time.monotonic()
    window.close()
    assert not window.trainer.isRunning()
    assert time.monotonic() - started < 5


def test_closing_while_paused_stops_the_thread(qtbot, window):
    start_long_run(qtbot, window)
    with qtbot.waitSignal(window.controller.pause_reached, timeout=10_000):
        window.toggle_pause()
    window.close()
    assert not window.trainer.isRunning()


def test_compile_status_shows_elapsed_then_the_compile_time(qtbot, window):
    # The trainer's signals drive the display; emitted here in the GUI thread.
    window.run_view.run_config = window.current_config()
    window.controller.event.emit(CompileStarted())
    assert window.status_label.text().startswith("compiling… 0 s")
    window.controller.event.emit(CompileFinished(12.3))
    assert "12.3 s" in window.speed_panel.compile_label.text()
    assert "compiling" not in window.status_label.text()
    # The epoch's last, smaller batch compiles again: said, not hidden.
    window.controller.event.emit(CompileStarted(16, first=False))
    assert "again for a batch of 16" in window.status_label.text()
    window.controller.event.emit(CompileFinished(4.5, 16, first=False))
    notes = window.training_panel.notes_label.text()
    assert "compiled again for a batch of 16 (4.5 s, not counted in images/s)" in notes
    assert "12.3 s" in window.speed_panel.compile_label.text()  # the first one's


def test_settings_and_config_persist(qtbot, tmp_path):
    win = MainWindow()
    qtbot.addWidget(win)
    cfg = FAST.replace(model="small-cnn", lr=0.01, seed=7, batch_size=32)
    win.apply_config(cfg)
    win.show()
    win.resize(700, 500)
    win.main_splitter.setSizes([300, 300, 500])
    sizes = win.main_splitter.sizes()
    size = win.size()
    win.close()
    assert (tmp_path / "settings.ini").is_file()

    again = MainWindow()
    qtbot.addWidget(again)
    again.show()
    assert again.current_config() == cfg
    assert again.size() == size
    assert again.main_splitter.sizes() == sizes
    again.close()


def test_run_config_save_and_load_through_dialogs(qtbot, window, tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    monkeypatch.setattr(
        dialogs, "get_save_path", lambda parent, title, name_filter: path
    )
    window.apply_config(FAST.replace(lr=0.02, optimizer="sgd"))
    window.commands.save_config.trigger()
    assert path.is_file()
    window.apply_config(FAST)
    monkeypatch.setattr(
        dialogs, "get_open_path", lambda parent, title, name_filter: path
    )
    window.commands.load_config.trigger()
    assert window.current_config().lr == 0.02
    assert window.current_config().optimizer == "sgd"


def test_bad_run_config_shows_the_error(
    qtbot, window, tmp_path, monkeypatch, error_dialogs
):
    path = tmp_path / "bad.json"
    path.write_text('{"model": "resnet"}')
    monkeypatch.setattr(
        dialogs, "get_open_path", lambda parent, title, name_filter: path
    )
    window.commands.load_config.trigger()
    assert error_dialogs.titles() == ["Could not load the run config"]
    assert "resnet" in error_dialogs.shown[0][1]
    error_dialogs.shown.clear()


def test_keyboard_shortcuts_are_documented(window):
    from PySide6.QtGui import QKeySequence

    assert window.commands.open.shortcut() == QKeySequence("Ctrl+O")
    assert window.commands.save.shortcut() == QKeySequence("Ctrl+S")
    assert window.commands.quit.shortcut() == QKeySequence("Ctrl+Q")
    assert "F5" in window.training_panel.start_button.toolTip()
    assert "F6" in window.training_panel.pause_button.toolTip()
    assert "Shift+F5" in window.training_panel.stop_button.toolTip()


def test_new_run_keeps_the_mask_and_forgets_the_weights(qtbot, window):
    window.freeze_panel.head_button.click()
    run_to_end(qtbot, window)
    run = window.current_run
    frozen = window.current_config().frozen
    assert frozen
    window.reset_run()
    assert window.current_run is None
    assert window.freeze_panel.model is not run.model
    assert window.current_config().frozen == frozen
    assert window.loss_plot.point_count("loss") == 0
    assert window.training_panel.start_button.text() == "Start"


def test_a_config_brings_its_freeze_mask(qtbot, window):
    window.apply_config(FAST.replace(frozen=("hidden",)))
    model = window.freeze_panel.model
    assert [n for n, p in model.named_parameters() if p.requires_grad] == [
        "head.weight",
        "head.bias",
    ]
    window.apply_config(FAST)  # an empty mask: everything trains
    assert all(p.requires_grad for p in window.freeze_panel.model.parameters())


def click_check_box(panel, item) -> None:
    """Toggle ``item``'s check box in the freeze tree with the keyboard (Space)."""
    tree = panel.tree
    tree.setFocus()
    tree.setCurrentItem(item)
    QTest.keyClick(tree, Qt.Key.Key_Space)


def stop_then_edit_then_continue(qtbot, window, module: str, steps_after: int = 3):
    """Stop the running run, toggle ``module`` in the tree, Continue for a few steps.

    Returns the run and its parameters as they were right before Continue.
    """
    with qtbot.waitSignal(window.controller.run_finished, timeout=10_000):
        window.training_panel.stop_button.click()
    run = window.current_run
    panel = window.freeze_panel
    assert panel.model is run.model
    assert panel.is_editable()
    click_check_box(panel, panel.module_item(module))
    assert window.controller.plan(window.current_config()).kind == "continue"
    before = {n: p.detach().clone() for n, p in run.model.named_parameters()}
    stopped_at = run.global_step
    steps = []
    event_signal(window, StepMetrics).connect(steps.append)
    window.training_panel.start_button.click()  # "Continue"
    qtbot.waitUntil(
        lambda: bool(steps) and steps[-1].global_step >= stopped_at + steps_after,
        timeout=15_000,
    )
    with qtbot.waitSignal(window.controller.run_finished, timeout=10_000):
        window.training_panel.stop_button.click()
    assert window.current_run is run  # continued, not restored or restarted
    assert steps[0].global_step == stopped_at + 1
    return run, before


def assert_optimizer_holds_exactly_the_trainable(run) -> None:
    groups = run.optimizer.param_groups
    assert len(groups) == 1
    held = [id(p) for p in groups[0]["params"]]
    trainable = [id(p) for p in run.model.parameters() if p.requires_grad]
    assert held == trainable


def test_unfreezing_between_stop_and_continue_trains_that_layer(qtbot, window):
    window.apply_config(FAST.replace(max_steps=None, epochs=50))
    panel = window.freeze_panel
    click_check_box(panel, panel.module_item("hidden.1"))  # freeze a layer
    frozen = [n for n, p in panel.model.named_parameters() if not p.requires_grad]
    assert frozen == ["hidden.1.weight", "hidden.1.bias"]
    initial = panel.model.hidden[1].weight.detach().clone()
    with qtbot.waitSignal(event_signal(window, StepMetrics), timeout=30_000):
        window.training_panel.start_button.click()
    run = window.current_run
    assert not run.model.hidden[1].weight.requires_grad

    run, before = stop_then_edit_then_continue(qtbot, window, "hidden.1")
    params = dict(run.model.named_parameters())
    # Frozen for the first part: still the weights the run started with.
    assert torch.equal(before["hidden.1.weight"], initial)
    assert params["hidden.1.weight"].requires_grad
    assert params["hidden.1.bias"].requires_grad
    # Unfrozen for the continued part: the optimizer got it, and it trained.
    for name in ("hidden.1.weight", "hidden.1.bias", "hidden.3.weight"):
        assert not torch.equal(params[name].detach(), before[name]), name
    assert_optimizer_holds_exactly_the_trainable(run)
    assert len(run.optimizer.param_groups[0]["params"]) == 6


def test_freezing_between_stop_and_continue_keeps_that_layer_bit_identical(
    qtbot, window
):
    start_long_run(qtbot, window)
    run, before = stop_then_edit_then_continue(qtbot, window, "hidden.3")
    params = dict(run.model.named_parameters())
    assert not params["hidden.3.weight"].requires_grad
    assert not params["hidden.3.bias"].requires_grad
    assert torch.equal(params["hidden.3.weight"].detach(), before["hidden.3.weight"])
    assert torch.equal(params["hidden.3.bias"].detach(), before["hidden.3.bias"])
    for name in ("hidden.1.weight", "head.weight"):  # the rest trains on
        assert not torch.equal(params[name].detach(), before[name]), name
    assert_optimizer_holds_exactly_the_trainable(run)
    assert len(run.optimizer.param_groups[0]["params"]) == 4


def test_progress_texts_are_redrawn_at_most_four_times_a_second(qtbot):
    panel = TrainingPanel()
    qtbot.addWidget(panel)
    panel.start_progress(0, 500)
    for step in range(1, 200):  # a run logging every step, far faster than 4/s
        panel.show_step(step, 500, 1000.0)
    assert panel.progress_bar.value() == 1  # the first; the rest came too soon
    panel.show_step(500, 500, 1000.0)  # the last step always shows
    assert panel.progress_bar.value() == 500
    assert panel.progress_bar.format().startswith("step 500 / 500")


def test_a_new_run_starts_with_empty_progress(qtbot, window):
    run_to_end(qtbot, window)
    panel = window.training_panel
    assert panel.progress_bar.value() == 4
    window.apply_config(window.current_config().replace(lr=0.01))  # a new run
    with qtbot.waitSignal(window.controller.run_finished, timeout=30_000):
        window.start()
        # Before the new run reports anything: nothing of the last one shows.
        assert panel.progress_bar.value() == 0
        assert panel.progress_bar.format() == "preparing…"
        assert panel.speed_label.text() == "\u2013"
    assert panel.progress_bar.value() == 4


def test_loaded_weights_stay_what_the_reader_uses_after_a_model_switch(
    qtbot, window, tmp_path
):
    source = build_model("mlp", 10, seed=21)
    path = tmp_path / "mlp.pt"
    torch.save(source.state_dict(), path)
    assert window.files.load_weights(path)  # FAST is an mlp: an exact fit

    def reader_has_the_file() -> bool:
        state = window.draw_panel.predictor.model.state_dict()
        return all(torch.equal(state[k], v) for k, v in source.state_dict().items())

    assert reader_has_the_file()
    assert window.draw_panel.source_label.text().startswith("Loaded weights from")
    select = window.model_panel.model_combo
    select.setCurrentIndex(select.findData("small-cnn"))
    assert window.draw_panel.source_label.text().startswith("Untrained model")
    select.setCurrentIndex(select.findData("mlp"))
    assert reader_has_the_file()
    tree = window.freeze_panel.model.state_dict()
    assert all(torch.equal(tree[k], v) for k, v in source.state_dict().items())
    assert window.draw_panel.source_label.text().startswith("Loaded weights from")
