"""Save and open checkpoints through the (monkeypatched) file dialogs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt

from workbench.core.events import StepMetrics
from workbench.ui import dialogs, trainer_thread
from workbench.ui.main_window import MainWindow
from workbench.ui.window import state as window_state

from .helpers import BACK_TO_IDLE, FAST, event_signal, run_to_end
from .test_autosave_ui import assert_checkpoint_holds

pytestmark = pytest.mark.gui


def _use_dialog(monkeypatch, name, path):
    calls = []

    def fake(parent, title, name_filter):
        calls.append((title, name_filter))
        return path

    monkeypatch.setattr(dialogs, name, fake)
    return calls


def test_save_then_open_restores_everything(qtbot, window, tmp_path, monkeypatch):
    # Epochs of 180 small steps, without the feature cache (head-only steps on
    # kept features are quicker still): the stop lands mid-epoch, not after the
    # epoch's last step has already run.
    cfg = FAST.replace(
        max_steps=None, epochs=50, lr=0.004, batch_size=8, feature_cache="off"
    )
    window.apply_config(cfg)
    window.freeze_panel.head_button.click()
    # Stop a step or more into the second epoch: the position in it is restored
    # too. The stop is asked for in the trainer thread as the step is sent (each
    # at once), so it lands there however fast an epoch goes by.
    monkeypatch.setattr(trainer_thread, "BATCH_S", 0.0)
    trainer = window.controller.trainer

    def stop_in_second_epoch(batch):
        if any(isinstance(e, StepMetrics) and e.epoch >= 1 for e in batch):
            trainer.control.request_stop()

    trainer.steps.connect(stop_in_second_epoch, Qt.ConnectionType.DirectConnection)
    with qtbot.waitSignal(window.controller.run_finished, timeout=30_000):
        window.start()
    trainer.steps.disconnect(stop_in_second_epoch)
    run = window.current_run
    assert run.epoch >= 1
    assert run.batch_in_epoch > 0
    path = tmp_path / "ckpt.pt"
    calls = _use_dialog(monkeypatch, "get_save_path", path)
    window.commands.save.trigger()
    assert "*.pt" in calls[0][1]
    # The file holds the run: weights, optimizer state, step, history, config.
    assert_checkpoint_holds(path, run)

    other = MainWindow()
    qtbot.addWidget(other)
    qtbot.waitUntil(lambda: not other.data_panel.is_busy(), timeout=30_000)
    _use_dialog(monkeypatch, "get_open_path", path)
    with qtbot.waitSignal(
        other.controller.state_changed,
        timeout=30_000,
        **BACK_TO_IDLE,
    ):
        other.commands.open.trigger()
    restored = other.current_run
    assert restored is not None
    assert restored.global_step == run.global_step
    assert (restored.epoch, restored.batch_in_epoch) == (run.epoch, run.batch_in_epoch)
    assert restored.config == run.config
    assert restored.history.steps == run.history.steps
    assert restored.config.lr == 0.004
    assert other.current_config().lr == 0.004  # panels show the checkpoint's config
    assert other.freeze_panel.model is restored.model
    frozen = [n for n, p in restored.model.named_parameters() if not p.requires_grad]
    assert frozen == [n for n, p in run.model.named_parameters() if not p.requires_grad]
    for (name, a), (_, b) in zip(
        run.model.state_dict().items(), restored.model.state_dict().items(), strict=True
    ):
        assert (a == b).all(), name
    # The optimizer carries on with its own state (Adam's moments and step).
    saved_state = run.optimizer.state_dict()["state"]
    restored_state = restored.optimizer.state_dict()["state"]
    assert restored_state.keys() == saved_state.keys()
    assert saved_state  # the head trained: there is state to restore
    for index, slots in saved_state.items():
        for slot, value in slots.items():
            assert torch.equal(restored_state[index][slot], value), (index, slot)
    # The plots show the stored history.
    assert other.loss_plot.point_count("loss") == len(run.history.steps)
    assert other.accuracy_plot.point_count("validation") == len(run.history.epochs)
    # Every logged step's speed, as the run showed it live (not one per epoch).
    shown = other.curves.throughput_plot.data("images/s")
    live = window.curves.throughput_plot.data("images/s")
    assert len(run.history.speeds) == len(run.history.steps)
    assert list(zip(*shown, strict=True)) == run.history.speeds
    np.testing.assert_array_equal(shown, live)
    assert window_state.recent_files(other._settings)[0] == str(path.resolve())
    assert other.commands.recent_menu.actions()[0].data() == str(path.resolve())

    # Training continues from the checkpoint.
    assert other.training_panel.start_button.text() == "Continue"
    steps = []
    event_signal(other, StepMetrics).connect(steps.append)
    other.apply_config(other.current_config().replace(max_steps=run.global_step + 2))
    run_to_end(qtbot, other)
    assert steps[0].global_step == run.global_step + 1
    assert other.current_run.global_step == run.global_step + 2
    assert other.loss_plot.point_count("loss") == len(run.history.steps) + 2
    speeds = other.curves.throughput_plot.point_count("images/s")
    assert speeds == len(run.history.speeds) + 2
    other.close()


def test_opening_a_bad_file_shows_the_error(
    qtbot, window, tmp_path, monkeypatch, error_dialogs
):
    path = tmp_path / "not-a-checkpoint.pt"
    path.write_bytes(b"garbage")
    _use_dialog(monkeypatch, "get_open_path", path)
    with qtbot.waitSignal(
        window.controller.state_changed,
        timeout=30_000,
        **BACK_TO_IDLE,
    ):
        window.commands.open.trigger()
    assert error_dialogs.titles() == ["Could not open the checkpoint"]
    assert "is a text file, not a checkpoint" in error_dialogs.shown[0][1]
    assert window.current_run is None
    error_dialogs.shown.clear()


def test_cancelled_dialogs_do_nothing(qtbot, window, monkeypatch, tmp_path):
    run_to_end(qtbot, window)  # a run, so that Save checkpoint is offered
    run = window.current_run
    cfg = window.current_config()
    weights = {k: v.clone() for k, v in run.model.state_dict().items()}
    files = sorted(tmp_path.rglob("*"))
    opened = _use_dialog(monkeypatch, "get_open_path", None)
    saved = _use_dialog(monkeypatch, "get_save_path", None)
    window.commands.open.trigger()
    window.commands.load_config.trigger()
    window.commands.save.trigger()
    window.commands.save_config.trigger()
    assert len(opened) == 2  # each dialog was shown, then cancelled
    assert len(saved) == 2
    assert window.state == "idle"
    assert window.current_run is run
    assert window.current_config() == cfg
    assert all(torch.equal(v, weights[k]) for k, v in run.model.state_dict().items())
    assert window_state.recent_files(window._settings) == []
    assert sorted(tmp_path.rglob("*")) == files  # nothing written anywhere


def test_save_is_offered_only_with_a_run(qtbot, window):
    assert not window.commands.save.isEnabled()
    run_to_end(qtbot, window)
    assert window.commands.save.isEnabled()


def test_gpu_checkpoint_opens_on_this_machine(qtbot, window, tmp_path, monkeypatch):
    import torch

    from workbench.core.train.devices import list_devices

    if any(d.kind == "cuda" and d.available for d in list_devices()):
        pytest.skip("this machine has CUDA: nothing to fall back from")
    run_to_end(qtbot, window)
    path = tmp_path / "gpu.pt"
    window.files.save_checkpoint(path)
    payload = torch.load(path, map_location="cpu", weights_only=True)
    payload["config"].update(device="cuda", precision="fp16")
    torch.save(payload, path)
    _use_dialog(monkeypatch, "get_open_path", path)
    with qtbot.waitSignal(
        window.controller.state_changed,
        timeout=30_000,
        **BACK_TO_IDLE,
    ):
        window.commands.open.trigger()
    run = window.current_run
    assert run.device.type == "cpu"
    assert run.config.precision == "fp32"
    for name, tensor in payload["model_state"].items():
        assert torch.equal(run.model.state_dict()[name], tensor), name
    notes = window.training_panel.notes_label.text()
    assert "cuda" in notes
    assert "fp16 needs CUDA" in notes


@pytest.mark.slow
def test_continue_after_open_repeats_the_uninterrupted_run(
    qtbot, window, tmp_path, monkeypatch
):
    from workbench.core import events as E
    from workbench.core.checkpoints.io import save_checkpoint
    from workbench.core.train.engine import TrainControl, fit, iter_fit, prepare_run

    cfg = FAST.replace(model="small-cnn", max_steps=None, epochs=2)
    straight = [e.loss for e in fit(prepare_run(cfg)) if isinstance(e, E.StepMetrics)]
    run = prepare_run(cfg)
    control = TrainControl()
    for event in iter_fit(run, control):
        if isinstance(event, E.StepMetrics) and event.global_step == 30:
            control.request_stop()  # mid-way through the second epoch
    path = save_checkpoint(tmp_path / "stopped.pt", run)

    _use_dialog(monkeypatch, "get_open_path", path)
    with qtbot.waitSignal(
        window.controller.state_changed,
        timeout=30_000,
        **BACK_TO_IDLE,
    ):
        window.commands.open.trigger()
    assert window.training_panel.start_button.text() == "Continue"
    losses = []
    event_signal(window, StepMetrics).connect(lambda ev: losses.append(ev.loss))
    run_to_end(qtbot, window)
    assert len(straight) == 46
    assert straight[:30] == [loss for _, loss in run.history.steps]
    assert straight[30:] == losses


def test_a_failed_open_leaves_the_current_run_untouched(
    qtbot, window, tmp_path, monkeypatch, error_dialogs
):
    run_to_end(qtbot, window)
    run = window.current_run
    before = {k: v.clone() for k, v in run.model.state_dict().items()}
    good = window.files.save_checkpoint(tmp_path / "good.pt") or tmp_path / "good.pt"
    data = good.read_bytes()
    (tmp_path / "cut.pt").write_bytes(data[: len(data) // 3])
    _use_dialog(monkeypatch, "get_open_path", tmp_path / "cut.pt")
    with qtbot.waitSignal(
        window.controller.state_changed,
        timeout=30_000,
        **BACK_TO_IDLE,
    ):
        window.commands.open.trigger()
    assert error_dialogs.titles() == ["Could not open the checkpoint"]
    error_dialogs.shown.clear()
    assert window.current_run is run
    assert all(torch.equal(v, before[k]) for k, v in run.model.state_dict().items())
    assert window.freeze_panel.model is run.model


def test_open_recent_lists_each_file_once_and_tells_same_names_apart(
    qtbot, window, tmp_path
):
    import json

    folders = {name: tmp_path / "runs" / name for name in ("run-a", "run-b", "gone")}
    for folder in folders.values():
        folder.mkdir(parents=True)
        (folder / "checkpoint.pt").write_bytes(b"not opened here")
    link = tmp_path / "link-to-b"
    link.symlink_to(folders["run-b"])
    settings = window._settings
    for name in ("gone", "run-b", "run-a", "run-b", "run-a"):
        window_state.add_recent_file(settings, folders[name] / "checkpoint.pt")
    # An entry written by an older version: the same file as run-b's, unresolved.
    paths = window_state.recent_files(settings)
    paths.insert(1, str(tmp_path / "runs" / ".." / "link-to-b" / "checkpoint.pt"))
    settings.setValue("recent_files", json.dumps(paths))
    window.files.fill_recent_menu()

    menu = window.commands.recent_menu
    assert [a.text() for a in menu.actions()] == [
        "&1 checkpoint.pt — run-a",
        "&2 checkpoint.pt — run-b",
        "&3 checkpoint.pt — gone",
    ]
    wanted = [folders[n] / "checkpoint.pt" for n in ("run-a", "run-b", "gone")]
    assert [a.data() for a in menu.actions()] == [str(p.resolve()) for p in wanted]
    assert menu.actions()[0].toolTip() == str(wanted[0].resolve())
    assert all(a.isEnabled() for a in menu.actions())

    wanted[2].unlink()  # deleted since: the menu says so when it opens
    menu.aboutToShow.emit()
    actions = menu.actions()
    assert [a.isEnabled() for a in actions] == [True, True, False]
    assert "no longer exists" in actions[2].statusTip()


def test_open_recent_names_a_runs_checkpoint_by_its_run(qtbot, window, runs_root):
    # Issue 34 item 28: five runs' checkpoints read "checkpoint.pt" five times.
    from workbench.core.config import TrainConfig
    from workbench.core.runs.folder import RunFolder
    from workbench.ui.panels.runs_table import local_time

    settings = window._settings
    made = []
    for model, name in (("mlp", ""), ("small-cnn", "my best"), ("mlp", "")):
        folder = RunFolder.create(
            TrainConfig(dataset="digits", model=model), origin="test"
        )
        folder.update(name=name)
        (folder.path / "checkpoint.pt").write_bytes(b"not opened here")
        window_state.add_recent_file(settings, folder.path / "checkpoint.pt")
        made.append(folder)
    window.files.fill_recent_menu()
    texts = [a.text() for a in window.commands.recent_menu.actions()]
    when = local_time(made[2].info()["created"])
    first = f"mlp on digits, {when} — checkpoint.pt"
    if local_time(made[0].info()["created"]) == when:  # the same minute: ids too
        assert texts[0] == f"&1 {first} ({made[2].id})"
        assert texts[2] == f"&3 {first} ({made[0].id})"
    else:
        assert texts[0] == f"&1 {first}"
    assert texts[1] == "&2 my best (small-cnn on digits) — checkpoint.pt"
    assert len(set(texts)) == 3
