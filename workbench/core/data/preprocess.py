"""Recipes that turn a picture of a digit into a dataset-style 28x28 field.

MNIST digits were cropped to their ink, scaled into a 20x20 box keeping the
aspect ratio, and placed by centre of mass in a 28x28 field. A drawing or a
photo must go through the same steps, or the model sees something it never
trained on. Every function takes and returns float32 arrays in [0, 1], white
ink on black.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

# The recipes by name: "mnist" for MNIST-made data, "digits" for UCI digits.
STYLES = ("mnist", "digits")
_INK_THRESHOLD = 0.1
# Sizes the recipes work to; an export's preprocess.json repeats them.
FIELD = 28  # every recipe fills a FIELD x FIELD picture
BOX = 20  # the ink is fitted into a BOX x BOX square inside it
DIGITS_LOW = 8  # the UCI digits were recorded at 8x8
# A picture whose border is brighter than this is dark ink on paper: inverted.
INVERT_ABOVE = 0.5


class PredictError(ValueError):
    """An image that cannot be read or holds no digit."""


def _resize(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """Antialiased bilinear resize (Pillow's BILINEAR on float images), in [0, 1]."""
    if width == 1 and height > 1:
        # torch's antialiased kernel repeats the first row in a 1-pixel-wide
        # output (torch 2.14, CPU); the filter is separable, so resize the
        # transposed picture instead.
        return _resize(image.T, width, height).T.copy()
    tensor = torch.from_numpy(np.ascontiguousarray(image, dtype=np.float32))
    out = nn.functional.interpolate(
        tensor[None, None],
        size=(height, width),
        mode="bilinear",
        antialias=True,
        align_corners=False,
    )
    return out[0, 0].clamp(0, 1).numpy()


def _crop_to_ink(image: np.ndarray) -> np.ndarray:
    inked = image > _INK_THRESHOLD
    rows = np.flatnonzero(inked.any(axis=1))
    cols = np.flatnonzero(inked.any(axis=0))
    if rows.size == 0:
        raise PredictError("the image holds no ink: draw or load a digit first")
    return image[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]


def _fit_box(image: np.ndarray, box: int) -> np.ndarray:
    h, w = image.shape
    scale = box / max(h, w)
    return _resize(image, max(1, round(h * scale)), max(1, round(w * scale)))


def mnist_style(image: np.ndarray) -> np.ndarray:
    """Crop, fit into 20x20, and centre by mass in 28x28 (values in [0, 1])."""
    digit = _fit_box(_crop_to_ink(image), BOX)
    h, w = digit.shape
    field = np.zeros((FIELD, FIELD), dtype=np.float32)
    top, left = (FIELD - h) // 2, (FIELD - w) // 2
    field[top : top + h, left : left + w] = digit
    mass = field.sum()
    ys, xs = np.indices(field.shape)
    cy, cx = (ys * field).sum() / mass, (xs * field).sum() / mass
    # Shift the centre of mass to the field's centre (13.5), as MNIST did.
    centre = (FIELD - 1) / 2
    dy, dx = round(centre - cy), round(centre - cx)
    dy = int(np.clip(dy, -top, FIELD - top - h))
    dx = int(np.clip(dx, -left, FIELD - left - w))
    return np.roll(field, (dy, dx), axis=(0, 1))


def digits_style(image: np.ndarray) -> np.ndarray:
    """The UCI digits recipe: ink fitted to the box, blurred to 8x8, shown at 28x28.

    Mirrors how ``data.py`` brings the 8x8 digits to 28x28: the 8x8 picture is
    scaled into a 20x20 box centred in the field.
    """
    digit = _crop_to_ink(image)
    low = _resize(digit, DIGITS_LOW, DIGITS_LOW)
    low = low / max(float(low.max()), 1e-6)
    field = np.zeros((FIELD, FIELD), dtype=np.float32)
    start = (FIELD - BOX) // 2
    field[start : start + BOX, start : start + BOX] = _resize(low, BOX, BOX)
    return field


def naive_resize(image: np.ndarray) -> np.ndarray:
    """Squash the whole picture to 28x28: what skipping preprocessing looks like."""
    if not (image > _INK_THRESHOLD).any():
        raise PredictError("the image holds no ink: draw or load a digit first")
    return _resize(image, FIELD, FIELD)


def style_image(image: np.ndarray, style: str) -> np.ndarray:
    """The 28x28 field ``style``'s recipe makes of ``image``.

    Parameters
    ----------
    image : numpy.ndarray
        Float (H, W) in [0, 1], white ink on black, any size.
    style : str
        ``"mnist"`` or ``"digits"`` (see :data:`STYLES`).

    Raises
    ------
    PredictError
        When the image holds no ink.
    """
    if style == "digits":
        return digits_style(image)
    if style == "mnist":
        return mnist_style(image)
    raise ValueError(f"unknown style {style!r}; choose one of {', '.join(STYLES)}")


def recipe_numbers(style: str) -> dict[str, object]:
    """Every number ``style``'s recipe uses, for a reader without this module.

    An export's ``preprocess.json`` carries them, so its ``predict.py`` can
    repeat the recipe with numpy and Pillow alone.
    """
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}; choose one of {', '.join(STYLES)}")
    numbers: dict[str, object] = {
        "field_size": FIELD,
        "box_size": BOX,
        "ink_threshold": _INK_THRESHOLD,
        "invert_above": INVERT_ABOVE,
        "interpolation": "bilinear, antialiased (Pillow BILINEAR on float images)",
    }
    if style == "digits":
        numbers["low_size"] = DIGITS_LOW
    return numbers


def style_of(dataset: str) -> str:
    """The recipe that matches ``dataset`` (MNIST's for the MNIST family)."""
    return "digits" if dataset == "digits" else "mnist"
