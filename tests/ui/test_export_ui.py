"""File > Export model…: every format written off the GUI thread, verified, shown."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import torch

from workbench.core.export import formats as export
from workbench.ui import dialogs
from workbench.ui.window.export import GREEN, RED

from .helpers import BACK_TO_IDLE, FAST, run_to_end

FILES = ("model.pt", "model.pt2", "model.onnx")
SIDE_FILES = ("preprocess.json", "labels.json", "MODEL_CARD.md")


def _choose_folder(monkeypatch, path):
    calls = []

    def fake(parent, title, name):
        calls.append(title)
        return path

    monkeypatch.setattr(dialogs, "get_export_folder", fake)
    return calls


def _export(qtbot, window, monkeypatch, out: Path) -> None:
    """Trigger File > Export model… into ``out`` and wait until it is done."""
    calls = _choose_folder(monkeypatch, out)
    with qtbot.waitSignal(
        window.controller.state_changed, timeout=60_000, **BACK_TO_IDLE
    ):
        window.commands.export.trigger()
        assert calls, "the folder dialog was not asked"
        # Busy, not frozen: the export runs in a task and the menus wait.
        assert window.state == "exporting"
        assert not window.commands.open.isEnabled()
        assert not window.commands.export.isEnabled()


@pytest.mark.slow
def test_export_writes_every_format_and_shows_them_verified(
    qtbot, window, tmp_path, monkeypatch
):
    run_to_end(qtbot, window)
    statuses = []
    show_status = window.set_status

    def record(text):
        statuses.append(text)
        show_status(text)

    monkeypatch.setattr(window, "set_status", record)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    out = tmp_path / "exported"
    _export(qtbot, window, monkeypatch, out)
    assert not list(scratch.iterdir())  # the run's temporary checkpoint is gone
    # Each step was shown in the status line while the task ran.
    assert any(
        s.startswith("Exporting: exporting onnx to model.onnx") for s in statuses
    )
    for name in FILES + SIDE_FILES:
        assert (out / name).is_file(), name
    assert not (out / export.FAILED_MARKER).exists()
    exporter = window.exporter
    assert exporter.last_result is not None
    assert exporter.last_result.passed
    lines = exporter.last_text.splitlines()
    assert "all 3 formats verified" in lines[0]
    for title, file in zip(("TorchScript", "torch.export", "ONNX"), FILES, strict=True):
        line = next(x for x in lines if x.startswith(title + " "))
        assert file in line
        assert "agreement 100.00%" in line
        assert "largest difference" in line
        assert line.endswith(": verified")
    card = exporter.last_card
    assert card is not None
    assert card.isVisible()
    assert GREEN in card.text()
    assert RED not in card.text()
    assert "all 3 formats verified" in window.status_label.text()
    card.grab().save("/tmp/export_card_ok.png")
    card.close()


@pytest.mark.slow
def test_a_wrong_artifact_shows_verification_failed_in_red(
    qtbot, window, tmp_path, monkeypatch
):
    original = export.EXPORTERS["onnx"]

    def perturbed(model, shape, path):
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.5)
        original(model, shape, path)

    def refuses(model, shape, path):
        raise RuntimeError("this model is not for you")

    monkeypatch.setitem(export.EXPORTERS, "onnx", perturbed)
    monkeypatch.setitem(export.EXPORTERS, "exported", refuses)
    run_to_end(qtbot, window)
    out = tmp_path / "exported"
    _export(qtbot, window, monkeypatch, out)
    result = window.exporter.last_result
    assert result is not None
    assert not result.passed
    text = window.exporter.last_text
    assert "verification FAILED: files kept, marked" in text
    assert (out / "model.onnx").is_file()  # kept, and marked
    assert (out / export.FAILED_MARKER).is_file()
    assert "torch.export: not exported: cannot export mlp: this model is not" in text
    assert "TorchScript  model.pt  agreement 100.00%" in text
    onnx_line = next(x for x in text.splitlines() if x.startswith("ONNX "))
    assert "FAILED" in onnx_line
    card = window.exporter.last_card
    assert RED in card.text()
    assert "verification FAILED" in card.text()
    assert "verification FAILED" in window.status_label.text()
    card.grab().save("/tmp/export_card.png")
    card.close()


def test_no_run_no_export(qtbot, window, monkeypatch):
    assert window.current_run is None
    assert not window.commands.export.isEnabled()
    assert "Ctrl+E" in window.commands.export.shortcut().toString()
    calls = _choose_folder(monkeypatch, Path("/nowhere"))
    window.exporter.export_dialog()
    assert not calls
    assert "Train a run or open a checkpoint" in window.status_label.text()


def test_a_training_run_says_stop_first(qtbot, window, monkeypatch):
    window.apply_config(FAST.replace(max_steps=None, epochs=50))
    window.start()
    qtbot.waitUntil(lambda: window.state == "running", timeout=30_000)
    calls = _choose_folder(monkeypatch, Path("/nowhere"))
    assert window.commands.export.isEnabled()  # it says why it cannot
    window.commands.export.trigger()
    assert not calls
    assert "Stop the run to export it" in window.status_label.text()
    with qtbot.waitSignal(window.controller.run_finished, timeout=30_000):
        window.stop()


def test_an_unusable_folder_is_one_clear_message(
    qtbot, window, tmp_path, monkeypatch, error_dialogs
):
    run_to_end(qtbot, window)
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    _choose_folder(monkeypatch, a_file)
    window.commands.export.trigger()
    assert window.state == "idle"
    [(title, message, details)] = error_dialogs.shown
    assert title == "Could not export the model"
    assert "is a file, not a folder" in message
    assert not details
    error_dialogs.shown.clear()
    # Under a file: the core cannot create it; said in the task, not a crash.
    _export(qtbot, window, monkeypatch, a_file / "sub")
    [(title, message, _details)] = error_dialogs.shown
    assert message.startswith("cannot create ")
    assert "Traceback" not in message
    assert window.exporter.last_result is None
    assert "Could not export the model: cannot create" in window.status_label.text()
    error_dialogs.shown.clear()
