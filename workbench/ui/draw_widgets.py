"""Widgets of the "Draw a digit" tab: a drawing canvas, probability bars, a preview.

They only draw and show numpy arrays; turning the canvas into a model input and
predicting is someone else's job (``core/predict.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import (
    QEvent,
    QLineF,
    QPointF,
    QRect,
    QRectF,
    QSize,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QImage,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QTabletEvent,
)
from PySide6.QtWidgets import QSizePolicy, QWidget

CANVAS_SIDE = 280
DEFAULT_PEN_WIDTH = 22.0
# Tablet pressure scales the pen between these factors of pen_width.
MIN_PRESSURE_FACTOR = 0.5
MAX_PRESSURE_FACTOR = 1.2
HINT_TEXT = "Draw a digit"


def _to_uint8(array: np.ndarray) -> np.ndarray:
    """A C-contiguous uint8 copy of a 2-D float [0, 1] or uint8 array."""
    a = np.asarray(array)
    a = np.squeeze(a) if a.ndim > 2 else a
    if a.ndim != 2 or a.size == 0:
        raise ValueError(f"expected a 2-D image, got shape {np.shape(array)}")
    if a.dtype == np.uint8:
        return np.ascontiguousarray(a).copy()
    a = np.nan_to_num(a.astype(np.float32), nan=0.0)
    return np.ascontiguousarray(np.rint(np.clip(a, 0.0, 1.0) * 255.0).astype(np.uint8))


def _gray_qimage(pixels: np.ndarray) -> QImage:
    """A QImage that owns a copy of a 2-D uint8 array (no dangling buffer)."""
    h, w = pixels.shape
    return QImage(pixels.data, w, h, pixels.strides[0], QImage.Format_Grayscale8).copy()


def _qimage_to_array(image: QImage) -> np.ndarray:
    """A uint8 copy of a Grayscale8 QImage, without the scan-line padding."""
    h, w, bpl = image.height(), image.width(), image.bytesPerLine()
    buffer = np.frombuffer(image.constBits(), dtype=np.uint8, count=bpl * h)
    return buffer.reshape(h, bpl)[:, :w].copy()


@dataclass
class _Stroke:
    """One pen-down..pen-up gesture (image coordinates), or a placed picture."""

    points: list[tuple[float, float, float]] = field(default_factory=list)
    picture: QImage | None = None  # set_image: a CANVAS_SIDE square picture


class DigitCanvas(QWidget):
    """A square canvas to draw a digit on: white ink on black, like MNIST."""

    changed = Signal()
    stroke_finished = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("digitCanvas")
        self.setMinimumSize(CANVAS_SIDE, CANVAS_SIDE)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.setFocusPolicy(Qt.StrongFocus)
        self.setCursor(Qt.CrossCursor)
        self.setAttribute(Qt.WA_OpaquePaintEvent)
        self._pen_width = DEFAULT_PEN_WIDTH
        self._strokes: list[_Stroke] = []
        self._current: _Stroke | None = None
        self._image = QImage(CANVAS_SIDE, CANVAS_SIDE, QImage.Format_Grayscale8)
        self._image.fill(0)

    # --- public API -------------------------------------------------------------

    def is_drawing(self) -> bool:
        """True while a stroke is in progress (the pen is down)."""
        return self._current is not None

    @property
    def pen_width(self) -> float:
        """Pen width in image pixels (before tablet pressure)."""
        return self._pen_width

    def set_pen_width(self, px: float) -> None:
        """Set the pen width for the next strokes.

        Parameters
        ----------
        px : float
            Width in image pixels, clamped to 1..CANVAS_SIDE.
        """
        self._pen_width = float(min(max(px, 1.0), CANVAS_SIDE))

    def image(self) -> np.ndarray:
        """Return the canvas as float32 (CANVAS_SIDE, CANVAS_SIDE) in [0, 1].

        Returns
        -------
        numpy.ndarray
            A copy; 0 is background, 1 is full ink.
        """
        return self.stroke_image().astype(np.float32) / np.float32(255.0)

    def stroke_image(self) -> np.ndarray:
        """Return the canvas as uint8 (CANVAS_SIDE, CANVAS_SIDE), a copy.

        Returns
        -------
        numpy.ndarray
            0 is background, 255 is full ink.
        """
        return _qimage_to_array(self._image)

    def is_empty(self) -> bool:
        """Return True when there is no ink on the canvas.

        Returns
        -------
        bool
            True for a blank canvas (also after ``set_image`` of a black picture).
        """
        if self._current is not None or any(s.points for s in self._strokes):
            return False  # every pen stroke leaves at least a dot
        return not self._strokes or not _qimage_to_array(self._image).any()

    def stroke_count(self) -> int:
        """Return the number of undoable strokes (a placed picture counts as one).

        Returns
        -------
        int
            Finished strokes plus the one being drawn, if any.
        """
        return len(self._strokes) + (self._current is not None)

    @Slot()
    def undo(self) -> bool:
        """Remove the last stroke and redraw the rest.

        Returns
        -------
        bool
            False when there was nothing to undo.
        """
        self._finish_stroke(emit=False)
        if not self._strokes:
            return False
        self._strokes.pop()
        self._render()
        self.changed.emit()
        return True

    @Slot()
    def clear(self) -> None:
        """Remove all strokes and blank the canvas."""
        self._current = None
        self._strokes.clear()
        self._render()
        self.changed.emit()

    def set_image(self, array: np.ndarray) -> None:
        """Put a picture on the canvas, replacing all strokes.

        The picture is one undoable stroke: undo returns to a blank canvas.

        Parameters
        ----------
        array : numpy.ndarray
            2-D, float in [0, 1] or uint8 (white ink on black), any size; scaled
            smoothly to fill the canvas, keeping its aspect ratio, centred.
        """
        source = _gray_qimage(_to_uint8(array))
        scaled = source.scaled(
            CANVAS_SIDE, CANVAS_SIDE, Qt.KeepAspectRatio, Qt.SmoothTransformation
        )
        picture = QImage(CANVAS_SIDE, CANVAS_SIDE, QImage.Format_Grayscale8)
        picture.fill(0)
        painter = QPainter(picture)
        painter.drawImage(
            (CANVAS_SIDE - scaled.width()) // 2,
            (CANVAS_SIDE - scaled.height()) // 2,
            scaled,
        )
        painter.end()
        self._current = None
        self._strokes = [_Stroke(picture=picture)]
        self._render()
        self.changed.emit()

    # --- geometry ---------------------------------------------------------------

    def sizeHint(self) -> QSize:
        """Twice the image side: big enough to draw comfortably."""
        return QSize(2 * CANVAS_SIDE, 2 * CANVAS_SIDE)

    def _target_rect(self) -> QRectF:
        """Where the image is shown: the largest centred square."""
        side = min(self.width(), self.height())
        return QRectF((self.width() - side) / 2, (self.height() - side) / 2, side, side)

    def _to_image(self, pos: QPointF) -> QPointF:
        target = self._target_rect()
        scale = CANVAS_SIDE / target.width()
        return QPointF((pos.x() - target.x()) * scale, (pos.y() - target.y()) * scale)

    def _to_widget_rect(self, rect: QRectF) -> QRect:
        target = self._target_rect()
        scale = target.width() / CANVAS_SIDE
        return QRectF(
            target.x() + rect.x() * scale,
            target.y() + rect.y() * scale,
            rect.width() * scale,
            rect.height() * scale,
        ).toAlignedRect()

    # --- drawing ----------------------------------------------------------------

    def _begin_stroke(self, pos: QPointF, width: float) -> None:
        self._finish_stroke(emit=False)
        self._current = _Stroke()
        self.update()  # the whole widget: the hint goes away
        self._add_point(pos, width)

    def _add_point(self, pos: QPointF, width: float) -> None:
        if self._current is None:
            return
        point = (pos.x(), pos.y(), width)
        points = self._current.points
        if points and points[-1][:2] == point[:2]:
            return
        previous = points[-1] if points else None
        points.append(point)
        painter = self._canvas_painter()
        _paint_segment(painter, previous, point)
        painter.end()
        x0, y0 = (previous or point)[:2]
        pad = max(width, previous[2] if previous else 0.0) / 2 + 2
        dirty = QRectF(QPointF(x0, y0), pos).normalized().adjusted(-pad, -pad, pad, pad)
        self.update(self._to_widget_rect(dirty))
        self.changed.emit()

    def _finish_stroke(self, *, emit: bool) -> None:
        if self._current is None:
            return
        self._strokes.append(self._current)
        self._current = None
        self.update()  # the hint may need to go or come back
        if emit:
            self.stroke_finished.emit()

    def _canvas_painter(self) -> QPainter:
        painter = QPainter(self._image)
        painter.setRenderHint(QPainter.Antialiasing)
        painter.setRenderHint(QPainter.SmoothPixmapTransform)
        return painter

    def _render(self) -> None:
        """Redraw the image from the strokes, the same calls as live drawing.

        Identical paint calls in the same order give identical pixels, so undo
        leaves exactly what was there before the removed stroke.
        """
        self._image.fill(0)
        painter = self._canvas_painter()
        for stroke in [*self._strokes, *([self._current] if self._current else [])]:
            if stroke.picture is not None:
                painter.drawImage(0, 0, stroke.picture)
                continue
            previous = None
            for point in stroke.points:
                _paint_segment(painter, previous, point)
                previous = point
        painter.end()
        self.update()

    def _pressure_width(self, pressure: float) -> float:
        # Some drivers report 0 for devices without pressure: treat as full.
        pressure = 1.0 if pressure <= 0 else min(pressure, 1.0)
        span = MAX_PRESSURE_FACTOR - MIN_PRESSURE_FACTOR
        return self._pen_width * (MIN_PRESSURE_FACTOR + span * pressure)

    # --- events -----------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        """Paint the image scaled to the widget, and the hint when empty."""
        painter = QPainter(self)
        painter.fillRect(event.rect(), self.palette().window())
        target = self._target_rect()
        painter.setRenderHint(QPainter.SmoothPixmapTransform)
        painter.drawImage(target, self._image)
        if self.is_empty():
            font = QFont(painter.font())
            font.setPixelSize(max(12, int(target.height() / 14)))
            painter.setFont(font)
            painter.setPen(QColor(255, 255, 255, 90))
            painter.drawText(target, Qt.AlignCenter, HINT_TEXT)
        painter.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        """Start a stroke with the left button."""
        if event.button() != Qt.LeftButton:
            super().mousePressEvent(event)
            return
        self._begin_stroke(self._to_image(event.position()), self._pen_width)
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        """Extend the stroke while the left button is held."""
        if self._current is None or not event.buttons() & Qt.LeftButton:
            super().mouseMoveEvent(event)
            return
        self._add_point(self._to_image(event.position()), self._pen_width)
        event.accept()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """Finish the stroke."""
        if event.button() != Qt.LeftButton or self._current is None:
            super().mouseReleaseEvent(event)
            return
        self._add_point(self._to_image(event.position()), self._pen_width)
        self._finish_stroke(emit=True)
        event.accept()

    def tabletEvent(self, event: QTabletEvent) -> None:
        """Draw with a pen; accepting stops Qt from also sending mouse events."""
        pos = self._to_image(event.position())
        width = self._pressure_width(event.pressure())
        kind = event.type()
        if kind == QEvent.TabletPress:
            self._begin_stroke(pos, width)
        elif kind == QEvent.TabletMove and self._current is not None:
            self._add_point(pos, width)
        elif kind == QEvent.TabletRelease and self._current is not None:
            self._add_point(pos, width)
            self._finish_stroke(emit=True)
        event.accept()

    def event(self, event: QEvent) -> bool:
        """Claim Esc and Undo while focused, ahead of window-wide shortcuts."""
        if event.type() == QEvent.ShortcutOverride and self._is_own_key(event):
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Esc clears, the platform's Undo key undoes."""
        if event.key() == Qt.Key_Escape:
            self.clear()
        elif event.matches(QKeySequence.Undo):
            self.undo()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    @staticmethod
    def _is_own_key(event: QKeyEvent) -> bool:
        return event.key() == Qt.Key_Escape or event.matches(QKeySequence.Undo)


