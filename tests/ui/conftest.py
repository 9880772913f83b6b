"""Qt fixtures for the window tests: offscreen, isolated settings, no leftovers."""

from __future__ import annotations

import gc
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from workbench.ui import dialogs
from workbench.ui.tasks import TaskThread
from workbench.ui.trainer_thread import TrainerThread
from workbench.ui.window import state as window_state

from .helpers import FAST


@pytest.fixture(autouse=True)
def _isolated_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Window state goes to an INI file in tmp_path; data to tmp_path too."""
    path = tmp_path / "settings.ini"
    window_state.use_settings_file(path)
    monkeypatch.setenv("PTCORE_DATA_DIR", str(tmp_path / "data"))
    yield path
    window_state.use_settings_file(None)


@pytest.fixture(autouse=True)
def _collection_left_as_it_was() -> Iterator[None]:
    """Fail a test that turns cycle collection back on (and turn it off):
    a worker thread would then free GUI objects off their thread, which once
    deadlocked the suite (``workbench.ui.gui_gc``)."""
    was_enabled = gc.isenabled()
    yield
    if gc.isenabled() and not was_enabled:
        gc.disable()
        pytest.fail("the test turned cycle collection back on")


@pytest.fixture(autouse=True)
def _no_dangling_threads() -> Iterator[None]:
    """Fail a test that leaves a trainer or task thread running (and stop it)."""
    yield
    leftovers: list[str] = []
    for thread in TrainerThread.running_threads():
        thread.control.request_stop()
        thread.wait(10_000)
        leftovers.append("TrainerThread")
    for task in TaskThread.running_threads():
        task.cancel()
        task.wait(10_000)
        leftovers.append(f"TaskThread {task.objectName()}")
    assert not leftovers, f"threads left running: {leftovers}"


@dataclass
class ErrorDialogs:
    """Error dialogs the window asked for (instead of showing them)."""

    shown: list[tuple[str, str, str]] = field(default_factory=list)

    def titles(self) -> list[str]:
        return [title for title, _, _ in self.shown]


@pytest.fixture(autouse=True)
def error_dialogs(monkeypatch: pytest.MonkeyPatch) -> Iterator[ErrorDialogs]:
    """Record error dialogs; a test that does not expect one fails if one appears.

    A test expecting errors asserts on ``error_dialogs.shown`` and clears it.
    """
    record = ErrorDialogs()

    def show_error(parent: Any, title: str, message: str, details: str = "") -> None:
        record.shown.append((title, message, details))

    monkeypatch.setattr(dialogs, "show_error", show_error)
    yield record
    assert not record.shown, f"unexpected error dialogs: {record.shown}"


@pytest.fixture(autouse=True)
def _no_blocking_questions(monkeypatch: pytest.MonkeyPatch) -> None:
    """A modal question nobody answers would hang the suite: fail instead.

    Tests that expect a question replace these with their own answer.
    """

    def unexpected(*args: Any, **_options: Any) -> Any:
        raise AssertionError(f"unexpected modal question: {args[1:3]}")

    monkeypatch.setattr(dialogs, "ask_resume", unexpected)
    monkeypatch.setattr(dialogs, "confirm_partial_load", unexpected)
    monkeypatch.setattr(dialogs, "ask_switch_architecture", unexpected)
    monkeypatch.setattr(dialogs, "get_text", unexpected)
    monkeypatch.setattr(dialogs, "confirm", unexpected)


@pytest.fixture
def window(qtbot: Any) -> Iterator[Any]:
    """A MainWindow with the fast config applied and its data loaded."""
    from workbench.ui.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.apply_config(FAST)
    win.show()
    qtbot.waitUntil(lambda: win.data_panel.is_loaded(), timeout=30_000)
    yield win
    if win.controller.job is not None:
        # A test that failed with a job running: end it without the question
        # closing asks (a real modal dialog, once the fixtures are undone).
        win.controller.shutdown()
    win.close()
