"""Small shared renderings: gray images, percentages, durations, counts, names."""

from __future__ import annotations

import math
from datetime import datetime

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPixmap

from workbench.core.start_plan import RESUME_SAFE, Plan, StartKind


def to_uint8(array: np.ndarray) -> np.ndarray:
    """A C-contiguous uint8 copy of a 2-D float [0, 1] or uint8 array."""
    a = np.asarray(array)
    a = np.squeeze(a) if a.ndim > 2 else a
    if a.ndim != 2 or a.size == 0:
        raise ValueError(f"expected a 2-D image, got shape {np.shape(array)}")
    if a.dtype == np.uint8:
        return np.ascontiguousarray(a).copy()
    a = np.nan_to_num(a.astype(np.float32), nan=0.0)
    return np.ascontiguousarray(np.rint(np.clip(a, 0.0, 1.0) * 255.0).astype(np.uint8))


def gray_qimage(pixels: np.ndarray) -> QImage:
    """A QImage that owns a copy of a 2-D uint8 array (no dangling buffer)."""
    h, w = pixels.shape
    return QImage(pixels.data, w, h, pixels.strides[0], QImage.Format_Grayscale8).copy()


def gray_pixmap(pixels: np.ndarray, scale: int = 1) -> QPixmap:
    """A uint8 (H, W) or (H, W, 3) image as a pixmap, scaled nearest-neighbour."""
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    h, w = pixels.shape[:2]
    if pixels.ndim == 3:
        image = QImage(pixels.data, w, h, 3 * w, QImage.Format.Format_RGB888)
    else:
        image = QImage(pixels.data, w, h, w, QImage.Format.Format_Grayscale8)
    # scaled() makes a new image, so the pixmap no longer borrows ``pixels``.
    image = image.scaled(
        w * scale,
        h * scale,
        Qt.AspectRatioMode.IgnoreAspectRatio,
        Qt.TransformationMode.FastTransformation,
    )
    return QPixmap.fromImage(image)


def percent(value: float) -> str:
    """``97.3%``, or ``n/a`` for NaN (an empty validation split)."""
    return "n/a" if math.isnan(value) else f"{100 * value:.1f}%"


def rate(images_per_s: float) -> str:
    """``1,234`` images a second, or an en dash when none was measured (NaN)."""
    return f"{images_per_s:,.0f}" if math.isfinite(images_per_s) else "\u2013"


def trainable_share(trainable: int, total: int) -> str:
    """``99.5%``; a small share keeps its digits (1,539 of 11 M: ``0.014%``)."""
    share = 100 * trainable / total
    if trainable == 0 or share >= 0.1:
        # One decimal: 99.5% trainable must not read as "100%".
        return f"{share:.1f}%" if share < 99.95 or trainable == total else "99.9%"
    return f"{share:.2g}%" if share >= 0.01 else "<0.01%"


def validation_summary(accuracy: float, loss: float = math.nan) -> str:
    """``val accuracy 97.3%, val loss 0.0812``; what is NaN is left out.

    An epoch with no validation (an empty split, a fine-tune that skipped it)
    reads ``no validation`` rather than ``val loss nan``.
    """
    parts = []
    if math.isfinite(accuracy):
        parts.append(f"val accuracy {percent(accuracy)}")
    if math.isfinite(loss):
        parts.append(f"val loss {loss:.4f}")
    return ", ".join(parts) or "no validation"


def duration(seconds: float) -> str:
    """``m:ss``, or ``h:mm:ss`` from an hour on; an en dash when unknown."""
    if not math.isfinite(seconds) or seconds < 0:
        return "\u2013"
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def plural(count: int, word: str) -> str:
    """``1 image``, ``1,234 images``: a count and its noun, plural unless one."""
    return f"{count:,} {word}" + ("" if count == 1 else "s")


def local_time(iso: str) -> str:
    """An ISO time as local ``YYYY-MM-DD HH:MM`` (the text itself if unparsable)."""
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    return when.astimezone().strftime("%Y-%m-%d %H:%M")


# Config fields by the names the panels give them.
SETTING_LABELS = {
    "augment": "Augment",
    "batch_size": "Batch size",
    "dataset": "Dataset",
    "frozen": "the freeze selection",
    "image_size": "Image size",
    "lr": "Learning rate",
    "model": "Model",
    "momentum": "Momentum",
    "optimizer": "Optimizer",
    "replay": "Replay images",
    "schedule": "Schedule",
    "seed": "Seed",
    "val_fraction": "Validation share",
    "weight_decay": "Weight decay",
    "weights": "Weights",
}


def setting_label(name: str) -> str:
    """A config field as the panels name it (``batch_size``: ``Batch size``)."""
    return SETTING_LABELS.get(name) or name.replace("_", " ").capitalize()


def why_new_run(plan: Plan) -> str:
    """Why Start begins a new run, in the panels' words ("" when it continues)."""
    if plan.kind is not StartKind.NEW or plan.finished or not plan.changed:
        return plan.why_new
    unsafe = [setting_label(c) for c in plan.changed if c not in RESUME_SAFE]
    return f"{', '.join(unsafe)} changed: a run continues only with its own settings"