def _paint_segment(
    painter: QPainter,
    start: tuple[float, float, float] | None,
    end: tuple[float, float, float],
) -> None:
    """Paint one piece of a stroke: a round dot, or a round-capped line."""
    x, y, width = end
    if start is None:
        # A click without movement must still leave a mark.
        painter.setPen(Qt.NoPen)
        painter.setBrush(Qt.white)
        painter.drawEllipse(QPointF(x, y), width / 2, width / 2)
        return
    pen = QPen(
        Qt.white, (start[2] + width) / 2, Qt.SolidLine, Qt.RoundCap, Qt.RoundJoin
    )
    painter.setPen(pen)
    painter.setBrush(Qt.NoBrush)
    painter.drawLine(QLineF(start[0], start[1], x, y))


class ProbabilityBars(pg.PlotWidget):
    """A bar per class showing its predicted probability; the top bar stands out."""

    BAR_COLOR = QColor(120, 144, 176)
    TOP_COLOR = QColor(230, 120, 20)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent=parent, background="w")
        self.setObjectName("probabilityPlot")
        plot = self.getPlotItem()
        plot.setMouseEnabled(x=False, y=False)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.showGrid(x=False, y=True, alpha=0.25)
        plot.setLabel("left", "probability")
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            axis.setPen("k")
            axis.setTextPen("k")
        plot.getAxis("left").setTicks(
            [[(v, f"{v:g}") for v in (0, 0.25, 0.5, 0.75, 1)]]
        )
        plot.disableAutoRange()
        self._names: list[str] = []
        self._probs = np.zeros(0)
        # Created once and updated with setOpts: re-adding items per update is slow.
        self._bars = pg.BarGraphItem(
            x=np.zeros(0), height=np.zeros(0), width=0.7, pen=None, brushes=[]
        )
        plot.addItem(self._bars)
        self._top_label = pg.TextItem(anchor=(0.5, 1.0), color=self.TOP_COLOR)
        self._top_label.setVisible(False)
        plot.addItem(self._top_label)
        self.set_class_names([str(i) for i in range(10)])

    def bar_item(self) -> pg.BarGraphItem:
        """Return the single bar item (for tests)."""
        return self._bars

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
        n = len(self._names)
        plot = self.getPlotItem()
        plot.getAxis("bottom").setTicks([list(enumerate(self._names))])
        plot.setXRange(-0.6, max(n, 1) - 0.4, padding=0)
        plot.setYRange(0, 1.08, padding=0)
        self._probs = np.zeros(n)
        self._bars.setOpts(
            x=np.arange(n, dtype=float),
            height=self._probs.copy(),
            brushes=[self.BAR_COLOR] * n,
        )
        self._top_label.setVisible(False)

    @Slot(object)
    def set_probabilities(self, probs: Sequence[float]) -> None:
        """Show one probability per class and highlight the largest.

        Parameters
        ----------
        probs : Sequence[float]
            As many values in [0, 1] as there are class names.
        """
        values = np.asarray(probs, dtype=float).reshape(-1)
        if values.shape != self._probs.shape:
            raise ValueError(
                f"expected {len(self._probs)} probabilities, got {values.size}"
            )
        values = np.clip(np.nan_to_num(values, nan=0.0), 0.0, 1.0)
        self._probs = values
        brushes = [self.BAR_COLOR] * len(values)
        top = int(np.argmax(values)) if values.size else -1
        if top >= 0 and values[top] > 0:
            brushes[top] = self.TOP_COLOR
            self._top_label.setText(f"{values[top]:.0%}")
            self._top_label.setPos(top, values[top] + 0.01)
            self._top_label.setVisible(True)
        else:
            self._top_label.setVisible(False)
        self._bars.setOpts(height=values.copy(), brushes=brushes)

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


