"""View > Model summary: the summary command's table for the shown model."""

from __future__ import annotations

from PySide6.QtGui import QAction

from workbench.core.models.summary import summarize_model


def test_the_summary_shows_the_shown_models_table_at_the_batch_size(window):
    window.loader_panel.batch_spin.setValue(64)
    action = window.findChild(QAction, "modelSummaryAction")
    assert action.shortcut().toString() == "Ctrl+Shift+M"
    action.trigger()
    dialog = window.summary_dialog
    text = dialog.text.toPlainText()
    expected = summarize_model(window.freeze_panel.model, (1, 28, 28), batch_size=64)
    assert text == "\n".join(expected.lines())
    assert "MACs: " in text
    assert "at batch size 64" in text
    dialog.close()
