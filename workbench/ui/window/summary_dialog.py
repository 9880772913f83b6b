"""View ▸ Model summary: each layer's output shape, parameters and MACs.

The same table as ``ptcore-workbench summary``, for the model the freeze tree
shows, at the chosen input shape and batch size.
"""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from workbench.core.config import ConfigError
from workbench.core.models.summary import summarize_model
from workbench.ui.window.parts import SummaryWindow


class SummaryDialog(QDialog):
    """A read-only, copyable table in a fixed-width font."""

    def __init__(self, title: str, lines: list[str], parent: QWidget) -> None:
        super().__init__(parent, objectName="modelSummaryDialog")
        self.setWindowTitle(title)
        self.text = QPlainTextEdit(objectName="modelSummaryText")
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setPlainText("\n".join(lines))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.resize(720, 520)


def show_model_summary(window: SummaryWindow) -> SummaryDialog | None:
    """Summarise the shown model at the panels' input shape and batch size."""
    model = window.freeze_panel.model
    if model is None:
        return None
    key = window.chosen_model_key()
    batch = window.loader_panel.config_values()["batch_size"]
    try:
        lines = summarize_model(model, key[2], batch_size=batch).lines()
    except (ConfigError, RuntimeError, ValueError) as exc:
        lines = [f"This model cannot be summarised at {key[2]}: {exc}"]
    dialog = SummaryDialog(f"Model summary: {key[0]}", lines, window)
    dialog.show()
    window.summary_dialog = dialog  # kept alive while open
    return dialog
