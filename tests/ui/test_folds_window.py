"""Cross-validation in the window: the Training panel's Folds, K fold runs one
after another, their group, Stop, refusals, and Reproduce of one fold."""

from __future__ import annotations

import json

import pytest
import torch
from PySide6.QtWidgets import QMessageBox

from workbench.core.config import TrainConfig
from workbench.core.crossval.group import list_groups
from workbench.core.crossval.report import estimate_text
from workbench.core.data.build import load_run_arrays
from workbench.core.events import RunStarted, StepMetrics
from workbench.core.runs.listing import list_runs
from workbench.ui.main_window import MainWindow

from .helpers import FAST, event_signal

# One epoch of the bundled digits a fold: each trains in about a second.
FOLDS = FAST.replace(max_steps=None, epochs=1, folds=3)
TIMEOUT_MS = 120_000


def run_files(runs_root) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(runs_root.glob("*/run.json"))]


def test_the_folds_spin_round_trips_and_a_fold_run_shows_its_k(qtbot):
    win = MainWindow()
    qtbot.addWidget(win)
    spin = win.training_panel.folds_spin
    win.apply_config(FAST)
    assert spin.text() == "Off"
    assert win.current_config().folds == 1
    assert "each fold is its own run" in spin.toolTip().replace("\n", " ").lower()
    assert "95% interval" in spin.toolTip()
    spin.setValue(5)
    assert (win.current_config().folds, win.current_config().fold) == (5, 0)
    # A fold run's config (opened, reproduced) shows its K; its fold is kept.
    fold_run = FAST.replace(folds=4, fold=3)
    win.apply_config(fold_run)
    assert spin.value() == 4
    assert win.current_config() == fold_run
    spin.setValue(1)  # off again: fold 3 of one fold would be no config
    assert (win.current_config().folds, win.current_config().fold) == (1, 0)


def test_three_folds_from_the_window_make_three_runs_a_group_and_reproduce_one(
    qtbot, window, runs_root
):
    window.apply_config(FOLDS)
    said: list[str] = []
    started = event_signal(window, RunStarted)
    started.connect(lambda _ev: said.append(window.status_label.text()))
    with qtbot.waitSignal(window.folds.ended, timeout=TIMEOUT_MS) as ended:
        window.training_panel.start_button.click()
    assert ended.args == ["finished"]
    assert [s[: len("Fold 1 of 3: Training")] for s in said] == [
        f"Fold {i} of 3: Training" for i in (1, 2, 3)
    ]
    assert window.state == "idle"

    (group,) = list_groups(runs_root)
    infos = sorted(run_files(runs_root), key=lambda info: info["folds"]["fold"])
    assert [info["folds"] for info in infos] == [
        {"group": group.id, "fold": i, "of": 3} for i in range(3)
    ]
    for i, info in enumerate(infos):
        assert info["status"] == "finished"
        assert (info["config"]["folds"], info["config"]["fold"]) == (3, i)
    data = group.info()
    assert data["status"] == "finished"
    assert sorted(data["scores"]) == ["0", "1", "2"]
    assert group.run_ids() == {i: info["id"] for i, info in enumerate(infos)}
    # Every training image once, by the fold model that never trained on it.
    labels = load_run_arrays(TrainConfig(dataset="digits")).train_labels
    kept = group.predictions()
    assert torch.equal(kept.index, torch.arange(len(labels)))
    assert torch.equal(kept.label, labels)
    assert sorted(kept.fold.unique().tolist()) == [0, 1, 2]

    lines = [estimate_text(n, e) for n, e in group.estimates().items()]
    assert window.folds.summary == lines
    assert window.status_label.text() == f"Cross-validation over 3 folds: {lines[0]}"
    report = window.findChild(QMessageBox, "reportDialog")
    assert report is not None
    assert lines[0] in report.text()
    assert window.training_panel.start_button.text() == "Start"
    report.close()

    # Reproduce of one fold trains that fold alone: no campaign, no new group.
    run = next(r for r in list_runs(runs_root) if r.id == infos[1]["id"])
    with qtbot.waitSignal(window.controller.run_finished, timeout=TIMEOUT_MS) as ended:
        window.reproduce_run(run)
    assert ended.args[0].reproduction_of == run.folder
    assert len(list_groups(runs_root)) == 1
    assert len(group.run_ids()) == 3
    repeat = window.run_folder.info()
    assert (repeat["config"]["folds"], repeat["config"]["fold"]) == (3, 1)
    assert "folds" not in repeat  # an ordinary run, not one of the group's
    assert len(run_files(runs_root)) == 4
    assert window.state == "idle"


