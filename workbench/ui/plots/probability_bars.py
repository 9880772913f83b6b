"""The probability bars of the "Draw a digit" tab.

:class:`ProbabilityBars` is a bar chart of one predicted probability per class,
the most likely class in another colour with its value on top. It is painted
with a plain ``QPainter``: the axis, grid and class names are drawn once into a
pixmap (again on a resize or new classes), so a new reading repaints ten
rectangles and a number. A pyqtgraph plot would take a third of the time from
pen up to answer (``bench/canvas_bench.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QEvent, QPointF, QRect, QRectF, QSize, Qt, Slot
from PySide6.QtGui import (
    QColor,
    QFontMetrics,
    QHelpEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPixmap,
    QResizeEvent,
)
from PySide6.QtWidgets import QToolTip, QWidget

Y_TOP = 1.08  # the value axis runs to a little above 1, room for the top label
Y_TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)
BAR_WIDTH = 0.7  # of each class's slot
Y_TITLE = "probability"


class ProbabilityBars(QWidget):
    """A bar per class showing its predicted probability; the top bar stands out."""

    BAR_COLOR = QColor(120, 144, 176)
    TOP_COLOR = QColor(230, 120, 20)
    GRID_COLOR = QColor(0, 0, 0, 64)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("probabilityPlot")
        self.setAttribute(Qt.WA_OpaquePaintEvent)
        self._names: list[str] = []
        self._probs = np.zeros(0)
        self._background: QPixmap | None = None  # axis, grid, names: see _plot_rect
        self.set_class_names([str(i) for i in range(10)])

    def sizeHint(self) -> QSize:
        """Wide enough for ten labelled bars."""
        return QSize(320, 200)

    def class_names(self) -> list[str]:
        """Return the class names shown under the bars."""
        return list(self._names)

    def set_class_names(self, names: Sequence[str]) -> None:
        """Set one bar per class, labelled with its name; all bars go to zero.

        Parameters
        ----------
        names : Sequence[str]
            Class names in class-index order.
        """
        self._names = [str(n) for n in names]
        self._probs = np.zeros(len(self._names))
        self._background = None
        self.update()

    @Slot(object)
    def set_probabilities(self, probs: Sequence[float]) -> None:
        """Show one probability per class and highlight the largest.

        Parameters
        ----------
        probs : Sequence[float]
            As many values in [0, 1] as there are class names.

        Raises
        ------
        ValueError
            When the count differs from the number of classes.
        """
        values = np.asarray(probs, dtype=float).reshape(-1)
        if values.shape != self._probs.shape:
            raise ValueError(
                f"expected {len(self._probs)} probabilities, got {values.size}"
            )
        self._probs = np.clip(np.nan_to_num(values, nan=0.0), 0.0, 1.0)
        self.update()

    @Slot()
    def clear_probabilities(self) -> None:
        """Set all bars to zero."""
        self.set_probabilities(np.zeros(len(self._names)))

    def probabilities(self) -> np.ndarray:
        """Return the probabilities shown, a copy.

        Returns
        -------
        numpy.ndarray
            float64, one value per class.
        """
        return self._probs.copy()

    def top_class(self) -> int | None:
        """Return the index of the highlighted bar, or None when all are zero."""
        if not self._probs.size:
            return None
        top = int(np.argmax(self._probs))
        return top if self._probs[top] > 0 else None

    def bar_rect(self, index: int, value: float = 1.0) -> QRectF:
        """Where bar ``index`` is painted at height ``value``, in widget pixels.

        Parameters
        ----------
        index : int
            A class index.
        value : float
            A probability; 1 gives the bar at full height.
        """
        return self._bar_rect(self._plot_rect(), index, value)

    def _bar_rect(self, plot: QRectF, index: int, value: float) -> QRectF:
        slot = plot.width() / max(len(self._names), 1)
        height = plot.height() * min(max(value, 0.0), 1.0) / Y_TOP
        left = plot.left() + slot * (index + (1 - BAR_WIDTH) / 2)
        return QRectF(left, plot.bottom() - height, slot * BAR_WIDTH, height)

    # --- painting ---------------------------------------------------------------

    def _plot_rect(self) -> QRectF:
        """The data area: right of the axis, above the class names."""
        metrics = QFontMetrics(self.font())
        line = metrics.height()
        left = line + 4 + metrics.horizontalAdvance("0.75") + 8
        return QRectF(
            left, line / 2 + 2, self.width() - left - 6, self.height() - 2.5 * line - 6
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A new size needs a new background."""
        self._background = None
        super().resizeEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        """A new font or palette needs a new background."""
        if event.type() in (QEvent.FontChange, QEvent.PaletteChange):
            self._background = None
        super().changeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        """The cached background, then the bars and the top value."""
        ratio = self.devicePixelRatioF()
        if self._background is None or self._background.devicePixelRatio() != ratio:
            self._background = self._paint_background(ratio)
        painter = QPainter(self)
        painter.drawPixmap(0, 0, self._background)
        plot = self._plot_rect()  # once: the bars share it
        top = self.top_class()
        for index, value in enumerate(self._probs):
            if value > 0:
                color = self.TOP_COLOR if index == top else self.BAR_COLOR
                painter.fillRect(self._bar_rect(plot, index, float(value)), color)
        if top is not None:
            value = float(self._probs[top])
            bar = self._bar_rect(plot, top, value)
            line = painter.fontMetrics().height()
            label = QRectF(bar.center().x() - 40, bar.top() - line - 1, 80, line)
            painter.setPen(self.TOP_COLOR)
            painter.drawText(label, Qt.AlignHCenter | Qt.AlignBottom, f"{value:.0%}")
        painter.end()

    def _paint_background(self, ratio: float) -> QPixmap:
        pixmap = QPixmap(self.size() * ratio)
        pixmap.setDevicePixelRatio(ratio)
        pixmap.fill(Qt.white)
        painter = QPainter(pixmap)
        plot = self._plot_rect()
        metrics = painter.fontMetrics()
        line = metrics.height()
        axis_pen = QPen(Qt.black, 1)
        for tick in Y_TICKS:
            y = plot.bottom() - plot.height() * tick / Y_TOP
            painter.setPen(QPen(self.GRID_COLOR, 1))
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            painter.setPen(axis_pen)
            painter.drawLine(QPointF(plot.left() - 4, y), QPointF(plot.left(), y))
            text = QRectF(0, y - line / 2, plot.left() - 7, line)
            painter.drawText(text, Qt.AlignRight | Qt.AlignVCenter, f"{tick:g}")
        painter.drawLine(plot.bottomLeft(), plot.topLeft())
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        slot = plot.width() / max(len(self._names), 1)
        for index, name in enumerate(self._names):
            cell = QRectF(plot.left() + slot * index, plot.bottom() + 3, slot, line)
            shown = metrics.elidedText(name, Qt.ElideRight, max(int(slot) - 2, 1))
            painter.drawText(cell, Qt.AlignHCenter | Qt.AlignTop, shown)
        # The axis title, turned to read upwards along the value axis.
        painter.translate(0, plot.center().y())
        painter.rotate(-90)
        painter.drawText(
            QRectF(-plot.height() / 2, 0, plot.height(), line),
            Qt.AlignCenter,
            Y_TITLE,
        )
        painter.end()
        return pixmap

    def event(self, event: QEvent) -> bool:
        """A tooltip names the class under the mouse and its probability."""
        if event.type() == QEvent.ToolTip and isinstance(event, QHelpEvent):
            index = self._slot_at(event.pos().x())
            if index is None:
                QToolTip.hideText()
            else:
                text = f"{self._names[index]}: {self._probs[index]:.1%}"
                QToolTip.showText(event.globalPos(), text, self, QRect())
            return True
        return super().event(event)

    def _slot_at(self, x: float) -> int | None:
        plot = self._plot_rect()
        if not self._names or not plot.left() <= x < plot.right():
            return None
        return int((x - plot.left()) / plot.width() * len(self._names))
