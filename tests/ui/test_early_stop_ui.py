"""Early stopping and the best epoch in the window: the Training panel's
controls set the run's config, and a run that stops early says so."""

from __future__ import annotations

import json

from workbench.core.config import TrainConfig
from workbench.ui.main_window import MainWindow

from .helpers import FAST, run_to_end


def test_the_training_panel_sets_early_stopping_and_the_best_metric(qtbot):
    win = MainWindow()
    qtbot.addWidget(win)
    panel = win.training_panel
    assert win.current_config().early_stop is None
    assert panel.patience_spin.text() == "off"
    cfg = FAST.replace(early_stop=3, early_stop_delta=0.002, best_metric="macro_f1")
    win.apply_config(cfg)
    assert panel.best_combo.currentText() == "Macro-F1"
    assert win.current_config() == cfg
    panel.patience_spin.setValue(0)  # off again
    panel.best_combo.setCurrentIndex(1)
    now = win.current_config()
    assert (now.early_stop, now.best_metric) == (None, "val_loss")


def test_a_run_that_stops_early_says_when_and_why(qtbot, runs_root):
    win = MainWindow()
    qtbot.addWidget(win)
    win.apply_config(
        TrainConfig(
            dataset="digits", model="small-cnn", epochs=30, early_stop=1, seed=0
        )
    )
    qtbot.waitUntil(lambda: not win.data_panel.is_busy(), timeout=30_000)
    run_to_end(qtbot, win, timeout=120_000)
    (info_file,) = runs_root.glob("*/run.json")
    info = json.loads(info_file.read_text())
    stopped_at = info["early_stop"]["epoch"]
    assert stopped_at < 30
    status = win.status_label.text()
    assert status.startswith(f"Stopped early after epoch {stopped_at}: validation")
    assert "stopped early" in win.training_panel.progress_bar.format()
    assert (info_file.parent / "best.pt").is_file()

    # Opened from the Runs tab, the best epoch is what the window and the Draw
    # tab then hold, and both say so.
    best = info["best_epoch"]["epoch"]
    win.reset_run()
    panel = win.runs_panel
    panel.refresh()
    panel.table.select_ids([info["id"]])
    assert panel.open_best_button.isEnabled()
    assert f"the best epoch, {best} of {stopped_at}" in panel.open_best_button.toolTip()
    with qtbot.waitSignal(win.controller.opened, timeout=30_000):
        panel.open_best_button.click()
    said = f"the best epoch, {best} of {stopped_at} (validation accuracy "
    assert win.status_label.text().startswith(f"Opened best.pt: {said}")
    assert win.current_run.epoch == best
    source = win.draw_panel.source_label
    qtbot.waitUntil(lambda: "best.pt: the best epoch" in source.text(), timeout=5_000)