@pytest.mark.parametrize("stopped_in", [1, 2])
def test_stop_in_a_fold_saves_it_and_starts_no_later_fold(
    qtbot, window, runs_root, stopped_in
):
    window.apply_config(FOLDS.replace(epochs=2))
    steps = event_signal(window, StepMetrics)

    def stop_in_fold(_ev: StepMetrics) -> None:
        if window.folds.fold == stopped_in - 1:
            window.stop()

    stop = steps.connect(stop_in_fold)
    finished: list[object] = []
    window.controller.run_finished.connect(finished.append)
    with qtbot.waitSignal(window.folds.ended, timeout=TIMEOUT_MS) as ended:
        window.start()
    assert ended.args == ["stopped"]
    infos = sorted(run_files(runs_root), key=lambda info: info["folds"]["fold"])
    assert [info["folds"]["fold"] for info in infos] == list(range(stopped_in))
    assert infos[-1]["status"] == "stopped"
    (group,) = list_groups(runs_root)
    assert sorted(group.info()["scores"]) == [str(f) for f in range(stopped_in - 1)]
    assert window.status_label.text().startswith(
        f"Stopped in fold {stopped_in} of 3 at step"
    )
    assert len(finished) == stopped_in
    assert window.state == "idle"

    # Continue trains that fold to its end, alone, like any stopped run.
    steps.disconnect(stop)
    assert window.training_panel.start_button.text() == "Continue"
    with qtbot.waitSignal(window.controller.run_finished, timeout=TIMEOUT_MS):
        window.start()
    infos = sorted(run_files(runs_root), key=lambda info: info["folds"]["fold"])
    assert len(infos) == stopped_in
    assert infos[-1]["status"] == "finished"
    assert len(group.info()["scores"]) == stopped_in - 1
    assert window.folds.campaign is None


def test_stop_during_the_data_check_starts_nothing(qtbot, window, runs_root):
    window.apply_config(FOLDS)
    window.start()
    assert window.state == "preparing"
    assert window.training_panel.stop_button.isEnabled()
    with qtbot.waitSignal(window.folds.ended, timeout=TIMEOUT_MS) as ended:
        window.stop()
        assert not window.training_panel.stop_button.isEnabled()
    assert ended.args == ["stopped"]
    assert window.status_label.text() == "Stopped: the cross-validation did not start"
    assert not any(runs_root.iterdir())


def test_more_folds_than_a_class_has_images_is_refused_before_any_folder(
    qtbot, window, runs_root, tmp_path, error_dialogs
):
    from tests.image_folders import make_folder

    root = make_folder(tmp_path / "pets", ["cat", "dog"], 5)
    window.apply_config(
        FOLDS.replace(dataset="folder", data_dir=str(root), image_size=16, folds=5)
    )
    with qtbot.waitSignal(window.folds.ended, timeout=TIMEOUT_MS) as ended:
        window.start()
    assert ended.args == ["failed"]
    ((title, message, _details),) = error_dialogs.shown
    error_dialogs.shown.clear()
    assert title == "Cannot start the cross-validation"
    assert message.startswith("5 folds need at least 5 training images of every")
    assert window.status_label.text() == f"{title}: {message}"
    assert window.training_panel.progress_bar.format() == "idle"
    assert not any(runs_root.iterdir())  # no run folder, no group
    assert window.state == "idle"


def test_folds_on_several_processes_are_refused_in_one_line(
    window, runs_root, error_dialogs
):
    window.apply_config(FOLDS)
    window.device_panel.processes_spin.setRange(1, 4)
    window.device_panel.set_processes(2)
    window.start()
    ((title, message, _details),) = error_dialogs.shown
    error_dialogs.shown.clear()
    assert title == "Cannot start the cross-validation"
    assert message == (
        "3 folds train one after another in this window: set Processes to 1"
    )
    assert window.controller.job is None
    assert window.state == "idle"
    assert not any(runs_root.iterdir())