class InputPreview(QWidget):
    """The model's input image, crisp pixels, with an optional saliency overlay."""

    MAX_SALIENCY_ALPHA = 0.75
    GRID_MIN_CELL = 8

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inputPreview")
        self.setMinimumSize(140, 140)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.setAttribute(Qt.WA_OpaquePaintEvent)
        self._show_saliency = True
        self._array: np.ndarray | None = None
        self._saliency: np.ndarray | None = None
        self._image: QImage | None = None
        self._overlay: QImage | None = None

    @property
    def show_saliency(self) -> bool:
        """Whether a given saliency map is painted over the image."""
        return self._show_saliency

    @Slot(bool)
    def set_show_saliency(self, show: bool) -> None:
        """Show or hide the saliency overlay.

        Parameters
        ----------
        show : bool
            True paints the saliency (when one was given) over the image.
        """
        self._show_saliency = bool(show)
        self.update()

    def set_image(
        self, image28: np.ndarray, saliency: np.ndarray | None = None
    ) -> None:
        """Show an image, and optionally where the model looked.

        Parameters
        ----------
        image28 : numpy.ndarray
            2-D (normally 28x28) float in [0, 1] or uint8, white ink on black.
        saliency : numpy.ndarray or None
            Same shape, float in [0, 1]; painted as red-to-yellow heat.
        """
        pixels = _to_uint8(image28)
        given = np.asarray(image28)
        if given.dtype == np.uint8:
            self._array = pixels.astype(np.float32) / np.float32(255.0)
        else:
            self._array = given.astype(np.float32).reshape(pixels.shape)
        self._image = _gray_qimage(pixels)
        self._saliency = None
        self._overlay = None
        if saliency is not None:
            heat = np.asarray(saliency, dtype=np.float32)
            heat = heat.reshape(heat.shape[-2:]) if heat.ndim > 2 else heat
            if heat.shape != pixels.shape:
                raise ValueError(
                    f"saliency shape {heat.shape} != image shape {pixels.shape}"
                )
            self._saliency = heat.copy()
            self._overlay = _heat_qimage(heat, self.MAX_SALIENCY_ALPHA)
        self.update()

    @Slot()
    def clear(self) -> None:
        """Show an empty black field."""
        self._array = self._saliency = None
        self._image = self._overlay = None
        self.update()

    def shown_image(self) -> np.ndarray | None:
        """Return the last image set, or None after ``clear``."""
        return None if self._array is None else self._array.copy()

    def shown_saliency(self) -> np.ndarray | None:
        """Return the last saliency set, or None."""
        return None if self._saliency is None else self._saliency.copy()

    def sizeHint(self) -> QSize:
        """Room for 28 cells of 7 px."""
        return QSize(196, 196)

    def _cells(self) -> tuple[int, int]:
        rows, cols = (
            (28, 28)
            if self._image is None
            else (
                self._image.height(),
                self._image.width(),
            )
        )
        return rows, cols

    def _target_rect(self) -> QRect:
        """A centred rect of whole, equal cells: uneven ones would look blurry."""
        rows, cols = self._cells()
        cell = max(1, min(self.width() // cols, self.height() // rows))
        w, h = cell * cols, cell * rows
        return QRect((self.width() - w) // 2, (self.height() - h) // 2, w, h)

    def paintEvent(self, event: QPaintEvent) -> None:
        """Paint crisp pixels, the overlay, a faint grid and a frame."""
        painter = QPainter(self)
        painter.fillRect(event.rect(), self.palette().window())
        target = self._target_rect()
        painter.fillRect(target, Qt.black)
        # No smooth transform: nearest-neighbour keeps every pixel a crisp cell.
        if self._image is not None:
            painter.drawImage(target, self._image)
            if self._overlay is not None and self._show_saliency:
                painter.drawImage(target, self._overlay)
        rows, cols = self._cells()
        cell = target.width() // cols
        if cell >= self.GRID_MIN_CELL:
            painter.setPen(QPen(QColor(128, 128, 128, 45), 0))
            lines = [
                QLineF(
                    target.left() + i * cell,
                    target.top(),
                    target.left() + i * cell,
                    target.bottom() + 1,
                )
                for i in range(1, cols)
            ] + [
                QLineF(
                    target.left(),
                    target.top() + j * cell,
                    target.right() + 1,
                    target.top() + j * cell,
                )
                for j in range(1, rows)
            ]
            painter.drawLines(lines)
        painter.setPen(QPen(self.palette().mid().color(), 1))
        painter.setBrush(QBrush())
        painter.drawRect(target.adjusted(-1, -1, 0, 0))
        painter.end()


def _heat_qimage(heat: np.ndarray, max_alpha: float) -> QImage:
    """Red (low) to yellow (high) heat, alpha growing with the value."""
    v = np.clip(np.nan_to_num(heat, nan=0.0), 0.0, 1.0)
    rgba = np.empty((*v.shape, 4), dtype=np.uint8)
    rgba[..., 0] = 255
    rgba[..., 1] = np.rint(255 * v)
    rgba[..., 2] = 0
    rgba[..., 3] = np.rint(255 * max_alpha * v)
    h, w = v.shape
    return QImage(rgba.data, w, h, rgba.strides[0], QImage.Format_RGBA8888).copy()
