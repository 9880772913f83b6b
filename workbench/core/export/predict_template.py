"""Classify pictures with the model exported beside this file.

ptcore-workbench's export wrote this script into the export folder. It needs
no workbench: only numpy, Pillow and one runtime, torch (for model.pt2 or
model.pt) or onnxruntime (for model.onnx)::

    python predict.py digit.png
    python predict.py photo.jpg other.png --top 5
    python predict.py digit.png --runtime onnx --json

A picture is prepared exactly as the workbench prepared its own: the recipe
and every number it uses are in preprocess.json, the class names in
labels.json. The exported model takes normalised float32 tensors of shape
(batch, channels, height, width) and returns one logit per class.

Exit status: 0 when every picture was classified; 2 when a picture, a model
file or a runtime cannot be used (one line on stderr says why).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

HERE = Path(__file__).resolve().parent
# torch.export's file first: TorchScript is deprecated, though it still loads.
TORCH_FILES = ("model.pt2", "model.pt")
ONNX_FILE = "model.onnx"
FAILED_MARKER = "VERIFICATION_FAILED.txt"
# Pillow refuses larger images as decompression bombs; the workbench allows this.
MAX_PIXELS = 100_000_000

Runner = Callable[[np.ndarray], np.ndarray]  # float32 (N, C, H, W) -> logits


class Refused(Exception):
    """A picture, file or runtime this script cannot use; the text says why."""


# ---------------------------------------------------------------- reading files


@contextmanager
def opened(path: Path) -> Iterator[Image.Image]:
    """The picture at ``path``, or :class:`Refused` with a one-line reason."""
    if not path.is_file():
        raise Refused(f"no image at {path}")
    try:
        with Image.open(path) as image:
            yield image
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise Refused(f"{path} is not an image this script can read: {exc}") from None


# ------------------------------------------------------- the "canvas" recipe
# Digit models: the picture becomes a 28x28 field, white ink on black, with the
# digit cropped, scaled and placed the way the training digits were made.


def read_drawing(path: Path, recipe: dict[str, Any]) -> np.ndarray:
    """The picture as float32 gray in [0, 1], white ink on black."""
    with opened(path) as image:
        gray = np.asarray(image.convert("L"), dtype=np.float32) / 255.0
    # The border is background in any sensible digit picture: a bright one
    # means dark ink on paper, which the model never saw.
    border = np.concatenate([gray[0], gray[-1], gray[:, 0], gray[:, -1]])
    if border.mean() > recipe["invert_above"]:
        gray = 1.0 - gray
    return gray


def resize(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """Bilinear resize of a float picture, antialiased when shrinking; in [0, 1].

    Pillow's BILINEAR on a 32-bit float image widens its triangle filter by the
    shrink factor: the same weights as the workbench's
    ``torch.nn.functional.interpolate(..., mode="bilinear", antialias=True)``.
    """
    picture = Image.fromarray(np.ascontiguousarray(image, dtype=np.float32))
    out = picture.resize((width, height), Image.Resampling.BILINEAR)
    return np.clip(np.asarray(out, dtype=np.float32), 0, 1)


def crop_to_ink(image: np.ndarray, threshold: float) -> np.ndarray:
    """The smallest rectangle holding every pixel brighter than ``threshold``."""
    inked = image > threshold
    rows = np.flatnonzero(inked.any(axis=1))
    cols = np.flatnonzero(inked.any(axis=0))
    if rows.size == 0:
        raise Refused("the image holds no ink: no digit to read")
    return image[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]


def mnist_style(image: np.ndarray, recipe: dict[str, Any]) -> np.ndarray:
    """MNIST's recipe: fit the ink into a 20x20 box, centre it by mass in 28x28."""
    size, box = recipe["field_size"], recipe["box_size"]
    digit = crop_to_ink(image, recipe["ink_threshold"])
    h, w = digit.shape
    scale = box / max(h, w)  # keeping the aspect ratio
    digit = resize(digit, max(1, round(h * scale)), max(1, round(w * scale)))
    h, w = digit.shape
    field = np.zeros((size, size), dtype=np.float32)
    top, left = (size - h) // 2, (size - w) // 2
    field[top : top + h, left : left + w] = digit
    # Move the centre of mass to the field's centre, as MNIST did, without
    # pushing ink over the edge.
    mass = field.sum()
    ys, xs = np.indices(field.shape)
    cy, cx = (ys * field).sum() / mass, (xs * field).sum() / mass
    centre = (size - 1) / 2
    dy, dx = round(centre - cy), round(centre - cx)
    dy = int(np.clip(dy, -top, size - top - h))
    dx = int(np.clip(dx, -left, size - left - w))
    return np.roll(field, (dy, dx), axis=(0, 1))


