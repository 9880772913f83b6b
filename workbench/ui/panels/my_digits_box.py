"""The "My digits" group of the Draw tab: the label, Add, and the drawings kept.

:class:`MyDigitsBox` lists the saved drawings (thumbnails in the reader's
recipe), relabels and deletes them. What "Add" saves is the Draw panel's call
(a drawing, or an opened validation image as it is), so the box only asks.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSize, Qt, Signal, Slot
from PySide6.QtGui import QIcon, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from workbench.core.data.my_digits import MyDigits
from workbench.core.data.registry import DataError
from workbench.ui import dialogs
from workbench.ui.formatting import gray_pixmap, local_time, plural
from workbench.ui.widgets.draw_widgets import WrappingLabel

THUMB_SCALE = 2


class MyDigitsBox(QGroupBox):
    """The label for the next drawing, Add, and my drawings: relabel, delete.

    Signals
    -------
    add_requested()
        "Add to my digits" was pressed.
    drawing_opened(object)
        A drawing was double-clicked: its uint8 stroke image, for the canvas.
    samples_changed()
        Drawings were relabelled or deleted.
    """

    add_requested = Signal()
    drawing_opened = Signal(object)
    samples_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("My digits", parent)
        self.store = MyDigits()
        self._style = "mnist"
        self._can_add = False

        self.label_combo = QComboBox(objectName="sampleLabelCombo")
        for digit in range(10):
            self.label_combo.addItem(str(digit), digit)
        self.label_combo.setToolTip("The digit this drawing shows")
        self.label_combo.currentIndexChanged.connect(self._update_texts)
        self.add_button = QPushButton(objectName="addSampleButton")
        self.add_button.setToolTip(
            "Save this drawing (its strokes and its 28x28 tensor) to my digits. "
            "Keys: 0-9 choose the label, Enter adds"
        )
        self.add_button.clicked.connect(self.add_requested)
        self.sample_list = QListWidget(objectName="sampleList")
        self.sample_list.setViewMode(QListView.ViewMode.IconMode)
        self.sample_list.setIconSize(QSize(28 * THUMB_SCALE, 28 * THUMB_SCALE))
        self.sample_list.setResizeMode(QListView.ResizeMode.Adjust)
        self.sample_list.setMovement(QListView.Movement.Static)
        self.sample_list.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        self.sample_list.setMinimumHeight(90)
        self.sample_list.setToolTip(
            "My digits. Double-click one to put it on the canvas; Delete removes "
            "the selected ones"
        )
        self.sample_list.itemDoubleClicked.connect(self._on_sample_double_clicked)
        self.sample_list.itemSelectionChanged.connect(self._update_texts)
        delete_key = QShortcut(QKeySequence.StandardKey.Delete, self.sample_list)
        delete_key.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete_key.activated.connect(self.delete_selected)
        self.delete_button = QPushButton("Delete", objectName="deleteSampleButton")
        self.delete_button.clicked.connect(self.delete_selected)
        self.relabel_button = QPushButton(objectName="relabelSampleButton")
        self.relabel_button.clicked.connect(self.relabel_selected)
        self.counts_label = WrappingLabel("sampleCountsLabel")

        layout = QVBoxLayout(self)
        add_row = QHBoxLayout()
        add_row.addWidget(QLabel("Label"))
        add_row.addWidget(self.label_combo)
        add_row.addWidget(self.add_button, 1)
        layout.addLayout(add_row)
        layout.addWidget(self.counts_label)
        layout.addWidget(self.sample_list, 1)
        row = QHBoxLayout()
        row.addWidget(self.delete_button)
        row.addWidget(self.relabel_button)
        row.addStretch(1)
        layout.addLayout(row)
        self.refresh_samples()

    def label(self) -> int:
        """The label the next drawing is saved under."""
        return int(self.label_combo.currentData())

    def set_label(self, digit: int) -> None:
        """Choose the label the next "Add to my digits" saves (0-9)."""
        self.label_combo.setCurrentIndex(digit)

    def set_can_add(self, can_add: bool) -> None:
        """Whether there is something to add (the canvas holds ink)."""
        self._can_add = can_add
        self._update_texts()

    def set_style(self, style: str) -> None:
        """Show the thumbnails in ``style``'s recipe (the reader's)."""
        if style != self._style:
            self._style = style
            self.refresh_samples()

    @Slot()
    def _update_texts(self) -> None:
        label = self.label_combo.currentData()
        self.add_button.setText(f"Add to my digits as {label}")
        self.add_button.setEnabled(self._can_add)
        selected = len(self.sample_list.selectedItems())
        self.relabel_button.setText(f"Relabel as {label}")
        self.relabel_button.setEnabled(selected > 0)
        self.delete_button.setEnabled(selected > 0)

    def refresh_samples(self) -> None:
        """Reload the list of my digits from disk.

        Each thumbnail is the drawing as the reader's recipe prepares it (what
        a fine-tune of this model trains on), whatever recipe it was saved with.
        """
        self.sample_list.clear()
        try:
            samples = self.store.samples()
        except DataError as exc:  # the index is damaged: it is left as it is
            self.counts_label.setText(str(exc))
            self._update_texts()
            return
        unreadable = []
        for sample in samples:
            try:
                field = self.store.field_in_style(sample, self._style)
            except DataError as exc:  # one drawing's files: the others still show
                unreadable.append(str(exc))
                continue
            item = QListWidgetItem(
                QIcon(gray_pixmap(field, THUMB_SCALE)), str(sample.label)
            )
            item.setData(Qt.ItemDataRole.UserRole, sample.id)
            item.setToolTip(f"{sample.label}, drawn {local_time(sample.created)}")
            self.sample_list.addItem(item)
        counts = [0] * 10
        for sample in samples:
            counts[sample.label] += 1
        if samples:
            # No break inside "7: 1": a wrapped line never parts a digit and count.
            per_digit = "  ".join(f"{d}:\u00a0{n}" for d, n in enumerate(counts))
            broken = (
                f". {plural(len(unreadable), 'drawing')} cannot be shown "
                f"(kept as they are): {unreadable[0]}"
                if unreadable
                else ""
            )
            self.counts_label.setText(
                f"{plural(len(samples), 'drawing')} ({per_digit}){broken}"
            )
        else:
            self.counts_label.setText(
                "No drawings yet: draw a digit, choose its label, press Add."
            )
        self.counts_label.setToolTip(str(self.store.folder))
        self._update_texts()

    def _selected_ids(self) -> list[str]:
        return [
            str(item.data(Qt.ItemDataRole.UserRole))
            for item in self.sample_list.selectedItems()
        ]

    @Slot()
    def delete_selected(self) -> None:
        """Delete the selected drawings."""
        self._edit_selected(self.store.delete)

    @Slot()
    def relabel_selected(self) -> None:
        """Give the selected drawings the chosen label."""
        label = self.label()
        self._edit_selected(lambda sample_id: self.store.relabel(sample_id, label))

    def _edit_selected(self, edit: Any) -> None:
        ids = self._selected_ids()
        if not ids:
            return
        try:
            for sample_id in ids:
                edit(sample_id)
        except DataError as exc:
            dialogs.show_error(self, "Could not change my digits", str(exc))
        self.refresh_samples()
        self.samples_changed.emit()

    @Slot(QListWidgetItem)
    def _on_sample_double_clicked(self, item: QListWidgetItem) -> None:
        sample_id = str(item.data(Qt.ItemDataRole.UserRole))
        try:
            self.drawing_opened.emit(self.store.stroke_image(sample_id))
        except DataError as exc:
            dialogs.show_error(self, "Could not open the drawing", str(exc))

    def drawing_count(self) -> int:
        """How many drawings "my digits" holds (raises DataError if unreadable)."""
        return len(self.store)
