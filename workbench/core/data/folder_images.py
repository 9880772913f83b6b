"""Reading one image file of the user's into a uint8 square, whatever its format.

Pillow decodes (torchvision 0.29 deprecates its own decoders for TorchCodec);
torchvision's resize and centre crop bring every image to one size. Handled:
grayscale and colour, palettes and alpha, CMYK JPEGs, 16-bit PNGs, and images
far larger than the training size (JPEGs decode at a reduced scale).
"""

from __future__ import annotations

import hashlib
import io
import os
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

GRAY_MODES = frozenset({"1", "L", "LA", "I", "I;16", "I;16B", "I;16L", "F"})
# Pillow refuses images above twice this many pixels as a decompression bomb;
# we accept up to this (a 10,000 x 10,000 photo is the user's own choice).
MAX_PIXELS = 200_000_000
# One image decoded (as Pillow holds it: 4 bytes a colour pixel) may take this
# much; decoding and resizing it peaks at about three times as much.
MAX_DECODED_BYTES = 256 * 2**20


class UnreadableImage(ValueError):
    """A file that is no image this program reads; the text says why."""


@dataclass(frozen=True, slots=True)
class DecodedImage:
    """One file brought to ``size`` x ``size``: uint8 (H, W) gray or (H, W, 3)."""

    pixels: np.ndarray
    digest: str  # SHA-256 of the file's bytes
    original: tuple[int, int]  # (height, width) as stored in the file

    @property
    def is_gray(self) -> bool:
        return self.pixels.ndim == 2


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_square(path: Path, size: int) -> DecodedImage:
    """Decode ``path``, resize its shorter side to ``size`` and centre-crop it.

    Raises
    ------
    UnreadableImage
        Empty, truncated, too large or not an image.
    """
    with decoding_limits():
        return _read_square(path, size)