def digits_style(image: np.ndarray, recipe: dict[str, Any]) -> np.ndarray:
    """The UCI digits' recipe: the ink blurred to 8x8, shown in a 20x20 box."""
    size, box, low = recipe["field_size"], recipe["box_size"], recipe["low_size"]
    digit = crop_to_ink(image, recipe["ink_threshold"])
    small = resize(digit, low, low)
    small = small / max(float(small.max()), 1e-6)  # the brightest pixel is 1
    field = np.zeros((size, size), dtype=np.float32)
    start = (size - box) // 2
    field[start : start + box, start : start + box] = resize(small, box, box)
    return field


def canvas_pixels(path: Path, recipe: dict[str, Any]) -> np.ndarray:
    """float32 (C, 28, 28) in [0, 1]: the digit recipe, gray repeated to C."""
    styles = {"mnist": mnist_style, "digits": digits_style}
    field = styles[recipe["style"]](read_drawing(path, recipe), recipe)
    return np.repeat(field[None], recipe["channels"], axis=0)


# -------------------------------------------------------- the "image" recipe
# Photo models: the shorter side resized to the model's size, the middle
# cropped square, with the model's channels.


def as_gray_or_rgb(image: Image.Image) -> Image.Image:
    """8-bit gray or RGB, whatever the file stored (16-bit, float, palette...)."""
    if image.mode in ("I", "I;16", "I;16B", "I;16L"):
        # 16-bit: Pillow's convert("L") clips at 255 (a white image); scale.
        wide = np.asarray(image, dtype=np.float64)
        return Image.fromarray(np.clip(wide / 257.0, 0, 255).round().astype(np.uint8))
    if image.mode == "F":
        values = np.asarray(image, dtype=np.float64)
        top = values.max() if values.size and values.max() > 1.0 else 1.0
        return Image.fromarray(np.clip(values / top * 255, 0, 255).astype(np.uint8))
    if image.mode in ("1", "L", "LA"):
        return image.convert("L")
    if image.mode == "P" and "transparency" in image.info:
        image = image.convert("RGBA")
    return image.convert("RGB")


def photo_pixels(path: Path, recipe: dict[str, Any]) -> np.ndarray:
    """float32 (C, S, S) in [0, 1]: resized, centre-cropped, C channels."""
    size = recipe["size"]
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    with opened(path) as file:
        # A JPEG may decode at 1/2, 1/4 or 1/8 scale while that still covers
        # ``size``: the workbench reads its images the same way.
        file.draft(None, (size, size))
        file.load()  # every pixel: a truncated file fails here
        image = as_gray_or_rgb(file)
    width, height = image.size
    if min(width, height) != size:
        # The shorter side becomes ``size``; the longer keeps the aspect ratio
        # (rounded down, as torchvision does).
        short, long = min(width, height), max(width, height)
        longer = int(size * long / short)
        new = (size, longer) if width <= height else (longer, size)
        image = image.resize(new, Image.Resampling.BILINEAR)
        width, height = image.size
    if (width, height) != (size, size):
        top = round((height - size) / 2.0)
        left = round((width - size) / 2.0)
        image = image.crop((left, top, left + size, top + size))
    pixels = np.asarray(image, dtype=np.uint8)
    channels = recipe["channels"]
    if pixels.ndim == 2:  # gray: repeated to the model's channels
        pixels = np.repeat(pixels[None], channels, axis=0)
    elif channels == 1:  # colour for a gray model: Pillow's luminance
        pixels = np.asarray(image.convert("L"), dtype=np.uint8)[None]
    else:
        pixels = pixels.transpose(2, 0, 1)
    return pixels.astype(np.float32) / np.float32(255.0)


