"""Autosave into run folders, the resume offer, and loading weights with the doctor."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from workbench.core import events as E
from workbench.core.checkpoints.io import load_checkpoint
from workbench.core.config import TrainConfig
from workbench.core.models.builtins import build_model
from workbench.core.runs.folder import RunFolder, interrupted_runs
from workbench.core.train.engine import TrainControl, iter_fit, prepare_run
from workbench.ui import dialogs
from workbench.ui.main_window import MainWindow

from .helpers import BACK_TO_IDLE, FAST, run_to_end

pytestmark = pytest.mark.gui


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def assert_checkpoint_holds(path, run) -> dict:
    """The checkpoint at ``path``, loaded, holds exactly ``run`` as it is now."""
    payload = load_checkpoint(path)
    assert payload["global_step"] == run.global_step
    assert payload["epoch"] == run.epoch
    assert payload["batch_in_epoch"] == run.batch_in_epoch
    state = run.model.state_dict()
    assert payload["model_state"].keys() == state.keys()
    for name, tensor in state.items():
        assert torch.equal(payload["model_state"][name], tensor.cpu()), name
    saved = payload["optimizer_state"]["state"]
    live = run.optimizer.state_dict()["state"]
    assert saved.keys() == live.keys()
    for index, slots in live.items():
        assert saved[index].keys() == slots.keys()
        for slot, value in slots.items():
            if isinstance(value, torch.Tensor):
                assert torch.equal(saved[index][slot], value.cpu()), (index, slot)
            else:
                assert saved[index][slot] == value, (index, slot)
    assert payload["history"]["steps"] == [list(s) for s in run.history.steps]
    assert TrainConfig.from_dict(payload["config"]) == run.config
    return payload


def _interrupted_run(tiny_arrays, status="running") -> tuple[RunFolder, int]:
    """A run folder as a crashed process leaves it: stopped mid-run, saved."""
    cfg = FAST.replace(max_steps=None, epochs=3)
    run = prepare_run(cfg)
    control = TrainControl()
    for event in iter_fit(run, control):
        if isinstance(event, E.EpochMetrics):
            control.request_stop()  # the crash comes right after the epoch's save
    folder = RunFolder.create(cfg, origin="command line")
    folder.save(run)
    folder.update(status=status, pid=_dead_pid())
    return folder, run.global_step


@pytest.mark.slow
def test_a_run_autosaves_into_its_folder(qtbot, window, runs_root):
    window.apply_config(FAST.replace(max_steps=None, epochs=2))
    run_to_end(qtbot, window)
    folder = window.run_folder
    assert folder is not None
    assert folder.path.parent == runs_root
    info = folder.info()
    assert info["status"] == "finished"
    assert info["origin"] == "window"
    assert info["global_step"] == window.current_run.global_step
    assert info["versions"]["torch"] == str(torch.__version__)
    # The autosaved checkpoint is the finished run: weights, optimizer, step.
    run = window.current_run
    assert run.global_step == run.total_steps > 0
    assert_checkpoint_holds(folder.checkpoint_path, run)
    assert interrupted_runs() == []


@pytest.mark.slow
def test_an_interrupted_run_is_offered_and_resumed(qtbot, monkeypatch, tiny_arrays):
    folder, step = _interrupted_run(tiny_arrays)
    interrupted = load_checkpoint(folder.checkpoint_path)
    asked = []

    def ask(parent, title, text):
        asked.append(text)
        return "resume"

    monkeypatch.setattr(dialogs, "ask_resume", ask)
    win = MainWindow()
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.controller.run_finished, timeout=30_000):
        win.show()
    assert len(asked) == 1
    assert folder.id in asked[0]
    assert f"reached step {step}" in asked[0]
    run = win.current_run
    assert run.global_step == run.total_steps > step  # trained on to the end
    # Resumed from the saved run, not begun again: its logged steps come first.
    saved_steps = interrupted["history"]["steps"]
    assert len(saved_steps) == step
    assert [list(s) for s in run.history.steps[:step]] == saved_steps
    assert [s for s, _ in run.history.steps[step:]] == list(
        range(step + 1, run.global_step + 1)
    )
    assert win.run_folder.path == folder.path  # and kept saving into its folder
    assert folder.info()["status"] == "finished"
    assert_checkpoint_holds(folder.checkpoint_path, run)
    win.close()


@pytest.mark.slow
def test_closing_mid_run_is_offered_next_time_and_can_be_forgotten(qtbot, monkeypatch):
    from tests.ui.test_window import start_long_run

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(win.data_panel.is_loaded, timeout=30_000)
    start_long_run(qtbot, win)
    folder = win.run_folder
    run = win.current_run
    win.close()
    assert folder.info()["status"] == "closed"
    # Saved when the run stopped: the checkpoint is the run as the close left it.
    assert folder.checkpoint_path.is_file()
    assert run.global_step >= 1
    assert_checkpoint_holds(folder.checkpoint_path, run)

    monkeypatch.setattr(dialogs, "ask_resume", lambda *args: "dismiss")
    again = MainWindow()
    qtbot.addWidget(again)
    again.show()
    qtbot.waitUntil(lambda: folder.info()["status"] == "dismissed", timeout=5_000)
    assert again.current_run is None
    assert interrupted_runs() == []
    again.close()


def test_load_weights_with_another_head_keeps_the_rest(
    qtbot, window, tmp_path, monkeypatch
):
    source = build_model("small-cnn", 26, seed=7)
    path = tmp_path / "letters.pt"
    torch.save(source.state_dict(), path)  # a plain state_dict, as tutorials save
    asked = []

    def confirm(parent, title, summary, details, **options):
        asked.append((summary, details))
        return True

    monkeypatch.setattr(dialogs, "confirm_partial_load", confirm)
    window.apply_config(FAST.replace(model="small-cnn", max_steps=3))
    assert window.files.load_weights(path)
    summary, details = asked[0]
    assert "partial fit" in summary
    assert "head.weight: file (26, 576) vs model (10, 576)" in details
    assert "reinitialised head.bias, head.weight" in window.status_label.text()
    model = window.freeze_panel.model
    for name, tensor in source.state_dict().items():
        if not name.startswith("head."):
            assert torch.equal(model.state_dict()[name], tensor), name
    # The next run starts from them: train the head only, the rest stays the file's.
    window.freeze_panel.head_button.click()
    run_to_end(qtbot, window)
    trained = window.current_run.model.state_dict()
    for name, tensor in source.state_dict().items():
        if not name.startswith("head."):
            assert torch.equal(trained[name], tensor), name


def test_weights_with_nothing_in_common_are_refused(
    qtbot, window, tmp_path, error_dialogs
):
    path = tmp_path / "classic.pt"
    torch.save(build_model("cnn").state_dict(), path)  # conv1/fc1...: no shared name
    window.apply_config(FAST.replace(model="small-cnn"))
    before = {k: v.clone() for k, v in window.freeze_panel.model.state_dict().items()}
    assert not window.files.load_weights(path)
    assert error_dialogs.titles() == ["The weights do not fit"]
    error_dialogs.shown.clear()
    after = window.freeze_panel.model.state_dict()
    assert all(torch.equal(after[k], v) for k, v in before.items())


def test_save_and_open_keep_the_run_folder_apart(qtbot, window, tmp_path, monkeypatch):
    run_to_end(qtbot, window)
    run = window.current_run
    folder = window.run_folder
    run_json = json.loads((folder.path / "run.json").read_text())
    assert run_json["config"]["model"] == FAST.model
    assert TrainConfig.from_dict(run_json["config"]) == FAST
    autosaved = folder.checkpoint_path.read_bytes()

    # File > Save checkpoint… to a file of the user's: the run folder is untouched.
    path = tmp_path / "mine.pt"
    monkeypatch.setattr(dialogs, "get_save_path", lambda *args: path)
    window.commands.save.trigger()
    assert_checkpoint_holds(path, run)
    assert window.run_folder is folder
    assert folder.checkpoint_path.read_bytes() == autosaved

    # File > Open checkpoint… that file: the run is restored, and not tied to the
    # run folder it came from.
    monkeypatch.setattr(dialogs, "get_open_path", lambda *args: path)
    with qtbot.waitSignal(
        window.controller.state_changed,
        timeout=30_000,
        **BACK_TO_IDLE,
    ):
        window.commands.open.trigger()
    opened = window.current_run
    assert opened is not run
    assert opened.global_step == run.global_step
    for name, tensor in run.model.state_dict().items():
        assert torch.equal(opened.model.state_dict()[name], tensor), name
    assert window.run_folder is None
    saved = path.read_bytes()

    # Training it on autosaves into a new folder: neither the first run's folder
    # nor the opened file is written over.
    window.apply_config(window.current_config().replace(max_steps=run.global_step + 2))
    run_to_end(qtbot, window)
    assert window.current_run.global_step == run.global_step + 2
    new_folder = window.run_folder
    assert new_folder is not None
    assert new_folder.path != folder.path
    assert_checkpoint_holds(new_folder.checkpoint_path, window.current_run)
    assert folder.checkpoint_path.read_bytes() == autosaved
    assert folder.info()["global_step"] == run.global_step
    assert path.read_bytes() == saved
