"""The Data panel's line saying what is done to each image before the model.

Size, gray repeated to three channels for torchvision's models, the mean and
std inputs are normalised with (the weights' own for pretrained weights) and
the weights' recipe: :func:`~workbench.core.models.inputs.preprocessing_text`.
"""

from __future__ import annotations

import dataclasses
import textwrap

from PySide6.QtWidgets import QLabel, QWidget

from workbench.core.config import DEFAULT_IMAGE_SIZE
from workbench.core.data.registry import DATASET_INFO
from workbench.core.models.catalog import pretrained
from workbench.core.models.inputs import TORCHVISION_CHANNELS, preprocessing_text

WRAP_AT = 50  # characters: the settings column's narrowest width
FOLDER_TEXT = (
    "{side}x{side}; mean and std measured from the folder's images when a run "
    "loads them"
)


def preprocessing_line(
    model: str, weights: str, dataset: str, side: int, *, auto: bool = False
) -> str:
    """``Preprocessing: ...`` for ``model`` (``weights``) on ``dataset`` at ``side``.

    ``auto``: nobody set the size; when the weights set it, the line says so
    and what it costs beside the dataset's own size.
    """
    line = _line(model, weights, dataset, side)
    default = DEFAULT_IMAGE_SIZE.get(dataset)
    if auto and default is not None and side != default:
        cost = side * side / (default * default)
        note = f"{side}x{side} (auto: the weights' size"
        if cost >= 1.5:
            note += f", {cost:.0f}x the pixels and time of {default}x{default}"
        line = line.replace(f"{side}x{side}", note + ")", 1)
    return line


def _line(model: str, weights: str, dataset: str, side: int) -> str:
    info = DATASET_INFO.get(dataset)
    if info is None:  # an image folder: its statistics are measured by the run
        if not pretrained(model, weights):
            return "Preprocessing: " + FOLDER_TEXT.format(side=side)
        info = next(iter(DATASET_INFO.values()))
        channels = TORCHVISION_CHANNELS
        info = dataclasses.replace(
            info,
            image_shape=(channels, side, side),
            mean=(0.5,) * channels,
            std=(0.25,) * channels,
        )
    else:
        info = dataclasses.replace(info, image_shape=(info.channels, side, side))
    return "Preprocessing: " + preprocessing_text(model, weights, info)


def wrapped(line: str) -> list[str]:
    """``line`` in lines of at most :data:`WRAP_AT` characters, cut between parts."""
    parts = line.replace(", std (", "; std (").split("; ")
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + len(part) + 2 <= WRAP_AT:
            lines[-1] += f"; {part}"
        else:
            lines += textwrap.wrap(part, WRAP_AT, break_long_words=False)
    return lines


class PreprocessingLabel(QLabel):
    """A few short lines, updated when the model, weights or dataset change.

    Wrapped here, at a width the settings column always has: a word-wrapped
    label in a form asks its height for the wrong width and overlaps the row
    above it.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, objectName="preprocessingLabel")
        self.setStyleSheet("color: #555;")
        self._line = ""

    def show_for(
        self, model: str, weights: str, dataset: str, side: int, *, auto: bool = False
    ) -> None:
        """Describe the preprocessing of ``dataset`` images for ``model``."""
        self._line = preprocessing_line(model, weights, dataset, side, auto=auto)
        self.setText("\n".join(wrapped(self._line)))
        self.setToolTip(
            f"{self._line}\n\nWhat each image goes through before the model sees "
            "it (the Draw tab and Evaluation read images the same way)"
        )

    def line(self) -> str:
        """The whole line, unwrapped."""
        return self._line
