"""A strip of augmented training images: what the chosen augmentation does.

:class:`AugmentStrip` shows, for each of a few given images, the image itself and
``count`` augmented versions, made by the training path's own
:class:`~workbench.core.data.augment.BatchAugment` with a fixed seed, so only a
change of choices changes the picture. The Data panel owns the check boxes and
calls :meth:`AugmentStrip.set_choices`; a handful of small images take
milliseconds, so it runs in the GUI thread.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import torch
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QImage, QPixmap, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from workbench.core.data.augment import (
    BatchAugment,
    batch_generator,
    describe,
    validate,
)

GAP = 2
_GAP_GREY = 60  # as the Data panel's sample strip


class AugmentStrip(QWidget):
    """Each given image, then ``count`` augmented versions of it, one row each.

    Parameters
    ----------
    parent : QWidget, optional
        Owner widget.
    count : int
        Augmented versions per image.
    seed : int
        Fixes the augmentations drawn (the same choices always show the same).
    scale : int
        Screen pixels per image pixel (nearest neighbour).
    """

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        count: int = 8,
        seed: int = 0,
        scale: int = 2,
    ) -> None:
        super().__init__(parent)
        self.count = count
        self.seed = seed
        self.scale = scale
        self._choices: tuple[str, ...] = ()
        self._images: torch.Tensor | None = None  # uint8 (N, C, H, W)
        self._mean: tuple[float, ...] = ()
        self._std: tuple[float, ...] = ()
        self._strip: np.ndarray | None = None

        self.caption = QLabel(objectName="augmentCaption")
        self.caption.setWordWrap(True)
        self.image_label = FitWidthLabel(objectName="augmentStripLabel")
        self.image_label.setAlignment(Qt.AlignmentFlag.AlignLeft)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.image_label)
        self._render()

    # Public API -----------------------------------------------------------

    def set_images(
        self,
        images: np.ndarray | torch.Tensor,
        mean: float | Sequence[float],
        std: float | Sequence[float],
    ) -> None:
        """Show augmented versions of ``images``.

        Parameters
        ----------
        images : numpy.ndarray or torch.Tensor
            uint8 ``(N, H, W)`` or ``(N, C, H, W)`` with 1 or 3 channels; a few
            (each is one row).
        mean, std : float or sequence of float
            The dataset's statistics (0..1 scale), one per channel: the
            augmentation runs on normalised images, as in training.
        """
        pixels = torch.as_tensor(np.asarray(images))
        if pixels.dtype != torch.uint8 or pixels.dim() not in (3, 4):
            raise ValueError("images must be uint8 (N, H, W) or (N, C, H, W)")
        if pixels.dim() == 3:
            pixels = pixels.unsqueeze(1)
        if pixels.shape[1] not in (1, 3):
            raise ValueError("images must have 1 or 3 channels")
        self._images = pixels
        self._mean = _per_channel(mean, pixels.shape[1])
        self._std = _per_channel(std, pixels.shape[1])
        self._render()

    def set_choices(self, choices: Iterable[str]) -> None:
        """Augment with ``choices`` (names from ``config.AUGMENTATIONS``) and redraw."""
        self._choices = validate(choices)
        self._render()

    def choices(self) -> tuple[str, ...]:
        """The choices shown."""
        return self._choices

    def strip(self) -> np.ndarray | None:
        """The picture shown: uint8 ``(H, W)`` or ``(H, W, 3)``; None without images."""
        return None if self._strip is None else self._strip.copy()

    # Drawing --------------------------------------------------------------

    def _render(self) -> None:
        if self._choices:
            self.caption.setText(f"Augmented: {describe(self._choices)}")
        else:
            self.caption.setText("No augmentation: the images as the model sees them")
        if self._images is None or len(self._images) == 0:
            self._strip = None
            self.image_label.set_full_pixmap(QPixmap())
            return
        self._strip = self._compose()
        self.image_label.set_full_pixmap(_pixmap(self._strip, self.scale))

    def _compose(self) -> np.ndarray:
        assert self._images is not None
        images = self._images
        n, c, h, w = images.shape
        augmented = self._augment(images.repeat_interleave(self.count, dim=0))
        tiles = augmented.view(n, self.count, c, h, w)
        columns = self.count + 1
        out = np.full(
            (c, n * (h + GAP) - GAP, columns * (w + GAP) - GAP), _GAP_GREY, np.uint8
        )
        for row in range(n):
            y = row * (h + GAP)
            out[:, y : y + h, 0:w] = images[row].numpy()
            for col in range(self.count):
                x = (col + 1) * (w + GAP)
                out[:, y : y + h, x : x + w] = tiles[row, col].numpy()
        return out[0] if c == 1 else np.ascontiguousarray(out.transpose(1, 2, 0))

    def _augment(self, images: torch.Tensor) -> torch.Tensor:
        # The training path's own operations: normalise, augment, then back to
        # pixels, so jitter and the black fill of rotations look as they train.
        mean = torch.tensor(self._mean).view(1, -1, 1, 1)
        std = torch.tensor(self._std).view(1, -1, 1, 1)
        x = (images.to(torch.float32) / 255 - mean) / std
        augment = BatchAugment(self._choices, self._mean, self._std)
        x = augment(x, batch_generator(self.seed, 0, 0))
        pixels = (x * std + mean).clamp_(0, 1).mul_(255).round_()
        return pixels.to(torch.uint8)


def _per_channel(value: float | Sequence[float], channels: int) -> tuple[float, ...]:
    values = (float(value),) if isinstance(value, int | float) else tuple(value)
    if len(values) == 1:
        values *= channels
    if len(values) != channels:
        raise ValueError(f"expected {channels} statistics, got {len(values)}")
    return values


class FitWidthLabel(QLabel):
    """A picture shown whole, scaled down to the width it is given.

    Its natural size is a wish, not a minimum: seven 64-pixel photos must not
    widen the settings column past the window (they shrink instead).
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self._full = QPixmap()
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def set_full_pixmap(self, pixmap: QPixmap) -> None:
        """Show ``pixmap``, at most as wide as the label."""
        self._full = pixmap
        self._fit()
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        return self._full.size() if not self._full.isNull() else super().sizeHint()

    def minimumSizeHint(self) -> QSize:
        return QSize(1, self.heightForWidth(self.width()))

    def hasHeightForWidth(self) -> bool:
        return not self._full.isNull()

    def heightForWidth(self, width: int) -> int:
        if self._full.isNull():
            return 0
        return math.ceil(self._full.height() * min(1.0, width / self._full.width()))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        fits = self._full.isNull() or self.width() >= self._full.width()
        if fits or not self.isVisible():  # laid out when shown: fitted then
            self.setPixmap(self._full)
        else:
            self.setPixmap(
                self._full.scaledToWidth(
                    max(1, self.width()), Qt.TransformationMode.SmoothTransformation
                )
            )


def _pixmap(pixels: np.ndarray, scale: int) -> QPixmap:
    """uint8 (H, W) grey or (H, W, 3) RGB as a pixmap, scaled nearest-neighbour."""
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    h, w = pixels.shape[:2]
    if pixels.ndim == 2:
        image = QImage(pixels.data, w, h, w, QImage.Format.Format_Grayscale8)
    else:
        image = QImage(pixels.data, w, h, 3 * w, QImage.Format.Format_RGB888)
    # copy(): the pixmap must not borrow ``pixels`` (scaled() to the same size
    # would return the borrowing image itself).
    image = image.copy().scaled(
        w * scale,
        h * scale,
        Qt.AspectRatioMode.IgnoreAspectRatio,
        Qt.TransformationMode.FastTransformation,
    )
    return QPixmap.fromImage(image)
