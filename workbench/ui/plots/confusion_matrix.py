"""The confusion-matrix heat map of the Evaluation tab.

:class:`ConfusionMatrix` paints a matrix (rows true, columns predicted) with a
count in every cell, coloured green on the diagonal and red off it, names the
classes on both axes (standing up when they are wide), and picks a cell by mouse
or keyboard. It keeps no epochs: the panel hands it the matrix to show.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from workbench.core.data.registry import class_names
from workbench.ui.formatting import plural

# Colour ramps (light -> dark): greens for the diagonal, oranges/reds for errors,
# so right and wrong read apart at a glance even for colour-weak users (the two
# ramps also differ in lightness at equal share).
_GREENS = ((237, 248, 233), (116, 196, 118), (0, 90, 50))
_REDS = ((255, 240, 225), (253, 141, 60), (165, 15, 21))
_ZERO = QColor(250, 250, 250)
_ABSENT = QColor(236, 236, 236)
_SELECTED = QColor(25, 95, 210)


def _ramp(stops: tuple[tuple[int, int, int], ...], t: float) -> QColor:
    """Colour at ``t`` in [0, 1] along a piecewise-linear ramp."""
    t = min(max(t, 0.0), 1.0) * (len(stops) - 1)
    k = min(int(t), len(stops) - 2)
    f = t - k
    a, b = stops[k], stops[k + 1]
    return QColor(*(round(a[c] + (b[c] - a[c]) * f) for c in range(3)))


def cell_color(count: int, row_total: int, diagonal: bool) -> QColor:
    """Fill of a matrix cell: colour family by right/wrong, intensity by row share."""
    if row_total <= 0:
        return _ABSENT
    if count <= 0:
        return _ZERO
    share = count / row_total
    if diagonal:
        return _ramp(_GREENS, 0.15 + 0.85 * share)
    # Errors are usually a few percent of a row: the square root spreads the small
    # shares apart, a row share of 30% is already the darkest, and a small floor
    # keeps a single mistake visible without making it as loud as a pattern.
    return _ramp(_REDS, 0.08 + 0.92 * min(1.0, (share / 0.3) ** 0.5))


def _text_color(fill: QColor) -> QColor:
    luma = 0.299 * fill.red() + 0.587 * fill.green() + 0.114 * fill.blue()
    return QColor(255, 255, 255) if luma < 150 else QColor(30, 30, 30)


class _Grid(NamedTuple):
    """Geometry of the matrix widget: grid origin and cell side, and the margins."""

    x0: int
    y0: int
    cell: int
    n: int
    names_w: int
    header_h: int
    rotated: bool


class ConfusionMatrix(QWidget):
    """Heat map of a confusion matrix; rows are true classes, columns predicted.

    Every cell shows its count. A click (or Enter on the keyboard cursor, moved
    with the arrow keys) emits :attr:`cell_clicked` with ``(true, predicted)``.
    """

    cell_clicked = Signal(int, int)

    EMPTY_TEXT = "The confusion matrix appears after the first epoch."

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("confusionMatrix")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(220, 220)
        self._matrix: np.ndarray | None = None
        self._names: list[str] = []
        self._selected: tuple[int, int] | None = None
        self._cursor = (0, 0)

    def sizeHint(self) -> QSize:
        """Square-ish: the cells read best when they are square."""
        return QSize(440, 440)

    def set_matrix(self, matrix: np.ndarray | None, names: Sequence[str]) -> None:
        """Show ``matrix`` (int, (C, C)) with ``names`` on both axes; None: empty."""
        self._matrix = matrix
        n = 0 if matrix is None else matrix.shape[0]
        self._names = class_names(names, n)
        if n and max(self._cursor) >= n:
            self._cursor = (0, 0)
        self.update()

    def set_selected(self, cell: tuple[int, int] | None) -> None:
        """Outline ``cell`` (true, predicted) as the selected one; None: no outline."""
        self._selected = cell
        if cell is not None:
            self._cursor = cell
        self.update()

    def selected(self) -> tuple[int, int] | None:
        """Return the outlined cell, if any."""
        return self._selected

    def cursor_cell(self) -> tuple[int, int]:
        """Return the keyboard cursor's cell."""
        return self._cursor

    # Geometry -------------------------------------------------------------

    def _grid(self) -> _Grid:
        """Where the grid, the names and the titles go at the current size."""
        n = 0 if self._matrix is None else self._matrix.shape[0]
        fm = self.fontMetrics()
        line = fm.height()
        names_w = max((fm.horizontalAdvance(name) for name in self._names), default=0)
        left = names_w + 8 + line + 6  # row names, then the rotated "true"

        def fit(header_h: int) -> tuple[int, int, int, int]:
            avail_w = self.width() - left - 4
            avail_h = self.height() - header_h - 4
            # Whole pixels per cell keep the grid lines crisp and the cells equal.
            cell = max(4, min(avail_w, avail_h) // max(n, 1))
            x0 = left + max(0, (avail_w - cell * n) // 2)
            y0 = header_h + max(0, (avail_h - cell * n) // 2)
            return x0, y0, cell, header_h

        x0, y0, cell, header_h = fit(2 * line + 8)
        # Column names wider than a cell stand up (like rotated axis labels in
        # plotting libraries) rather than being cut to a letter or two.
        rotated = names_w > cell - 4
        if rotated:
            x0, y0, cell, header_h = fit(line + names_w + 10)
        return _Grid(x0, y0, cell, n, names_w + 8, header_h, rotated)

    def cell_rect(self, true: int, predicted: int) -> QRect:
        """Rectangle of cell (``true``, ``predicted``); empty if nothing is shown."""
        x0, y0, cell, n = self._grid()[:4]
        if not (0 <= true < n and 0 <= predicted < n):
            return QRect()
        return QRect(x0 + predicted * cell, y0 + true * cell, cell, cell)

    def cell_at(self, pos: QPoint) -> tuple[int, int] | None:
        """Return the cell (true, predicted) under ``pos``, or None."""
        x0, y0, cell, n = self._grid()[:4]
        if n == 0 or pos.x() < x0 or pos.y() < y0:
            return None
        predicted, true = (pos.x() - x0) // cell, (pos.y() - y0) // cell
        if true >= n or predicted >= n:
            return None
        return true, predicted

    def cell_tooltip(self, true: int, predicted: int) -> str:
        """E.g. ``"true 3, predicted 5: 12 images (1.2% of the 3s)"``."""
        if self._matrix is None:
            return ""
        count = int(self._matrix[true, predicted])
        total = int(self._matrix[true].sum())
        share = f"{100 * count / total:.1f}%" if total else "no images"
        name = self._names[true]
        return (
            f"true {name}, predicted {self._names[predicted]}: "
            f"{plural(count, 'image')} ({share} of the {name}s)"
        )

    # Events ---------------------------------------------------------------

    def event(self, event: QEvent) -> bool:
        """Tooltips name the cell under the mouse."""
        if event.type() == QEvent.Type.ToolTip:
            assert isinstance(event, QHelpEvent)
            cell = self.cell_at(event.pos())
            if cell is None:
                QToolTip.hideText()
                event.ignore()
            else:
                QToolTip.showText(event.globalPos(), self.cell_tooltip(*cell), self)
            return True
        return super().event(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        """Select the cell under a left click."""
        cell = self.cell_at(event.position().toPoint())
        if event.button() != Qt.MouseButton.LeftButton or cell is None:
            super().mousePressEvent(event)
            return
        self._cursor = cell
        self.cell_clicked.emit(*cell)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Arrow keys move the cursor; Enter, Return or Space select its cell."""
        n = 0 if self._matrix is None else self._matrix.shape[0]
        moves = {
            Qt.Key.Key_Left: (0, -1),
            Qt.Key.Key_Right: (0, 1),
            Qt.Key.Key_Up: (-1, 0),
            Qt.Key.Key_Down: (1, 0),
        }
        key = event.key()
        if n and key in moves:
            dt, dp = moves[key]
            t, p = self._cursor
            self._cursor = (min(max(t + dt, 0), n - 1), min(max(p + dp, 0), n - 1))
            self.update()
        elif n and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.cell_clicked.emit(*self._cursor)
        else:
            super().keyPressEvent(event)

    # Painting -------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        """Draw the cells, their counts, the axis names and the selection."""
        painter = QPainter(self)
        try:
            if self._matrix is None or self._matrix.shape[0] == 0:
                painter.setPen(self.palette().placeholderText().color())
                painter.drawText(
                    self.rect(),
                    Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                    self.EMPTY_TEXT,
                )
                return
            self._paint_cells(painter)
            self._paint_axes(painter)
            self._paint_outlines(painter)
        finally:
            painter.end()

    def _count_font(self, cell: int) -> QFont:
        """Return the largest font (up to 14 px) whose widest count fits a cell."""
        assert self._matrix is not None
        widest = str(int(self._matrix.max(initial=0)))
        font = QFont(self.font())
        size = min(14, max(6, int(cell * 0.34)))
        while size > 6:
            font.setPixelSize(size)
            if QFontMetrics(font).horizontalAdvance(widest) <= cell - 4:
                break
            size -= 1
        font.setPixelSize(size)
        return font

    def _paint_cells(self, painter: QPainter) -> None:
        assert self._matrix is not None
        x0, y0, cell, n = self._grid()[:4]
        totals = self._matrix.sum(axis=1)
        painter.setFont(self._count_font(cell))
        for t in range(n):
            for p in range(n):
                count = int(self._matrix[t, p])
                fill = cell_color(count, int(totals[t]), t == p)
                # 1 px gap: the background shows through as the grid lines.
                rect = QRect(x0 + p * cell, y0 + t * cell, cell - 1, cell - 1)
                painter.fillRect(rect, fill)
                # Zeros in grey: present (every cell has a count) but quiet.
                pen = QColor(175, 175, 175) if count == 0 else _text_color(fill)
                painter.setPen(pen)
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, str(count))

    def _paint_axes(self, painter: QPainter) -> None:
        grid = self._grid()
        x0, y0, cell, n = grid[:4]
        fm = self.fontMetrics()
        line = fm.height()
        painter.setFont(self.font())
        painter.setPen(self.palette().windowText().color())
        right_v = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        left_v = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        for i, name in enumerate(self._names):
            row = QRect(x0 - grid.names_w, y0 + i * cell, grid.names_w - 6, cell)
            painter.drawText(row, right_v, name)
            if grid.rotated:
                painter.save()
                # Reads bottom-to-top, ending just above its column.
                painter.translate(x0 + i * cell + cell / 2, y0 - 4)
                painter.rotate(-90)
                painter.drawText(QRect(0, -line // 2, grid.names_w, line), left_v, name)
                painter.restore()
            else:
                col = QRect(x0 + i * cell, y0 - line - 4, cell, line)
                painter.drawText(col, Qt.AlignmentFlag.AlignCenter, name)
        bold = QFont(self.font())
        bold.setBold(True)
        painter.setFont(bold)
        header = QRect(x0, y0 - grid.header_h + 2, cell * n, line)
        painter.drawText(header, Qt.AlignmentFlag.AlignCenter, "predicted")
        painter.save()
        # Rotated so "true" reads bottom-to-top along the rows.
        painter.translate(x0 - grid.names_w - 6, y0 + cell * n / 2)
        painter.rotate(-90)
        painter.drawText(
            QRect(-cell * n // 2, -line, cell * n, line),
            Qt.AlignmentFlag.AlignCenter,
            "true",
        )
        painter.restore()

    def _paint_outlines(self, painter: QPainter) -> None:
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if self.hasFocus():
            painter.setPen(QPen(QColor(20, 20, 20), 1, Qt.PenStyle.DashLine))
            painter.drawRect(self.cell_rect(*self._cursor).adjusted(2, 2, -3, -3))
        if self._selected is not None:
            painter.setPen(QPen(_SELECTED, 3))
            painter.drawRect(self.cell_rect(*self._selected).adjusted(1, 1, -2, -2))
