"""The picture a photo model reads, as the user gave it, on the Draw tab.

:class:`PhotoView` shows an image file whole (scaled to fit, its aspect kept)
or a stored validation image, and while it holds none, where to drop one. What
the model receives of it (resized, cropped, normalised) is the
:class:`~workbench.ui.widgets.input_preview.InputPreview`'s to show.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QImage,
    QImageReader,
    QKeySequence,
    QPainter,
    QPaintEvent,
    QPen,
)
from PySide6.QtWidgets import QSizePolicy, QWidget

from workbench.ui.widgets.input_preview import array_qimage

# A 40-megapixel photo is decoded at most this large for display.
MAX_SHOWN_SIDE = 1024
EMPTY_HINT = "Drop an image file or a folder here\nor press Open image… ({keys})"
OPEN_IMAGE_KEYS = QKeySequence("Ctrl+I")  # free: no window action uses Ctrl+I
IMAGE_FILTER = (
    "Images (*.png *.jpg *.jpeg *.bmp *.gif *.webp *.tif *.tiff *.pgm *.ppm);;"
    "All files (*)"
)


def read_for_display(path: str | Path) -> QImage | None:
    """The file as a QImage no larger than :data:`MAX_SHOWN_SIDE`; None if unreadable.

    Qt's readers decide only what is shown; reading for the model is Pillow's.
    """
    reader = QImageReader(str(path))
    reader.setAutoTransform(True)
    size = reader.size()
    if size.isValid() and max(size.width(), size.height()) > MAX_SHOWN_SIDE:
        reader.setScaledSize(
            size.scaled(
                MAX_SHOWN_SIDE, MAX_SHOWN_SIDE, Qt.AspectRatioMode.KeepAspectRatio
            )
        )
    image = reader.read()
    return None if image.isNull() else image


class PhotoView(QWidget):
    """The opened picture, whole and centred; a drop hint while there is none."""

    def __init__(self, keys: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("photoView")
        self.setMinimumSize(220, 220)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._hint = EMPTY_HINT.format(keys=keys)
        self._image: QImage | None = None

    def set_picture(self, image: QImage | np.ndarray | None) -> None:
        """Show ``image`` (a QImage, or a (H, W) / (3, H, W) array); None: the hint."""
        if isinstance(image, np.ndarray):
            image = array_qimage(image)
        self._image = image
        self.update()

    def picture(self) -> QImage | None:
        """The picture on show, or None."""
        return self._image

    def hint(self) -> str:
        """The text shown while no picture is."""
        return self._hint

    def sizeHint(self) -> QSize:
        """As large as the digit canvas."""
        return QSize(280, 280)

    def paintEvent(self, event: QPaintEvent) -> None:
        """The picture scaled to fit, or a dashed drop zone with the hint."""
        painter = QPainter(self)
        painter.fillRect(event.rect(), self.palette().base())
        area = self.rect().adjusted(4, 4, -4, -4)
        if self._image is None:
            pen = QPen(self.palette().mid().color(), 2, Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.drawRoundedRect(area, 8, 8)
            painter.setPen(QColor(90, 90, 90))
            painter.drawText(area, Qt.AlignmentFlag.AlignCenter, self._hint)
        else:
            size = self._image.size().scaled(
                area.size(), Qt.AspectRatioMode.KeepAspectRatio
            )
            target = QRect(0, 0, size.width(), size.height())
            target.moveCenter(area.center())
            # A small stored image is blown up: keep its pixels crisp.
            crisp = size.width() >= 3 * self._image.width()
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, not crisp)
            painter.drawImage(target, self._image)
        painter.end()