def read_many(
    paths: list[Path],
    size: int,
    progress: Callable[[int, int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> Iterator[DecodedImage | UnreadableImage]:
    """:func:`read_square` of each path, in order, decoded on every core.

    Pillow decodes without holding the GIL, so threads scale with the cores.
    Yields the image, or the :class:`UnreadableImage` saying why not.

    Raises
    ------
    Cancelled
        ``cancel()`` returned True (checked between chunks).
    """
    workers = max(1, min(8, os.cpu_count() or 1))
    with decoding_limits(), ThreadPoolExecutor(workers) as pool:
        for start in range(0, len(paths), _CHUNK):
            if cancel is not None and cancel():
                raise Cancelled("reading the images was cancelled")
            chunk = paths[start : start + _CHUNK]
            yield from pool.map(lambda p: _read_or_why(p, size), chunk)
            if progress is not None:
                progress(start + len(chunk), len(paths))


class Cancelled(Exception):
    """The user stopped the decoding."""


_CHUNK = 128


def _read_or_why(path: Path, size: int) -> DecodedImage | UnreadableImage:
    try:
        return _read_square(path, size)
    except UnreadableImage as exc:
        return exc


@contextmanager
def decoding_limits() -> Iterator[None]:
    """Our pixel limit instead of Pillow's default (about 89 million pixels).

    Process-wide while it lasts (Pillow's limit and the warning filters are
    global): enter it once around many decodes, not in each thread.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        previous = Image.MAX_IMAGE_PIXELS
        Image.MAX_IMAGE_PIXELS = MAX_PIXELS // 2  # Pillow raises above twice this
        try:
            yield
        finally:
            Image.MAX_IMAGE_PIXELS = previous


def _read_square(path: Path, size: int) -> DecodedImage:
    data = read_image_bytes(path)
    image, original = decode_image(data, size)
    from torchvision.transforms.v2 import functional as F  # 1.5 s import: lazy

    if min(image.size) != size:
        image = F.resize(image, size)
    if image.size != (size, size):
        image = F.center_crop(image, [size, size])
    pixels = np.asarray(image, dtype=np.uint8).copy()
    return DecodedImage(pixels, file_digest(data), original)


def read_image_bytes(path: Path) -> bytes:
    """The file's bytes; :class:`UnreadableImage` when unreadable or empty."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UnreadableImage(f"cannot read the file ({exc.strerror or exc})") from None
    if not data:
        raise UnreadableImage("the file is empty (0 bytes)")
    return data


def decode_image(data: bytes, size: int) -> tuple[Image.Image, tuple[int, int]]:
    """The image, gray or RGB, and its stored (height, width).

    The one rule every reader of the user's images follows (check-data, a
    run, predict, the Draw tab). A JPEG may decode at a reduced scale that
    still covers ``size``. Call it inside :func:`decoding_limits`.

    Raises
    ------
    UnreadableImage
        Not an image, truncated, or larger than one image may be decoded.
    """
    try:
        image = Image.open(io.BytesIO(data))
        original = (image.height, image.width)  # before draft() scales it down
        # 1/2, 1/4 or 1/8 scale: a 10,000-pixel photo costs a fraction of a decode.
        image.draft(None, (size, size))
        _check_decoded_size(image)
        image.load()  # every pixel: a truncated file raises here
        return _to_gray_or_rgb(image), original
    except Image.DecompressionBombError:
        raise UnreadableImage(
            f"more than {MAX_PIXELS:,} pixels: too large to decode safely"
        ) from None
    except UnidentifiedImageError:
        # Pillow's own text names the in-memory buffer, not the file.
        raise UnreadableImage(
            "not a readable image (not an image format Pillow knows)"
        ) from None
    except UnreadableImage:
        raise
    except (OSError, SyntaxError, ValueError) as exc:
        raise UnreadableImage(f"not a readable image ({exc})") from None


def _check_decoded_size(image: Image.Image) -> None:
    """:class:`UnreadableImage` when ``image`` would take more than
    :data:`MAX_DECODED_BYTES` decoded (as Pillow holds it)."""
    width, height = image.size
    per_pixel = 1 if image.mode in ("1", "L", "P") else 2 if "16" in image.mode else 4
    need = width * height * per_pixel
    if need > MAX_DECODED_BYTES:
        raise UnreadableImage(
            f"{width:,}x{height:,} pixels take {need / 2**20:,.0f} MB decoded, over "
            f"the {MAX_DECODED_BYTES / 2**20:,.0f} MB one image may: scale it down"
        )


def _to_gray_or_rgb(image: Image.Image) -> Image.Image:
    if image.mode in ("I", "I;16", "I;16B", "I;16L"):
        # 16-bit: Pillow's convert("L") clips at 255 (a white image); scale instead.
        wide = np.asarray(image, dtype=np.float64)
        return Image.fromarray(np.clip(wide / 257.0, 0, 255).round().astype(np.uint8))
    if image.mode == "F":
        values = np.asarray(image, dtype=np.float64)
        top = values.max() if values.size and values.max() > 1.0 else 1.0
        return Image.fromarray(np.clip(values / top * 255, 0, 255).astype(np.uint8))
    if image.mode in ("L", "RGB"):
        return image  # a converted copy would double the memory a large one takes
    if image.mode in GRAY_MODES:
        return image.convert("L")
    if image.mode == "P" and "transparency" in image.info:
        image = image.convert("RGBA")
    return image.convert("RGB")  # CMYK, YCbCr, RGBA, P, ...


def as_channels(pixels: np.ndarray, channels: int) -> np.ndarray:
    """uint8 (C, H, W) with ``channels`` channels from (H, W) or (H, W, 3)."""
    if pixels.ndim == 2:
        return np.repeat(pixels[None], channels, axis=0)
    if channels == 1:  # a photo given to a grayscale model: Pillow's luminance
        gray = Image.fromarray(np.ascontiguousarray(pixels)).convert("L")
        return np.asarray(gray, dtype=np.uint8)[None]
    return pixels.transpose(2, 0, 1)
