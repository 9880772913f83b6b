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


class PredictError(ValueError):
    """An image that cannot be read or holds no digit."""


def _resize(image: np.ndarray, height: int, width: int) -> np.ndarray:
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
    digit = _fit_box(_crop_to_ink(image), 20)
    h, w = digit.shape
    field = np.zeros((28, 28), dtype=np.float32)
    top, left = (28 - h) // 2, (28 - w) // 2
    field[top : top + h, left : left + w] = digit
    mass = field.sum()
    ys, xs = np.indices(field.shape)
    cy, cx = (ys * field).sum() / mass, (xs * field).sum() / mass
    # Shift the centre of mass to the field's centre, as MNIST did.
    dy, dx = round(13.5 - cy), round(13.5 - cx)
    dy = int(np.clip(dy, -top, 28 - top - h))
    dx = int(np.clip(dx, -left, 28 - left - w))
    return np.roll(field, (dy, dx), axis=(0, 1))


def digits_style(image: np.ndarray) -> np.ndarray:
    """The UCI digits recipe: ink fitted to the box, blurred to 8x8, shown at 28x28.

    Mirrors how ``data.py`` brings the 8x8 digits to 28x28: the 8x8 picture is
    scaled into a 20x20 box centred in the field.
    """
    digit = _crop_to_ink(image)
    low = _resize(digit, 8, 8)
    low = low / max(float(low.max()), 1e-6)
    field = np.zeros((28, 28), dtype=np.float32)
    field[4:24, 4:24] = _resize(low, 20, 20)
    return field


def naive_resize(image: np.ndarray) -> np.ndarray:
    """Squash the whole picture to 28x28: what skipping preprocessing looks like."""
    if not (image > _INK_THRESHOLD).any():
        raise PredictError("the image holds no ink: draw or load a digit first")
    return _resize(image, 28, 28)


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


def style_of(dataset: str) -> str:
    """The recipe that matches ``dataset`` (MNIST's for the MNIST family)."""
    return "digits" if dataset == "digits" else "mnist"
