"""A combo box of models grouped by family, with a filter on their names.

Family titles are bold rows that cannot be chosen; the filter hides the rows
whose name does not contain the text, and the titles left without a model.
Keyboard and wheel skip the titles (they are disabled items).
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QComboBox, QWidget

# (value, text, tooltip) of one model in a group.
Entry = tuple[str, str, str]
HEADER_COLOR = QColor("#4a4a4a")


class ModelCombo(QComboBox):
    """Models under bold family titles; ``currentData()`` is the chosen model."""

    def __init__(self, parent: QWidget | None = None, **kwargs: object) -> None:
        super().__init__(parent, **kwargs)
        self.setMaxVisibleItems(20)
        narrow(self)
        self._filter = ""

    def set_groups(self, groups: list[tuple[str, list[Entry]]]) -> None:
        """Fill the list; keeps the chosen model when it is still listed."""
        current = self.currentData()
        with QSignalBlocker(self):
            self.clear()
            model = self.model()
            assert isinstance(model, QStandardItemModel)
            for title, entries in groups:
                if not entries:
                    continue
                header = QStandardItem(title)
                header.setFlags(Qt.ItemFlag.NoItemFlags)
                font = header.font()
                font.setBold(True)
                header.setFont(font)
                header.setForeground(QBrush(HEADER_COLOR))
                model.appendRow(header)
                for value, text, tooltip in entries:
                    item = QStandardItem(text)
                    item.setData(value, Qt.ItemDataRole.UserRole)
                    item.setToolTip(tooltip)
                    model.appendRow(item)
            # The popup as wide as the longest name, however narrow the box.
            view = self.view()
            view.setMinimumWidth(view.sizeHintForColumn(0) + 2 * view.frameWidth() + 20)
            index = self.findData(current) if current is not None else -1
            self.setCurrentIndex(index if index >= 0 else self._first_model_row())
        self.set_filter(self._filter)

    def _first_model_row(self) -> int:
        for row in range(self.count()):
            if self.itemData(row) is not None:
                return row
        return -1

    def is_header(self, row: int) -> bool:
        return self.itemData(row) is None

    def set_filter(self, text: str) -> list[str]:
        """Show only models whose name contains ``text``; returns them."""
        self._filter = text.strip().lower()
        view = self.view()
        shown: list[str] = []
        header_row, header_used = -1, False
        for row in range(self.count()):
            if self.is_header(row):
                if header_row >= 0:
                    view.setRowHidden(header_row, not header_used)
                header_row, header_used = row, False
                continue
            value = str(self.itemData(row))
            match = self._filter in value.lower() or self._filter in (
                self.itemText(row).lower()
            )
            view.setRowHidden(row, not match)
            if match:
                shown.append(value)
                header_used = True
        if header_row >= 0:
            view.setRowHidden(header_row, not header_used)
        return shown

    def shown_models(self) -> list[str]:
        """The models the filter lets through, in list order."""
        view = self.view()
        return [
            str(self.itemData(row))
            for row in range(self.count())
            if not self.is_header(row) and not view.isRowHidden(row)
        ]

    def group_of(self, value: str) -> str | None:
        """The title of the group ``value`` is listed under."""
        title = None
        for row in range(self.count()):
            if self.is_header(row):
                title = self.itemText(row)
            elif self.itemData(row) == value:
                return title
        return None


def narrow(combo: QComboBox, characters: int = 7) -> None:
    """Size ``combo`` for ``characters``, not its longest entry (the popup is wider)."""
    combo.setSizeAdjustPolicy(
        QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
    )
    combo.setMinimumContentsLength(characters)
