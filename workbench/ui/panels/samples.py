"""The Data panel's pictures: example images per class, and augmented samples."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QGridLayout, QVBoxLayout, QWidget

from workbench.core.config import AUGMENTATIONS
from workbench.core.data.augment import title
from workbench.core.data.folder_check import IMAGE_SUFFIXES, split_folders
from workbench.core.data.folder_images import UnreadableImage, as_channels, read_square
from workbench.core.data.registry import ImageArrays
from workbench.ui.widgets.augment_strip import AugmentStrip

STRIP_COLUMNS = 10
STRIP_ROWS = 2
# Images shown with their augmented versions.
AUGMENT_SAMPLES = 2


def as_picture(image: np.ndarray) -> np.ndarray:
    """uint8 (H, W), (1, H, W) or (3, H, W) as Qt shows it: (H, W) or (H, W, 3)."""
    if image.ndim == 3 and image.shape[0] == 1:
        return image[0]
    if image.ndim == 3:
        return image.transpose(1, 2, 0)
    return image


def sample_strip(
    arrays: ImageArrays, columns: int = STRIP_COLUMNS, rows: int = STRIP_ROWS
) -> np.ndarray:
    """A uint8 picture of example training images: one column per class.

    Column ``c`` holds class ``c``; a class without images leaves its column
    empty (gap grey), so the next classes never move over into it. Gray images
    give an (H, W) picture, colour ones (H, W, 3).
    """
    labels = arrays.train_labels.numpy()
    images = arrays.train_images.numpy()
    channels, side = arrays.image_shape[0], arrays.image_shape[1]
    gap = 2
    shape = (rows * (side + gap) - gap, columns * (side + gap) - gap)
    out = np.full((*shape, 3) if channels == 3 else shape, 60, np.uint8)
    for col in range(columns):
        index = np.flatnonzero(labels == col)[:rows]
        for row, i in enumerate(index):
            y, x = row * (side + gap), col * (side + gap)
            out[y : y + side, x : x + side] = as_picture(images[i])
    return out


def folder_examples(root: str, size: int, count: int = AUGMENT_SAMPLES) -> np.ndarray:
    """The first readable image of the first ``count`` classes: uint8 (N, 3, S, S).

    Reads only those classes' folders (the GUI thread calls it). Empty when
    the folder cannot be read: the data check says why.
    """
    chosen: list[np.ndarray] = []
    try:
        folder = next(iter(split_folders(Path(root)).values()))
        classes = sorted(p for p in folder.iterdir() if p.is_dir())[:count]
        for class_dir in classes:
            for path in sorted(class_dir.iterdir()):
                if path.suffix.lower() not in IMAGE_SUFFIXES:
                    continue
                try:
                    chosen.append(as_channels(read_square(path, size).pixels, 3))
                except UnreadableImage:
                    continue
                break
    except OSError:
        pass
    if not chosen:
        return np.zeros((0, 3, size, size), np.uint8)
    return np.stack(chosen)


class AugmentBox(QWidget):
    """The four augmentation choices and a strip of what they do to real images."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, objectName="augmentBox")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        grid = QGridLayout()
        self.checks: dict[str, QCheckBox] = {}
        for index, choice in enumerate(AUGMENTATIONS):
            check = QCheckBox(title(choice), objectName=f"augment_{choice}")
            check.setToolTip(
                f"{title(choice)}: a different random one for each training image "
                "in every epoch (validation images are never changed)"
            )
            check.toggled.connect(self._on_toggled)
            grid.addWidget(check, index // 2, index % 2)
            self.checks[choice] = check
        layout.addLayout(grid)
        self.strip = AugmentStrip(count=6, scale=1)
        self.strip.setToolTip(
            "Each row: a training image, then augmented versions of it"
        )
        layout.addWidget(self.strip)

    def choices(self) -> tuple[str, ...]:
        """The ticked choices, in the order of ``AUGMENTATIONS``."""
        return tuple(c for c in AUGMENTATIONS if self.checks[c].isChecked())

    def set_choices(self, choices: Iterable[str]) -> None:
        """Tick ``choices`` (without emitting ``changed`` for each)."""
        wanted = set(choices)
        for choice, check in self.checks.items():
            check.blockSignals(True)
            check.setChecked(choice in wanted)
            check.blockSignals(False)
        self.strip.set_choices(self.choices())

    def set_images(self, images: np.ndarray, mean, std) -> None:
        """Show ``images`` (uint8 (N, H, W) or (N, C, H, W)) and their versions."""
        self.strip.set_images(images, mean, std)

    def _on_toggled(self, _checked: bool) -> None:
        self.strip.set_choices(self.choices())
        self.changed.emit()
