"""The user's own drawings, kept as a small labelled dataset on disk.

Each sample is two PNG files in a per-user folder: the stroke image exactly as
drawn (white ink on black, any size) and the 28x28 field the model was shown,
plus one entry in ``samples.json``. The 28x28 field is made again from the
stroke image when a run wants another dataset's recipe (``digits`` instead of
``mnist``), so a drawing serves models trained on either.

Every write goes through :func:`workbench.core.atomic_files.write_atomically`: a crash
leaves the previous index, never a broken one.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs
import torch
from PIL import Image

from workbench.core.atomic_files import write_atomically
from workbench.core.data.preprocess import STYLES, PredictError, style_image
from workbench.core.data.registry import DataError, ImageArrays

log = logging.getLogger(__name__)

MY_DIGITS_ENV = "PTCORE_MY_DIGITS_DIR"
INDEX_NAME = "samples.json"
INDEX_FORMAT = 1
NUM_CLASSES = 10
# Every fifth drawing of a class is held out for validation (the 5th, 10th, ...).
HOLD_OUT_EVERY = 5


def default_folder() -> Path:
    """``$PTCORE_MY_DIGITS_DIR``, else ``<user data>/ptcore-workbench/my-digits``."""
    override = os.environ.get(MY_DIGITS_ENV)
    if override:
        return Path(override).expanduser()
    return platformdirs.user_data_path("ptcore-workbench") / "my-digits"


@dataclass(frozen=True, slots=True)
class DigitSample:
    """One saved drawing.

    Attributes
    ----------
    id : str
        File stem of the sample's images; unique in its folder.
    label : int
        The digit the user says it is (0-9).
    created : str
        ISO 8601 time it was added (UTC).
    style : str
        Recipe of the stored 28x28 field (``"mnist"`` or ``"digits"``).
    """

    id: str
    label: int
    created: str
    style: str


def _png_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array, mode="L").save(buffer, format="PNG")
    return buffer.getvalue()


def _to_uint8(image: np.ndarray) -> np.ndarray:
    if image.dtype == np.uint8:
        return np.ascontiguousarray(image)
    return np.ascontiguousarray(np.clip(np.rint(image * 255.0), 0, 255), np.uint8)


def _check_id(value: object) -> str:
    """A sample id names its files: a plain file name, never a path."""
    if not isinstance(value, str) or not re.fullmatch(r"[\w-][\w.-]*", value):
        raise DataError(f"an id must be a file name, got {value!r}")
    return value


def _check_text(name: str, value: object, allowed: tuple[str, ...] = ()) -> str:
    if not isinstance(value, str) or (allowed and value not in allowed):
        raise DataError(f"a {name} must be {' or '.join(allowed) or 'text'}: {value!r}")
    return value


def _check_label(label: object) -> int:
    if isinstance(label, bool) or not isinstance(label, int | np.integer):
        raise DataError(f"a digit label must be a whole number 0-9, got {label!r}")
    if not 0 <= int(label) < NUM_CLASSES:
        raise DataError(f"a digit label must be 0-9, got {label}")
    return int(label)


class MyDigits:
    """The drawings in one folder: add, list, relabel, delete, and load as data.

    Parameters
    ----------
    folder : str or Path, optional
        Where the samples live; None means :func:`default_folder`. Created on
        the first :meth:`add`.
    """

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = Path(folder).expanduser() if folder else default_folder()

    # ------------------------------------------------------------------ reading

    def samples(self) -> list[DigitSample]:
        """Every sample, oldest first.

        Raises
        ------
        DataError
            When the index exists but cannot be read; it is left untouched so
            nothing is lost (move it away to start afresh).
        """
        path = self.folder / INDEX_NAME
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise DataError(f"cannot read {path}: {exc.strerror or exc}") from exc
        try:
            entries = json.loads(raw.decode("utf-8"))["samples"]
            if not isinstance(entries, list):
                raise TypeError(f"samples is {type(entries).__name__}, not a list")
            samples = [
                DigitSample(
                    id=_check_id(e["id"]),
                    label=_check_label(e["label"]),
                    created=_check_text("created", e["created"]),
                    style=_check_text("style", e.get("style", "mnist"), STYLES),
                )
                for e in entries
            ]
            ids = [s.id for s in samples]
            twice = sorted({i for i in ids if ids.count(i) > 1})
            if twice:
                raise ValueError(f"id {twice[0]} is listed twice")
        except (ValueError, KeyError, TypeError, DataError, RecursionError) as exc:
            reason = str(exc) if not isinstance(exc, RecursionError) else "too deep"
            raise DataError(
                f"{path} is damaged ({reason}); it was left as it is: move it away "
                "to start a new collection (your drawings stay in the folder)"
            ) from None
        return samples

    def __len__(self) -> int:
        return len(self.samples())

    def counts(self) -> list[int]:
        """Number of drawings of each digit 0-9."""
        counts = [0] * NUM_CLASSES
        for sample in self.samples():
            counts[sample.label] += 1
        return counts

    def stroke_image(self, sample_id: str) -> np.ndarray:
        """The drawing as saved: uint8 (H, W), white ink on black."""
        return self._read_png(self.folder / f"{sample_id}.png")

    def field(self, sample_id: str) -> np.ndarray:
        """The stored 28x28 field (uint8) the model was shown when it was added."""
        path = self.folder / f"{sample_id}-28x28.png"
        field = self._read_png(path)
        if field.shape != (28, 28):
            raise DataError(f"a saved drawing is {field.shape}, not 28x28: {path}")
        return field

    def field_in_style(self, sample: DigitSample, style: str) -> np.ndarray:
        """The 28x28 uint8 field in ``style``: stored, or made from the strokes."""
        if sample.style == style:
            return self.field(sample.id)
        image = self.stroke_image(sample.id).astype(np.float32) / 255.0
        try:
            return _to_uint8(style_image(image, style))
        except PredictError as exc:  # a blank or damaged stroke image
            raise DataError(f"drawing {sample.id} cannot be prepared: {exc}") from exc

    def arrays(self, style: str = "mnist") -> ImageArrays:
        """The drawings as a train/validation split, fields in ``style``.

        Within each digit, every :data:`HOLD_OUT_EVERY`-th drawing (in the order
        they were added) is held out for validation, so the split never changes
        when drawings are added and needs no random seed.

        Raises
        ------
        DataError
            When there are no drawings yet or a sample's files are missing.
        """
        if style not in STYLES:
            raise DataError(f"unknown style {style!r}; choose one of {STYLES}")
        samples = self.samples()
        if not samples:
            raise DataError(
                "my-digits has no drawings yet: draw digits in the Draw tab and "
                f"add them with 'Add to my digits' (folder: {self.folder})"
            )
        seen = [0] * NUM_CLASSES
        split: dict[str, tuple[list[np.ndarray], list[int]]] = {
            "train": ([], []),
            "test": ([], []),
        }
        for sample in samples:
            seen[sample.label] += 1
            held_out = seen[sample.label] % HOLD_OUT_EVERY == 0
            images, labels = split["test" if held_out else "train"]
            images.append(self.field_in_style(sample, style))
            labels.append(sample.label)

        def tensors(name: str) -> tuple[torch.Tensor, torch.Tensor]:
            images, labels = split[name]
            if not images:
                return (
                    torch.zeros((0, 28, 28), dtype=torch.uint8),
                    torch.zeros((0,), dtype=torch.int64),
                )
            return (
                torch.from_numpy(np.stack(images)),
                torch.tensor(labels, dtype=torch.int64),
            )

        return ImageArrays(*tensors("train"), *tensors("test"))

    def all_arrays(self, style: str = "mnist") -> tuple[torch.Tensor, torch.Tensor]:
        """Every drawing (no split): uint8 images (N, 28, 28) and int64 labels."""
        samples = self.samples()
        if not samples:
            return torch.zeros((0, 28, 28), torch.uint8), torch.zeros(0, torch.int64)
        images = np.stack([self.field_in_style(s, style) for s in samples])
        labels = torch.tensor([s.label for s in samples], dtype=torch.int64)
        return torch.from_numpy(images), labels

    def examples(
        self, style: str = "mnist", per_class: int = 2
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The first ``per_class`` drawings of each digit, fields in ``style``.

        Cheap for a preview: only these drawings are read (and, if saved in
        another recipe, prepared again). Returns uint8 images (N, 28, 28) and
        int64 labels, digit by digit.
        """
        chosen: list[DigitSample] = []
        seen = [0] * NUM_CLASSES
        for sample in self.samples():
            if seen[sample.label] < per_class:
                seen[sample.label] += 1
                chosen.append(sample)
        chosen.sort(key=lambda s: s.label)
        if not chosen:
            return torch.zeros((0, 28, 28), torch.uint8), torch.zeros(0, torch.int64)
        images = np.stack([self.field_in_style(s, style) for s in chosen])
        labels = torch.tensor([s.label for s in chosen], dtype=torch.int64)
        return torch.from_numpy(images), labels

    # ------------------------------------------------------------------ writing

    def add(
        self,
        stroke_image: np.ndarray,
        label: int,
        style: str = "mnist",
        *,
        field: np.ndarray | None = None,
    ) -> DigitSample:
        """Save a drawing with its label; returns the new sample.

        Parameters
        ----------
        stroke_image : numpy.ndarray
            (H, W) white ink on black, uint8 or float in [0, 1].
        label : int
            The digit it shows.
        style : str
            Recipe for the stored 28x28 field.
        field : numpy.ndarray, optional
            The 28x28 field to store as it is, for a picture that already is a
            ``style`` model input (a validation image); None makes it from
            ``stroke_image`` with ``style``'s recipe.

        Raises
        ------
        DataError
            Bad label, an empty drawing, or the folder cannot be written.
        """
        label = _check_label(label)
        if stroke_image.ndim != 2:
            raise DataError(f"a drawing must be 2-D (H, W), got {stroke_image.shape}")
        strokes = _to_uint8(stroke_image)
        if field is not None:
            if field.shape != (28, 28):
                raise DataError(f"a field must be 28x28, got {field.shape}")
            field = _to_uint8(field)
        else:
            try:
                styled = style_image(strokes.astype(np.float32) / 255.0, style)
            except PredictError as exc:
                raise DataError(f"nothing to save: {exc}") from exc
            field = _to_uint8(styled)
        samples = self.samples()  # before writing: a damaged index stops here
        now = datetime.now(UTC)
        sample = DigitSample(
            id=f"{now:%Y%m%d-%H%M%S}-{label}-{secrets.token_hex(3)}",
            label=label,
            created=now.isoformat(timespec="seconds"),
            style=style,
        )
        self._write(f"{sample.id}.png", _png_bytes(strokes))
        self._write(f"{sample.id}-28x28.png", _png_bytes(field))
        self._write_index([*samples, sample])
        return sample

    def relabel(self, sample_id: str, label: int) -> DigitSample:
        """Change a sample's label."""
        label = _check_label(label)
        samples = self.samples()
        for i, sample in enumerate(samples):
            if sample.id == sample_id:
                samples[i] = DigitSample(sample.id, label, sample.created, sample.style)
                self._write_index(samples)
                return samples[i]
        raise DataError(f"no drawing {sample_id!r} in {self.folder}")

    def delete(self, sample_id: str) -> None:
        """Remove a sample from the index, then its files."""
        samples = self.samples()
        kept = [s for s in samples if s.id != sample_id]
        if len(kept) == len(samples):
            raise DataError(f"no drawing {sample_id!r} in {self.folder}")
        self._write_index(kept)
        for name in (f"{sample_id}.png", f"{sample_id}-28x28.png"):
            try:
                (self.folder / name).unlink()
            except OSError as exc:
                log.warning("could not delete %s: %s", name, exc)

    # ------------------------------------------------------------------ helpers

    def _read_png(self, path: Path) -> np.ndarray:
        try:
            with Image.open(path) as img:
                return np.asarray(img.convert("L"), dtype=np.uint8).copy()
        except FileNotFoundError:
            raise DataError(f"a saved drawing is missing: {path}") from None
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
            # UnidentifiedImageError is an OSError; SyntaxError: a broken PNG chunk
            raise DataError(f"a saved drawing cannot be read: {path}: {exc}") from exc

    def _write(self, name: str, data: bytes) -> None:
        try:
            write_atomically(self.folder / name, lambda f: f.write(data))
        except OSError as exc:
            raise DataError(
                f"cannot save to {self.folder}: {exc.strerror or exc}"
            ) from exc

    def _write_index(self, samples: list[DigitSample]) -> None:
        data: dict[str, Any] = {
            "format": INDEX_FORMAT,
            "samples": [asdict(s) for s in samples],
        }
        text = json.dumps(data, indent=1) + "\n"
        self._write(INDEX_NAME, text.encode("utf-8"))
