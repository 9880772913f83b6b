"""The Evaluation tab's table of each class's precision, recall and F1.

:class:`ClassScoresTable` shows, for the confusion matrix it is given, one row
per class (its support and scores, from
:func:`~workbench.core.train.class_scores.class_scores`) and, under them, the
macro and the weighted average. The classes scroll and sort (a click on a
header); the two averages stay in view below them, in the same columns. Each
column is as wide as its texts; a wider table shares the room to spare among
them, a narrower one scrolls sideways.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QEvent, QObject, QSize, Qt, Slot
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from workbench.core.train.class_scores import class_scores

HEADERS = (
    ("class", "The true class (click a header to sort the classes)"),
    ("support", "Validation images of the class"),
    (
        "precision",
        "Of the images predicted as the class, the share that are of it "
        "(0 when none is predicted as it)",
    ),
    (
        "recall",
        "Of the class's images, the share predicted right: its accuracy, the bar above",
    ),
    ("F1", "The harmonic mean of precision and recall"),
)
COLUMNS = tuple(text for text, _ in HEADERS)
AVERAGE_ROWS = ("macro avg", "weighted avg")
_AVERAGE_TIPS = (
    "Macro average: every class present counts the same (a rare class as much "
    "as a common one)",
    "Weighted average: each class counts by its images (weighted recall is the "
    "accuracy)",
)
_AVERAGE_BACKGROUND = QColor(236, 239, 244)
_PADDING = 12  # pixels beside a column's widest text
_MAX_NAME_WIDTH = 140  # a longer class name is elided (its tooltip has it whole)
_ARROW = 14  # the header's sort arrow
_ROWS_IN_VIEW = 10  # classes the size hint has room for (more scroll)


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


class _Cell(QTableWidgetItem):
    """A cell that sorts by ``key`` (class index, count or score), not its text."""

    def __init__(self, text: str, key: Any, *, number: bool = True) -> None:
        super().__init__(text)
        self.key = key
        side = Qt.AlignmentFlag.AlignRight if number else Qt.AlignmentFlag.AlignLeft
        self.setTextAlignment(side | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, _Cell):
            return self.key < other.key
        return super().__lt__(other)


def _table(rows: int) -> QTableWidget:
    table = QTableWidget(rows, len(COLUMNS))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setWordWrap(False)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 4)
    return table


class ClassScoresTable(QWidget):
    """Support, precision, recall and F1 of each class, then their averages.

    Attributes
    ----------
    classes : QTableWidget
        A row per class, sortable, scrolling.
    averages : QTableWidget
        The macro and the weighted average, always in view under it.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("classScoresTable")
        self._bold = QFont(self.font())
        self._bold.setBold(True)
        self._widths: list[int] = []  # each column's fitted width, in column order
        self.classes = _table(0)
        self.classes.setObjectName("classScoresRows")
        self.classes.setAlternatingRowColors(True)
        for column, (text, tip) in enumerate(HEADERS):
            item = QTableWidgetItem(text)
            item.setToolTip(tip)
            self.classes.setHorizontalHeaderItem(column, item)
        header = self.classes.horizontalHeader()
        # Every column as wide as its texts, the names capped, plus an equal
        # share of any room to spare: narrow, the scores stay in view (not a
        # stretched name column); wide, no single column takes all the room.
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header.setStretchLastSection(True)
        self.classes.viewport().installEventFilter(self)
        self.classes.setSortingEnabled(True)
        self.classes.sortByColumn(0, Qt.SortOrder.AscendingOrder)  # class order

        self.averages = _table(len(AVERAGE_ROWS))
        self.averages.setObjectName("classScoresAverages")
        self.averages.horizontalHeader().hide()
        self.averages.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.Fixed
        )
        self.averages.setHorizontalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        )
        self.averages.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.averages.setFrameShape(QFrame.Shape.NoFrame)
        rows = self.averages.verticalHeader().defaultSectionSize()
        self.averages.setFixedHeight(len(AVERAGE_ROWS) * rows + 1)

        header.sectionResized.connect(self._on_header_section_resized)
        # Narrower than its columns, the classes scroll sideways: the averages too.
        self.classes.horizontalScrollBar().valueChanged.connect(
            self.averages.horizontalScrollBar().setValue
        )

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.classes, 1)
        layout.addWidget(self.averages)
        self.set_matrix(None, [])

    def set_matrix(self, matrix: np.ndarray | None, names: list[str]) -> None:
        """Show the scores of ``matrix``; None (or no image): empty rows.

        Parameters
        ----------
        matrix : numpy.ndarray or None
            int (C, C) confusion matrix, row = true, column = predicted.
        names : list[str]
            One name per class (C of them).
        """
        table = self.classes
        table.setSortingEnabled(False)  # rows placed as filled, sorted after
        empty = matrix is None or int(np.sum(matrix)) == 0
        table.setRowCount(0 if empty else len(names))
        self.averages.setVisible(not empty)
        if not empty:
            scores = class_scores(matrix)
            hits = np.diag(matrix)
            for i, name in enumerate(names):
                self._class_row(i, name, scores, int(hits[i]))
            self._average_rows(int(scores.support.sum()), scores)
        table.setSortingEnabled(True)  # sorts by the header's column and order
        self._fit_columns()

    def sizeHint(self) -> QSize:
        """Room for ten classes and both averages, every column in view."""
        rows = self.classes.verticalHeader().defaultSectionSize()
        frame = 2 * self.classes.frameWidth()
        scroll_bar = self.classes.verticalScrollBar().sizeHint().width()
        return QSize(
            sum(self._widths) + scroll_bar + frame,
            self.classes.horizontalHeader().sizeHint().height()
            + _ROWS_IN_VIEW * rows
            + frame
            + self.averages.height(),
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Share the room to spare among the columns when the table's view resizes."""
        if watched is self.classes.viewport() and event.type() == QEvent.Type.Resize:
            self._spread_columns()
        return super().eventFilter(watched, event)

    def row_texts(self) -> list[list[str]]:
        """Every row's cells as shown: the classes top to bottom, then the averages.

        No rows at all while there is nothing to score.
        """
        if self.classes.rowCount() == 0:
            return []
        return [
            [table.item(r, c).text() for c in range(len(COLUMNS))]
            for table in (self.classes, self.averages)
            for r in range(table.rowCount())
        ]

    # ------------------------------------------------------------------ filling

    def _class_row(self, i: int, name: str, scores: Any, right: int) -> None:
        support, predicted = int(scores.support[i]), int(scores.predicted[i])
        cells = [
            _Cell(name, i, number=False),
            _Cell(f"{support:,}", support),
            _Cell(_percent(scores.precision[i]), float(scores.precision[i])),
            _Cell(_percent(scores.recall[i]), float(scores.recall[i])),
            _Cell(_percent(scores.f1[i]), float(scores.f1[i])),
        ]
        cells[0].setToolTip(name)  # the column may elide it
        cells[2].setToolTip(
            f"{right:,} of the {predicted:,} images predicted as {name} are {name}"
            if predicted
            else f"no image was predicted as {name} (precision counted as 0)"
        )
        cells[3].setToolTip(
            f"{right:,} of the {support:,} {name} images predicted right"
            if support
            else f"no validation image is {name} (recall counted as 0)"
        )
        for column, cell in enumerate(cells):
            self.classes.setItem(i, column, cell)

    def _average_rows(self, total: int, scores: Any) -> None:
        averages = (scores.macro(), scores.weighted())
        for row, (label, values, tip) in enumerate(
            zip(AVERAGE_ROWS, averages, _AVERAGE_TIPS, strict=True)
        ):
            cells = [
                _Cell(label, row, number=False),
                _Cell(f"{total:,}", total),
                *(_Cell(_percent(v), v) for v in values),
            ]
            for column, cell in enumerate(cells):
                cell.setFont(self._bold)
                cell.setBackground(QBrush(_AVERAGE_BACKGROUND))
                cell.setToolTip(tip)
                self.averages.setItem(row, column, cell)

    def _fit_columns(self) -> None:
        """Size each column to its widest text (the names capped), then spread."""
        plain = self.classes.fontMetrics()
        bold = QFontMetrics(self._bold)
        names = [self.classes.item(r, 0).text() for r in range(self.classes.rowCount())]
        name_width = _PADDING + max(
            plain.horizontalAdvance(COLUMNS[0]) + _ARROW,
            *map(bold.horizontalAdvance, AVERAGE_ROWS),
            *map(plain.horizontalAdvance, names),
        )
        self._widths = [min(name_width, _MAX_NAME_WIDTH)]
        for column in range(1, len(COLUMNS)):
            texts = ["100.0%"] + [
                self.classes.item(r, column).text()
                for r in range(self.classes.rowCount())
            ]
            strong = ["100.0%"] + [
                self.averages.item(r, column).text()
                for r in range(self.averages.rowCount())
                if self.averages.item(r, column) is not None
            ]
            self._widths.append(
                _PADDING
                + max(
                    plain.horizontalAdvance(COLUMNS[column]) + _ARROW,
                    *map(plain.horizontalAdvance, texts),
                    *map(bold.horizontalAdvance, strong),
                )
            )
        self._spread_columns()
        self.updateGeometry()

    def _spread_columns(self) -> None:
        """Fitted widths plus an equal share of the view's room to spare."""
        if not self._widths:
            return
        spare = max(0, self.classes.viewport().width() - sum(self._widths))
        share, rest = divmod(spare, len(self._widths))
        for column, width in enumerate(self._widths):
            wide = width + share + (1 if column < rest else 0)
            self.classes.setColumnWidth(column, wide)
            self.averages.setColumnWidth(column, wide)

    @Slot(int, int, int)
    def _on_header_section_resized(self, column: int, _old: int, new: int) -> None:
        self.averages.setColumnWidth(column, new)
