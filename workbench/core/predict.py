"""From a picture of a digit to class probabilities, the way the data was made.

MNIST digits were cropped to their ink, scaled into a 20x20 box keeping the
aspect ratio, and placed by centre of mass in a 28x28 field. A drawing or a
photo must go through the same steps, or the model sees something it never
trained on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from workbench.core.data import DATASET_INFO

_INK_THRESHOLD = 0.1


class PredictError(ValueError):
    """An image that cannot be read or holds no digit."""


@dataclass(frozen=True, slots=True)
class Prediction:
    """Class probabilities for one image; ``top`` is sorted, most likely first."""

    probabilities: tuple[float, ...]
    class_names: tuple[str, ...]

    @property
    def label(self) -> int:
        """Index of the most likely class."""
        return int(np.argmax(self.probabilities))

    def top(self, k: int = 3) -> list[tuple[str, float]]:
        """The ``k`` most likely (class name, probability) pairs."""
        order = np.argsort(self.probabilities)[::-1][:k]
        return [(self.class_names[i], self.probabilities[i]) for i in order]


def load_image(path: str | Path) -> np.ndarray:
    """Read an image file as float32 in [0, 1], white ink on black.

    Dark-on-light pictures (a scan, a photo of paper) are inverted, judged by
    the border, which is background in any sensible digit picture.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            gray = np.asarray(img.convert("L"), dtype=np.float32) / 255.0
    except FileNotFoundError:
        raise PredictError(f"no image at {path}") from None
    except (UnidentifiedImageError, OSError) as exc:
        raise PredictError(
            f"{path} is not an image this program can read: {exc}"
        ) from exc
    border = np.concatenate([gray[0], gray[-1], gray[:, 0], gray[:, -1]])
    if border.mean() > 0.5:
        gray = 1.0 - gray
    return gray


def _resize(image: np.ndarray, height: int, width: int) -> np.ndarray:
    tensor = torch.from_numpy(np.ascontiguousarray(image))[None, None]
    out = nn.functional.interpolate(
        tensor,
        size=(height, width),
        mode="bilinear",
        antialias=True,
        align_corners=False,
    )
    return out[0, 0].clamp(0, 1).numpy()


def _crop_to_ink(image: np.ndarray) -> np.ndarray:
    rows = np.flatnonzero((image > _INK_THRESHOLD).any(axis=1))
    cols = np.flatnonzero((image > _INK_THRESHOLD).any(axis=0))
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
    return _resize(image, 28, 28)


def to_model_input(image28: np.ndarray, dataset: str) -> torch.Tensor:
    """A (1, 1, 28, 28) tensor normalised with ``dataset``'s statistics."""
    info = DATASET_INFO[dataset]
    tensor = torch.as_tensor(image28, dtype=torch.float32)
    return ((tensor - info.mean) / info.std)[None, None]


def preprocess(image: np.ndarray, dataset: str) -> torch.Tensor:
    """The recipe that matches ``dataset``, ready for the model."""
    styled = digits_style(image) if dataset == "digits" else mnist_style(image)
    return to_model_input(styled, dataset)


def predict(
    model: nn.Module, batch: torch.Tensor, class_names: tuple[str, ...]
) -> list[Prediction]:
    """Probabilities for each image of ``batch`` with the model in ``eval()`` mode.

    The model's own training flag is restored afterwards.
    """
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            probs = torch.softmax(model(batch.to(device)).float(), dim=1).cpu()
    finally:
        model.train(was_training)
    return [Prediction(tuple(row.tolist()), class_names) for row in probs]
