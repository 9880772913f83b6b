"""The Code tab: the current experiment as one plain PyTorch script.

:func:`~workbench.core.script.writer.write_script` writes the text; this view
shows it highlighted, copies it and saves it. It regenerates lazily: a
settings change only marks the script stale, and the text is written again
once the tab is shown, after changes pause for :data:`DEBOUNCE_MS` (a spin
box being typed into is not rewritten at every keystroke).

Writing runs in a background task: for a config with frozen layers the writer
builds the architecture (on the meta device) to match the patterns, up to
about 75 ms for a resnet50 on a 2-core machine; a model file or a larger
network may take longer.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer, Slot
from PySide6.QtGui import QFontDatabase, QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from workbench.core.atomic_files import write_atomically
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.script.writer import ScriptError, write_script
from workbench.ui import dialogs
from workbench.ui.tasks import TaskThread, describe_error, start_task
from workbench.ui.widgets.python_highlighter import PythonHighlighter, is_dark

log = logging.getLogger(__name__)

DEBOUNCE_MS = 150
SCRIPT_FILTER = "Python scripts (*.py)"
CAPTION = (
    "Plain PyTorch for the settings on the left: <code>python run.py</code> "
    "repeats this run step for step on the CPU."
)
# The window trains on several processes (DistributedDataParallel); the script
# trains in one, so its steps are not the window's.
SEVERAL_CAPTION = (
    "Plain PyTorch for the settings on the left, in one process: "
    "<code>python run.py</code> trains them, but not step for step like the "
    "window, which is set to {processes} processes (Device panel)."
)


class CodeView(QWidget):
    """A read-only, highlighted script of ``config()`` with Copy and Save….

    ``config`` returns the settings the window shows (it may raise
    :class:`ConfigError`); ``source`` names them in the script's header.
    """

    def __init__(
        self,
        config: Callable[[], TrainConfig],
        *,
        source: str = "the workbench window",
        processes: Callable[[], int] = lambda: 1,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("codeView")
        self._config = config
        self._processes = processes
        self._source = source
        self._stale = True
        self._written: TrainConfig | None = None  # the config of the text shown
        self._task: TaskThread | None = None
        self._again = False  # the config changed while a script was written

        self.caption = QLabel(CAPTION, objectName="codeCaption")
        self.caption.setTextFormat(Qt.TextFormat.RichText)
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
        )
        self.copy_button = QPushButton("Copy", objectName="codeCopyButton")
        self.copy_button.setToolTip("Copy the whole script to the clipboard")
        self.copy_button.clicked.connect(self.copy)
        self.save_button = QPushButton("Save…", objectName="codeSaveButton")
        self.save_button.setToolTip("Save the script as a .py file")
        self.save_button.clicked.connect(self.save_dialog)
        # What the last Copy or Save did: feedback next to the buttons.
        self.note = QLabel(objectName="codeNote")
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.editor = QPlainTextEdit(objectName="codeEditor")
        self.editor.setReadOnly(True)
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.editor.setFont(font)
        self.highlighter = PythonHighlighter(
            self.editor.document(), dark=is_dark(self.editor.palette())
        )

        buttons = QHBoxLayout()
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.save_button)
        buttons.addWidget(self.note, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.caption)
        layout.addLayout(buttons)
        layout.addWidget(self.editor, 1)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.refresh)
        self._show_refusal("")

    # ------------------------------------------------------------------ state

    def show_caption(self) -> None:
        """Whether the script repeats the window's run step for step."""
        processes = self._processes()
        self.caption.setText(
            CAPTION if processes <= 1 else SEVERAL_CAPTION.format(processes=processes)
        )

    def text(self) -> str:
        """The script shown ("" while the settings cannot be written)."""
        return self.editor.toPlainText()

    def is_busy(self) -> bool:
        """A script is being written, or a change waits to be written."""
        return self._task is not None or self._timer.isActive()

    @Slot()
    def mark_stale(self) -> None:
        """The settings changed: write the script again once they settle."""
        self._stale = True
        self.show_caption()
        if self.isVisible():
            self._timer.start()

    def showEvent(self, event: QShowEvent) -> None:
        """Catch up with changes made while the tab was hidden."""
        super().showEvent(event)
        if self._stale:
            self._timer.start(0)

    def changeEvent(self, event: QEvent) -> None:
        """Follow a light or dark palette."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            # Our palette: the editor's child event may not have come yet.
            self.highlighter.set_dark(is_dark(self.palette()))

    @Slot()
    def refresh(self) -> None:
        """Write the script for the current settings, if they changed (visible only)."""
        self._timer.setInterval(DEBOUNCE_MS)  # a showEvent set it to 0
        if not self.isVisible():
            return
        if self._task is not None:
            self._again = True  # written when the task in flight ends
            return
        self._stale = False
        try:
            cfg = self._config()
        except ConfigError as exc:
            self._written = None
            self._show_refusal(str(exc))
            return
        if cfg == self._written:
            return
        self._written = cfg
        source = self._source

        def work(_progress: Any, _cancel: Any) -> str:
            return write_script(cfg, source=source)

        self._task = start_task(
            self,
            "write-script",
            work,
            succeeded=self._on_task_succeeded,
            failed=self._on_task_failed,
            finished=self._on_task_finished,
        )

    @Slot(object)
    def _on_task_succeeded(self, text: str) -> None:
        self.caption.setText(CAPTION)
        if text != self.editor.toPlainText():
            self.note.clear()  # "Saved" was said of the text before
            # Keep the reader's place: a new setting changes a line or two.
            scroll = self.editor.verticalScrollBar()
            position = scroll.value()
            self.editor.setPlainText(text)
            scroll.setValue(position)
        for widget in (self.editor, self.copy_button, self.save_button):
            widget.setEnabled(True)

    @Slot(object)
    def _on_task_failed(self, error: Exception) -> None:
        message, details = describe_error(error)
        if not isinstance(error, ConfigError):
            log.warning("the script writer failed:\n%s", details)
        self._written = None  # try again at the next change
        # The why alone: our caption has its own lead-in.
        self._show_refusal(error.reason if isinstance(error, ScriptError) else message)

    @Slot()
    def _on_task_finished(self) -> None:
        task = self.sender()
        if task is self._task:
            self._task = None
        if isinstance(task, TaskThread):
            task.deleteLater()
        if self._again:
            self._again = False
            self.refresh()

    def _show_refusal(self, reason: str) -> None:
        """No script for these settings: say why; nothing to copy or save."""
        self.editor.clear()
        for widget in (self.editor, self.copy_button, self.save_button):
            widget.setEnabled(False)
        if reason:
            reason = html.escape(_sentence(reason))
            self.caption.setText(f"<b>No script for these settings:</b> {reason}")
            self.editor.setPlaceholderText("No script: the reason is above.")
        else:
            self.caption.setText("Writing the script…")
            self.editor.setPlaceholderText("")
        self.note.clear()

    def shutdown(self, timeout_ms: int = 5000) -> None:
        """Wait for a script being written (the window closes)."""
        self._timer.stop()
        if self._task is not None:
            self._task.wait(timeout_ms)

    # ------------------------------------------------------------------ actions

    @Slot()
    def copy(self) -> None:
        """Put the whole script on the clipboard."""
        text = self.text()
        if not text:
            return
        QGuiApplication.clipboard().setText(text)
        self.note.setText(f"Copied {len(text.splitlines()):,} lines")

    @Slot()
    def save_dialog(self) -> None:
        """Ask for a file name (run.py by default) and save the script there."""
        if not self.text():
            return
        path = dialogs.get_save_path(
            self, "Save the script", SCRIPT_FILTER, name="run.py"
        )
        if path is not None:
            self.save(path)

    def save(self, path: str | Path) -> bool:
        """Write the script to ``path`` whole or not at all; False on an error."""
        data = self.text().encode("utf-8")
        try:
            written = write_atomically(path, lambda handle: handle.write(data))
        except OSError as exc:
            reason = exc.strerror or str(exc)
            dialogs.show_error(
                self, "Could not save the script", f"Could not write {path}: {reason}."
            )
            return False
        self.note.setText(f"Saved {written}")
        return True


def _sentence(text: str) -> str:
    """``text`` ending in a full stop."""
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."
