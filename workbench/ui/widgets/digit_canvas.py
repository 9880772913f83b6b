"""The drawing canvas of the "Draw a digit" tab.

:class:`DigitCanvas` is a square of white ink on black, like MNIST: strokes by
mouse or tablet pen (pressure widens the pen), undo stroke by stroke, Esc to
clear, and a picture placed as one undoable stroke. It only draws and hands out
numpy arrays; turning them into a model input is ``core/predict.py``'s job.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
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

from workbench.ui.formatting import gray_qimage, to_uint8

CANVAS_SIDE = 280
DEFAULT_PEN_WIDTH = 22.0
# Tablet pressure scales the pen between these factors of pen_width.
MIN_PRESSURE_FACTOR = 0.5
MAX_PRESSURE_FACTOR = 1.2
HINT_TEXT = "Draw a digit"


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

    def holds_only_picture(self) -> bool:
        """Return True while the canvas holds a placed picture and nothing drawn.

        Returns
        -------
        bool
            True after ``set_image`` until a stroke starts (and again when
            undo removes every stroke drawn on the picture).
        """
        return (
            self._current is None
            and len(self._strokes) == 1
            and self._strokes[0].picture is not None
        )

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
        source = gray_qimage(to_uint8(array))
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
        # No repaint: the stroke's segments are on screen already, and the
        # hint stays away (a stroke leaves at least a dot). The whole canvas
        # scaled again cost as much as the read it waits for.
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
