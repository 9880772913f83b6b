"""A table of flagged images: a thumbnail of each, its file, its labels, a score.

:class:`IssueTable` lists :class:`IssueRow` s in the order given (the ranking
the core made), each numbered by its place in the whole list, so a row keeps
its number when a filter hides others. A cell is text or a :class:`Thumb`, an
image drawn from :class:`ImageShelf` when its row first comes into view; a
``note`` column (last) shows what the caller's notes say of a row (a fix made).
Which rows to list is the caller's choice; the table knows no data issue.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MethodType
from typing import Any

import torch
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSize,
    Qt,
)
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from workbench.core.data.registry import ImageArrays
from workbench.ui.widgets.cell_images import THUMB_SIDE, thumbnail

# Thumbnails kept (about 13 kB each): a few screens' worth either way of a scroll.
MAX_THUMBNAILS = 2000
_ROW_PADDING = 6
_COLUMN_PADDING = 16  # room between a column's text and the next
_ALIGN_NUMBER = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_ALIGN_TEXT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
_ROOT = QModelIndex()
_NOTE_ROOM = "→ a class name"


@dataclass(frozen=True, slots=True)
class Column:
    """A column's title and its header's tooltip; ``kind``: text, number, image, note.

    An image column's cells are :class:`Thumb` s; a number is aligned right; a
    note column (after the cells) shows :meth:`IssueModel.set_notes`' text.
    """

    title: str
    tip: str = ""
    kind: str = "text"


@dataclass(frozen=True, slots=True)
class Thumb:
    """The image of row ``image`` (training images first, then validation)."""

    image: int


Cell = str | Thumb


@dataclass(frozen=True, slots=True)
class IssueRow:
    """One line: its place in the whole list (from 1) and its cells."""

    place: int
    cells: tuple[Cell, ...]
    tip: str = ""  # the line's tooltip (over every cell)
    image: int = -1  # the image the line is about (its first, for a pair)


class ImageShelf:
    """Thumbnails of a dataset's images, training then validation, made once."""

    def __init__(self, arrays: ImageArrays) -> None:
        self._train = arrays.train_images
        self._val = arrays.test_images
        self._made: OrderedDict[int, QPixmap] = OrderedDict()

    def __len__(self) -> int:
        return len(self._train) + len(self._val)

    def image(self, row: int) -> torch.Tensor:
        """Image ``row``: uint8 (H, W) or (C, H, W)."""
        n = len(self._train)
        return self._train[row] if row < n else self._val[row - n]

    def pixmap(self, row: int) -> QPixmap:
        """Image ``row`` as a thumbnail (the last :data:`MAX_THUMBNAILS` kept)."""
        made = self._made.get(row)
        if made is None:
            made = thumbnail(self.image(row).numpy())
            self._made[row] = made
            if len(self._made) > MAX_THUMBNAILS:
                self._made.popitem(last=False)
        else:
            self._made.move_to_end(row)
        return made


def _none() -> None:
    return None


class IssueModel(QAbstractTableModel):
    """``#`` (the place) then ``columns``; rows replaced whole by :meth:`set_rows`."""

    def __init__(
        self, columns: Sequence[Column], shelf: ImageShelf | None = None
    ) -> None:
        super().__init__()
        self.columns = (Column("#", "Place in the whole list", "number"), *columns)
        self.shelf = shelf
        self.rows: list[IssueRow] = []
        self._notes: Callable[[], Callable[[IssueRow], str] | None] = _none

    def set_rows(self, rows: list[IssueRow], shelf: ImageShelf | None = None) -> None:
        """Show ``rows`` in their order (``shelf``: where their images are)."""
        self.beginResetModel()
        self.rows = rows
        if shelf is not None:
            self.shelf = shelf
        self.endResetModel()

    def set_notes(self, notes: Callable[[IssueRow], str] | None) -> None:
        """What the note column says of a row; redrawn now (a fix made).

        A method is held weakly: the model never keeps its owner alive. (A
        dialog in a cycle through its tables' models was destroyed by the
        cycle collector, its widgets in an order Qt crashed on.)
        """
        if isinstance(notes, MethodType):
            self._notes = weakref.WeakMethod(notes)
        else:
            self._notes = lambda: notes
        last = len(self.columns) - 1
        if self.rows and self.columns[last].kind == "note":
            self.dataChanged.emit(
                self.index(0, last), self.index(len(self.rows) - 1, last)
            )

    @property
    def notes(self) -> Callable[[IssueRow], str] | None:
        """What :meth:`set_notes` gave (None: none, or its owner is gone)."""
        return self._notes()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        """Rows shown (none under an item: a flat table)."""
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        """``#`` and the columns."""
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        """Text, thumbnail, alignment and tooltip of a cell."""
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        column = index.column()
        if column == 0:
            cell: Cell = str(row.place)
        elif column > len(row.cells):  # the note column
            notes = self.notes
            cell = notes(row) if notes is not None else ""
        else:
            cell = row.cells[column - 1]
        if role == Qt.ItemDataRole.DisplayRole:
            return cell if isinstance(cell, str) else None
        if role == Qt.ItemDataRole.DecorationRole and isinstance(cell, Thumb):
            return self.shelf.pixmap(cell.image) if self.shelf is not None else None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            number = self.columns[column].kind == "number"
            return _ALIGN_NUMBER if number else _ALIGN_TEXT
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.tip or None
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = 0
    ) -> Any:
        """Column titles, and what each means as their tooltip."""
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section].title
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.columns[section].tip or None
        return None

    def text(self, row: int, column: int) -> str:
        """The text of a cell (a thumbnail's: empty), ``#`` being column 0."""
        return self.data(self.index(row, column)) or ""


class IssueTable(QTableView):
    """Rows of flagged images, a thumbnail high, read-only, rows selectable."""

    def __init__(
        self, columns: Sequence[Column], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.issues = IssueModel(columns)
        self.setModel(self.issues)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.setIconSize(QSize(THUMB_SIDE, THUMB_SIDE))
        self.verticalHeader().setVisible(False)
        rows = self.verticalHeader()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(THUMB_SIDE + _ROW_PADDING)
        header = self.horizontalHeader()
        header.setStretchLastSection(False)  # a score stays beside its row
        header.setHighlightSections(False)
        header.setResizeContentsPrecision(50)  # widths from the first rows
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)

    def set_rows(self, rows: list[IssueRow], shelf: ImageShelf | None = None) -> None:
        """Show ``rows`` and fit the columns to them."""
        self.issues.set_rows(rows, shelf)
        self.resizeColumnsToContents()
        for column, spec in enumerate(self.issues.columns):
            width = self.columnWidth(column) + _COLUMN_PADDING
            if spec.kind == "image":
                width = THUMB_SIDE + 2 * _ROW_PADDING
            elif spec.kind == "note":  # empty until a fix: room for one
                room = self.fontMetrics().horizontalAdvance(_NOTE_ROOM)
                width = max(width, room + _COLUMN_PADDING)
            self.setColumnWidth(column, width)

    def selected_rows(self) -> list[IssueRow]:
        """The rows selected, in the table's order."""
        chosen = sorted(index.row() for index in self.selectionModel().selectedRows())
        return [self.issues.rows[r] for r in chosen]

    def row_texts(self) -> list[tuple[str, ...]]:
        """Each row's texts, ``#`` first (a thumbnail's: empty)."""
        model = self.issues
        return [
            tuple(model.text(r, c) for c in range(model.columnCount()))
            for r in range(model.rowCount())
        ]