# ---------------------------------------------------------------- the model


def model_input(path: Path, recipe: dict[str, Any]) -> np.ndarray:
    """The (1, C, H, W) float32 tensor the model takes for the picture."""
    if recipe["recipe"] == "canvas":
        pixels = canvas_pixels(path, recipe)
    else:
        pixels = photo_pixels(path, recipe)
    # Per channel, in float32 like the training loaders: (x - mean) / std.
    mean = np.asarray(recipe["mean"], dtype=np.float32).reshape(-1, 1, 1)
    std = np.asarray(recipe["std"], dtype=np.float32).reshape(-1, 1, 1)
    return ((pixels - mean) / std)[None]


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def choose_runtime(wanted: str | None) -> tuple[str, Path]:
    """The runtime and model file to use: torch if it can, else onnxruntime."""
    torch_file = next((HERE / f for f in TORCH_FILES if (HERE / f).is_file()), None)
    onnx_file = HERE / ONNX_FILE if (HERE / ONNX_FILE).is_file() else None
    if wanted == "torch" or (wanted is None and torch_file and installed("torch")):
        if torch_file is None:
            raise Refused(f"no {' or '.join(TORCH_FILES)} in {HERE}")
        if not installed("torch"):
            raise Refused("torch is not installed: install it, or use --runtime onnx")
        return "torch", torch_file
    if wanted == "onnx" or (wanted is None and onnx_file):
        if onnx_file is None:
            raise Refused(f"no {ONNX_FILE} in {HERE}")
        if not installed("onnxruntime"):
            raise Refused("onnxruntime is not installed: pip install onnxruntime")
        return "onnx", onnx_file
    raise Refused(
        f"nothing to run in {HERE}: needs torch with {' or '.join(TORCH_FILES)}, "
        f"or onnxruntime with {ONNX_FILE}"
    )


def torch_runner(path: Path) -> Runner:
    import torch  # here: the folder needs only the runtime it runs on

    module: Callable[..., Any]
    if path.suffix == ".pt2":
        module = torch.export.load(str(path)).module()
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # TorchScript's notice
            scripted = torch.jit.load(str(path), map_location="cpu")
        module = scripted.eval()

    def run(x: np.ndarray) -> np.ndarray:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            logits = module(torch.from_numpy(x))
        return np.asarray(logits.float().numpy())

    return run


def onnx_runner(path: Path, input_name: str) -> Runner:
    import onnxruntime  # here: the folder needs only the runtime it runs on

    session = onnxruntime.InferenceSession(
        str(path), providers=["CPUExecutionProvider"]
    )

    def run(x: np.ndarray) -> np.ndarray:
        return np.asarray(session.run(None, {input_name: x})[0])

    return run


def load_runner(runtime: str, path: Path, recipe: dict[str, Any]) -> Runner:
    try:
        if runtime == "torch":
            return torch_runner(path)
        return onnx_runner(path, recipe["input_name"])
    except Exception as exc:  # a damaged file: say which, not a traceback
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise Refused(f"cannot load {path.name}: {reason}") from None


def softmax(logits: np.ndarray) -> np.ndarray:
    """Probabilities from logits (float64, stable: the largest logit is 0)."""
    shifted = logits.astype(np.float64) - logits.max()
    exp = np.exp(shifted)
    return exp / exp.sum()


# -------------------------------------------------------------- the command


def read_json(name: str) -> Any:
    try:
        return json.loads((HERE / name).read_text(encoding="utf-8"))
    except OSError:
        raise Refused(f"no {name} in {HERE}: it belongs beside this script") from None
    except ValueError as exc:
        raise Refused(f"{HERE / name} is damaged: {exc}") from None


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _number(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and bool(np.isfinite(value))
    )


