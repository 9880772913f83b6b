"""What every config panel shares."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QWidget

from workbench.core.config import TrainConfig


class ConfigPanel(QGroupBox):
    """A group box that edits some fields of a :class:`TrainConfig`."""

    changed = Signal()

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(title, parent)
        self.form = QFormLayout(self)
        self.form.setFieldGrowthPolicy(
            QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow
        )
        self._applying = False

    def apply_config(self, cfg: TrainConfig) -> None:
        """Show ``cfg``'s values; ``changed`` is not emitted."""
        self._applying = True
        try:
            self._apply(cfg)
        finally:
            self._applying = False

    def _apply(self, cfg: TrainConfig) -> None:
        raise NotImplementedError

    def config_values(self) -> dict[str, Any]:
        """This panel's fields of the config."""
        raise NotImplementedError

    def _emit_changed(self, *_: object) -> None:
        if not self._applying:
            self.changed.emit()


def select_data(combo: QComboBox, value: object) -> None:
    """Select the item whose data is ``value``, without emitting signals."""
    index = combo.findData(value)
    if index >= 0:
        with QSignalBlocker(combo):
            combo.setCurrentIndex(index)


def set_item_enabled(
    combo: QComboBox, index: int, enabled: bool, tooltip: str = ""
) -> None:
    """Enable or disable one entry of a combo box, with a tooltip saying why."""
    item = combo.model().item(index)  # QStandardItemModel, the default
    item.setEnabled(enabled)
    item.setToolTip(tooltip)
