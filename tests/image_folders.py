"""Small folders of labelled images, written by the tests that need them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image


def shape_image(
    label: int, rng: np.random.Generator, size: int, mode: str
) -> Image.Image:
    """A learnable picture: class ``label`` is a bright bar at its own position."""
    pixels = rng.integers(0, 60, (size, size, 3), dtype=np.uint8)
    band = max(2, size // 8)
    start = (label * band * 2) % max(1, size - band)
    if label % 2:
        pixels[start : start + band, :, :] = 230
    else:
        pixels[:, start : start + band, :] = 230
    pixels[..., label % 3] //= 2  # classes differ a little in colour too
    image = Image.fromarray(pixels)
    return image.convert(mode) if mode != "RGB" else image


def make_folder(
    root: Path,
    classes: list[str] | int,
    per_class: int = 12,
    *,
    size: int = 20,
    mode: str = "RGB",
    split: bool = False,
    seed: int = 0,
) -> Path:
    """Write ``per_class`` PNG/JPEG images per class; ``split``: train/ and val/."""
    rng = np.random.default_rng(seed)
    names = (
        [f"class{i:02d}" for i in range(classes)]
        if isinstance(classes, int)
        else classes
    )
    for label, name in enumerate(names):
        for index in range(per_class):
            if split:
                part = "val" if index % 4 == 0 else "train"
                folder = root / part / name
            else:
                folder = root / name
            folder.mkdir(parents=True, exist_ok=True)
            suffix = "png" if index % 2 else "jpg"
            shape_image(label, rng, size, mode).save(folder / f"{index:03d}.{suffix}")
    return root
