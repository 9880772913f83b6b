"""The model-input preview of the "Draw a digit" tab.

:class:`InputPreview` shows the image the model is given (28x28 gray for the
digit datasets, any size and in colour for photos) as crisp cells with a faint
grid, and optionally where the model looked: a red-to-yellow saliency overlay.
:func:`array_qimage` turns a gray or colour array into a QImage.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QLineF, QRect, QSize, Qt, Slot
from PySide6.QtGui import QBrush, QColor, QImage, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from workbench.ui.formatting import gray_qimage, to_uint8


def _channels_last_uint8(image: np.ndarray) -> np.ndarray:
    """(H, W) or (H, W, 3) uint8 from (H, W), (1, H, W) or (3, H, W), float or uint8."""
    a = np.asarray(image)
    if a.ndim == 3 and a.shape[0] == 1:
        a = a[0]
    if a.ndim == 2:
        return to_uint8(a)
    if a.ndim != 3 or a.shape[0] != 3 or a.size == 0:
        raise ValueError(f"expected (H, W) or (3, H, W), got shape {a.shape}")
    a = a.transpose(1, 2, 0)
    if a.dtype != np.uint8:
        a = np.rint(np.clip(np.nan_to_num(a.astype(np.float32)), 0, 1) * 255)
    return np.ascontiguousarray(a, dtype=np.uint8)


def array_qimage(image: np.ndarray) -> QImage:
    """A QImage owning a copy of a gray (H, W) or colour (3, H, W) array.

    Float arrays are on the 0..1 scale; channels are red, green, blue.
    """
    return _qimage_of(_channels_last_uint8(image))


def _qimage_of(pixels: np.ndarray) -> QImage:
    if pixels.ndim == 2:
        return gray_qimage(pixels)
    h, w, _ = pixels.shape
    return QImage(
        pixels.data, w, h, pixels.strides[0], QImage.Format.Format_RGB888
    ).copy()


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
            Float in [0, 1] or uint8: 2-D gray (28x28 for digits, white ink on
            black), or (3, H, W) red, green and blue planes, any size.
        saliency : numpy.ndarray or None
            (H, W), float in [0, 1]; painted as red-to-yellow heat.
        """
        pixels = _channels_last_uint8(image28)
        given = np.asarray(image28)
        if given.dtype == np.uint8:
            array = given.astype(np.float32) / np.float32(255.0)
        else:
            array = given.astype(np.float32)
        self._array = array[0] if array.ndim == 3 and array.shape[0] == 1 else array
        # Painted in the formats QPainter blends in, converted once here: a
        # gray or RGBA source was converted again on every paint (twice the
        # time of the scaled draws themselves), to the same pixels.
        self._image = _qimage_of(pixels).convertToFormat(QImage.Format.Format_RGB32)
        self._saliency = None
        self._overlay = None
        if saliency is not None:
            heat = np.asarray(saliency, dtype=np.float32)
            heat = heat.reshape(heat.shape[-2:]) if heat.ndim > 2 else heat
            if heat.shape != pixels.shape[:2]:
                raise ValueError(
                    f"saliency shape {heat.shape} != image shape {pixels.shape[:2]}"
                )
            self._saliency = heat.copy()
            self._overlay = _heat_qimage(heat, self.MAX_SALIENCY_ALPHA).convertToFormat(
                QImage.Format.Format_ARGB32_Premultiplied
            )
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