def check_recipe(recipe: Any) -> dict[str, Any]:
    """``recipe`` (preprocess.json) if every field this script uses is sound."""
    if not isinstance(recipe, dict):
        raise Refused("preprocess.json must hold a JSON object")

    def need(key: str, ok: Callable[[Any], bool], what: str) -> Any:
        value = recipe.get(key)
        if not ok(value):
            raise Refused(f"preprocess.json: {key} must be {what}, not {value!r}")
        return value

    kind = need("recipe", lambda v: v in ("canvas", "image"), '"canvas" or "image"')
    need("input_name", lambda v: isinstance(v, str) and v, "the model input's name")
    channels = need("channels", _whole, "a whole number >= 1")
    for key in ("mean", "std"):
        need(
            key,
            lambda v: (
                isinstance(v, list) and len(v) == channels and all(map(_number, v))
            ),
            f"a list of one number per channel ({channels})",
        )
    need("std", lambda v: all(s > 0 for s in v), "above 0 (pixels are divided by it)")
    if kind == "image":
        need("size", _whole, "a whole number of pixels >= 1")
        return recipe
    style = need("style", lambda v: v in ("mnist", "digits"), '"mnist" or "digits"')
    sizes = (
        ("field_size", "box_size", "low_size")
        if style == "digits"
        else (
            "field_size",
            "box_size",
        )
    )
    for key in sizes:
        need(key, _whole, "a whole number of pixels >= 1")
    for key in ("ink_threshold", "invert_above"):
        need(key, _number, "a number")
    return recipe


def check_labels(labels: Any) -> list[str]:
    """``labels`` (labels.json) if it is a list of distinct class names."""
    if (
        not isinstance(labels, list)
        or not labels
        or not all(isinstance(name, str) for name in labels)
    ):
        raise Refused("labels.json must be a list of class names (strings)")
    if len(set(labels)) != len(labels):
        raise Refused("labels.json names a class twice")
    return labels


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Classify images with the model exported beside this script."
    )
    parser.add_argument("images", nargs="+", metavar="IMAGE")
    parser.add_argument(
        "--runtime",
        choices=("torch", "onnx"),
        help="torch (model.pt2, else model.pt) or onnx (model.onnx); "
        "default: torch when installed",
    )
    parser.add_argument("--top", type=int, default=3, help="classes to show")
    parser.add_argument(
        "--json",
        action="store_true",
        help='one JSON object per image: {"image", "label", "probabilities"}',
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Print each image's class; 2 when anything could not be used."""
    args = parse_args(argv)
    try:
        recipe = check_recipe(read_json("preprocess.json"))
        labels = check_labels(read_json("labels.json"))
        runtime, model_file = choose_runtime(args.runtime)
        run = load_runner(runtime, model_file, recipe)
    except Refused as exc:
        sys.stderr.write(f"predict.py: {exc}\n")
        return 2
    if (HERE / FAILED_MARKER).exists():
        sys.stderr.write(f"warning: see {FAILED_MARKER}: this export did not verify\n")
    failed = False
    for name in args.images:
        try:
            probs = softmax(run(model_input(Path(name), recipe))[0])
        except Refused as exc:
            sys.stderr.write(f"predict.py: {exc}\n")
            failed = True
            continue
        if len(probs) != len(labels):
            sys.stderr.write(
                f"predict.py: labels.json names {len(labels)} classes, the model "
                f"gives {len(probs)} outputs: the files are from different exports\n"
            )
            return 2
        best = int(np.argmax(probs))
        if args.json:
            record = {
                "image": name,
                "label": labels[best],
                "index": best,
                "probabilities": dict(zip(labels, probs.tolist(), strict=True)),
                "runtime": runtime,
                "model": model_file.name,
            }
            sys.stdout.write(json.dumps(record) + "\n")
            continue
        order = np.argsort(probs)[::-1][: args.top]
        ranked = "  ".join(f"{labels[i]} {100 * probs[i]:.1f}%" for i in order)
        sys.stdout.write(f"{name}: {labels[best]}   ({ranked})\n")
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
