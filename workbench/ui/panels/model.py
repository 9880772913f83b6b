"""Model: the architecture, and how many of its parameters train."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QComboBox, QLabel, QWidget

from workbench.core.config import MODELS, TrainConfig
from workbench.core.models import MODEL_TITLES
from workbench.ui.panels.base import ConfigPanel, select_data

LAZY_NOTE = (
    "Lazy model: its layers learn their input sizes from data, so one dry-run "
    "batch (a blank 1\u00d728\u00d728 image, in eval mode) materialises it before its "
    "parameters are listed, frozen or given to the optimizer."
)


class ModelPanel(ConfigPanel):
    """Architecture choice with its description and parameter counts."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Model", parent)
        self.model_combo = QComboBox(objectName="modelCombo")
        for name in MODELS:
            self.model_combo.addItem(name, name)
            self.model_combo.setItemData(
                self.model_combo.count() - 1,
                MODEL_TITLES[name],
                Qt.ItemDataRole.ToolTipRole,
            )
        self.model_combo.currentIndexChanged.connect(self._on_model_combo_changed)
        self.form.addRow("Architecture", self.model_combo)
        self.title_label = QLabel(objectName="modelTitleLabel")
        self.title_label.setWordWrap(True)
        self.form.addRow(self.title_label)
        self.lazy_label = QLabel(LAZY_NOTE, objectName="lazyNoteLabel")
        self.lazy_label.setWordWrap(True)
        self.lazy_label.setStyleSheet("color: #8a5a00;")
        self.form.addRow(self.lazy_label)
        self.count_label = QLabel(objectName="parameterCountLabel")
        self.form.addRow("Parameters", self.count_label)
        self.trainable_label = QLabel(objectName="trainableCountLabel")
        self.form.addRow("Trainable", self.trainable_label)
        self._show_title()

    def _apply(self, cfg: TrainConfig) -> None:
        select_data(self.model_combo, cfg.model)
        self._show_title()

    def config_values(self) -> dict[str, Any]:
        """``model``."""
        return {"model": self.model()}

    def model(self) -> str:
        """The selected architecture."""
        return str(self.model_combo.currentData())

    def show_counts(self, total: int, trainable: int) -> None:
        """Show the parameter counts of the model the freeze tree shows."""
        self.count_label.setText(f"{total:,}")
        # One decimal: 99.5% trainable must not read as "100%".
        share = f" ({100 * trainable / total:.1f}%)" if total else ""
        self.trainable_label.setText(f"{trainable:,}{share}")

    def _show_title(self) -> None:
        self.title_label.setText(MODEL_TITLES[self.model()])
        self.lazy_label.setVisible(self.model() == "lazy-cnn")

    @Slot(int)
    def _on_model_combo_changed(self, _index: int) -> None:
        self._show_title()
        self._emit_changed()
