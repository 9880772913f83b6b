"""Training-data augmentation: random crops, flips, small rotations, colour jitter.

Two implementations of the same four choices (``config.AUGMENTATIONS``):

- :class:`BatchAugment`, the fast path: a whole normalised batch on its own device,
  each image with its *own* random crop, flip, angle and jitter (torchvision's
  random transforms, given a batch, apply one set of parameters to every image).
  Geometry is one batched affine grid (``affine_grid`` + ``grid_sample``), the
  flip a per-sample ``torch.where``, the jitter torchvision's colour formulas with
  per-sample factors. Its random numbers come from a generator seeded by
  :func:`batch_generator` ``(seed, epoch, batch)``, never from the global RNG that
  model initialisation and dropout use, so a run is reproducible and a resumed
  epoch gets the same augmentations as an uninterrupted one.
- :func:`augment_transform`, the per-sample ``DataLoader`` path: the equivalent
  ``torchvision.transforms.v2`` transforms for one PIL image. Their randomness is
  torchvision's (torch's global RNG of the process that runs them: each worker's
  own, or the main process's with ``num_workers=0``), so it is neither seeded per
  batch nor bit-equal to the fast path; the distributions are the same.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch.nn import functional as F

if TYPE_CHECKING:
    from torchvision.transforms import v2

from workbench.core.config import AUGMENTATIONS

CROP_SCALE = (0.7, 1.0)
"""Random resized crop: the share of the image's area a crop keeps."""
CROP_RATIO = (3 / 4, 4 / 3)
"""Random resized crop: the range of a crop's width / height."""
MAX_DEGREES = 15.0
"""Small rotation: angles are drawn uniformly from ``±MAX_DEGREES``."""
JITTER = 0.4
"""Colour jitter: brightness, contrast and saturation factors in ``1 ± JITTER``."""

_CROP_ATTEMPTS = 10  # as torchvision's RandomResizedCrop
# Mixed into each batch's seed so augmentation never shares a stream with the
# epoch order (which hashes [seed, epoch]).
_STREAM = 0xA06
# ITU-R 601-2 luma, as torchvision's rgb_to_grayscale.
_GRAY_WEIGHTS = torch.tensor([0.2989, 0.587, 0.114])
_TITLES = {
    "crop": "Random resized crop",
    "flip": "Horizontal flip",
    "rotate": f"Small rotation (±{MAX_DEGREES:g}°)",
    "jitter": "Colour jitter",
}


def title(choice: str) -> str:
    """The human title of one augmentation choice, for menus and check boxes."""
    try:
        return _TITLES[choice]
    except KeyError:
        raise ValueError(f"unknown augmentation {choice!r}") from None


def validate(choices: Iterable[str]) -> tuple[str, ...]:
    """``choices`` as a tuple, in the order given, checked.

    Raises
    ------
    ValueError
        A choice not in ``config.AUGMENTATIONS``, or one named twice.
    """
    chosen = tuple(choices)
    unknown = [c for c in chosen if c not in AUGMENTATIONS]
    if unknown:
        raise ValueError(
            f"unknown augmentation {unknown[0]!r}: choose from "
            f"{', '.join(AUGMENTATIONS)}"
        )
    if len(set(chosen)) != len(chosen):
        raise ValueError("each augmentation may be chosen once")
    return chosen


def describe(choices: Iterable[str]) -> str:
    """One phrase for messages: ``"no augmentation"``, ``"horizontal flip and ..."``.

    The choices are named in ``config.AUGMENTATIONS`` order, whatever order given.
    """
    chosen = set(validate(choices))
    names = [_TITLES[c].lower() for c in AUGMENTATIONS if c in chosen]
    if not names:
        return "no augmentation"
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


def batch_generator(seed: int, epoch: int, batch: int) -> torch.Generator:
    """The CPU generator batch ``batch`` of epoch ``epoch`` draws its parameters from.

    A function of the three numbers alone, so a resumed epoch redraws exactly the
    augmentations an uninterrupted one drew.
    """
    # torch's CPU generator keeps only 32 bits of a seed: hash, do not concatenate.
    state = np.random.SeedSequence([seed, epoch, batch, _STREAM]).generate_state(1)
    return torch.Generator().manual_seed(int(state[0]))


def _uniform(
    generator: torch.Generator, shape: tuple[int, ...], low: float, high: float
) -> torch.Tensor:
    # Every random number of BatchAugment is drawn here: on the CPU (the same
    # numbers whatever the device) and from the batch's own generator.
    return (
        torch.rand(shape, generator=generator, dtype=torch.float64)
        .mul_(high - low)
        .add_(low)
    )


def _per_channel(values: float | Sequence[float]) -> tuple[float, ...]:
    return (float(values),) if isinstance(values, int | float) else tuple(values)


class BatchAugment:
    """Augment a normalised float batch ``(B, C, H, W)`` on its own device.

    Each image gets its own random parameters. Order: crop, rotation, flip,
    jitter. Pixels a rotation brings in from outside are black (0 before
    normalisation), as with torchvision's ``RandomRotation(fill=0)``.

    Parameters
    ----------
    choices : iterable of str
        Names from ``config.AUGMENTATIONS``; empty means the identity.
    mean, std : float or sequence of float
        The normalisation of the batches, one value per channel (0..1 scale):
        jitter acts on pixel values, so it undoes it and redoes it.
    """

    def __init__(
        self,
        choices: Iterable[str],
        mean: float | Sequence[float],
        std: float | Sequence[float],
    ) -> None:
        self.choices = validate(choices)
        self.mean = _per_channel(mean)
        self.std = _per_channel(std)
        if len(self.mean) != len(self.std):
            raise ValueError("one mean and one std per channel")

    def __bool__(self) -> bool:
        return bool(self.choices)

    def __repr__(self) -> str:
        return f"BatchAugment({list(self.choices)!r})"

    def __call__(
        self,
        x: torch.Tensor,
        generator: torch.Generator,
        rows: tuple[int, int] | None = None,
    ) -> torch.Tensor:
        """Return an augmented copy of ``x`` (``x`` itself when there are no choices).

        Parameters
        ----------
        x : torch.Tensor
            Float ``(B, C, H, W)``, normalised with ``mean`` and ``std``.
        generator : torch.Generator
            CPU generator all parameters are drawn from (see
            :func:`batch_generator`).
        rows : (int, int), optional
            ``(start, total)`` when ``x`` is rows ``start..start+B`` of a batch
            of ``total`` (one process's share of it): the parameters of the
            whole batch are drawn and these rows get theirs, so several
            processes augment exactly as one does.

        Returns
        -------
        torch.Tensor
            Same shape, dtype and device as ``x``.
        """
        if x.dim() != 4 or not x.is_floating_point():
            raise ValueError("x must be a float tensor of shape (B, C, H, W)")
        if len(self.mean) not in (1, x.shape[1]):
            raise ValueError(
                f"x has {x.shape[1]} channels, the statistics {len(self.mean)}"
            )
        if not self.choices or len(x) == 0:
            return x
        start, total = rows if rows is not None else (0, len(x))
        if not 0 <= start <= total - len(x):
            raise ValueError(f"rows {rows} do not hold a batch of {len(x)}")
        part = slice(start, start + len(x))
        crop, rotate = "crop" in self.choices, "rotate" in self.choices
        if crop or rotate:
            x = self._geometry(x, generator, total, part, crop=crop, rotate=rotate)
        if "flip" in self.choices:
            x = self._flip(x, generator, total, part)
        if "jitter" in self.choices:
            x = self._jitter(x, generator, total, part)
        return x

    # ------------------------------------------------------------- geometry

    def _geometry(
        self,
        x: torch.Tensor,
        generator: torch.Generator,
        total: int,
        part: slice,
        *,
        crop: bool,
        rotate: bool,
    ) -> torch.Tensor:
        n, _c, h, w = x.shape
        if crop:
            boxes = crop_boxes(total, h, w, generator)[part]
        else:
            boxes = torch.tensor([[0, 0, h, w]], dtype=torch.float64).expand(n, 4)
        if rotate:
            angles = _uniform(generator, (total,), -MAX_DEGREES, MAX_DEGREES)[part]
        else:
            angles = torch.zeros(n, dtype=torch.float64)
        return self.warp(x, boxes, angles)

    def warp(
        self, x: torch.Tensor, boxes: torch.Tensor, angles: torch.Tensor
    ) -> torch.Tensor:
        """Crop each image to its box, resize it back, then rotate it.

        Parameters
        ----------
        x : torch.Tensor
            Normalised float ``(B, C, H, W)``.
        boxes : torch.Tensor
            ``(B, 4)`` crop boxes ``(top, left, height, width)`` in pixels.
        angles : torch.Tensor
            ``(B,)`` counter-clockwise angles in degrees.

        Returns
        -------
        torch.Tensor
            ``(B, C, H, W)``, bilinear. With any angle, what comes in from outside
            the image is black (in pixel terms, as ``RandomRotation(fill=0)``);
            without, the edge pixels repeat (as ``resized_crop`` clamps).
        """
        n, _c, h, w = x.shape
        boxes = boxes.to(torch.float64)
        top, left, bh, bw = boxes.unbind(1)
        rad = angles.to(torch.float64) * (math.pi / 180)
        cos, sin = torch.cos(rad), torch.sin(rad)
        # Output pixel offsets from the centre (a, b) -> rotated back into the
        # crop -> scaled into the box -> offsets in the input, normalised to the
        # [-1, 1] of affine_grid (align_corners=False: edges, not pixel centres).
        sx, sy = bw / w, bh / h
        cx = left + bw / 2 - w / 2
        cy = top + bh / 2 - h / 2
        theta = torch.zeros(n, 2, 3, dtype=torch.float64)
        theta[:, 0, 0] = sx * cos
        theta[:, 0, 1] = -sx * sin * h / w
        theta[:, 0, 2] = cx * 2 / w
        theta[:, 1, 0] = sy * sin * w / h
        theta[:, 1, 1] = sy * cos
        theta[:, 1, 2] = cy * 2 / h
        grid = F.affine_grid(
            theta.to(device=x.device, dtype=x.dtype), list(x.shape), align_corners=False
        )
        if not bool(torch.any(angles != 0)):
            # A crop's edge samples reach half a pixel past the image: repeat it.
            return F.grid_sample(
                x, grid, mode="bilinear", padding_mode="border", align_corners=False
            )
        # grid_sample pads with 0, which is the mean colour once normalised: shift
        # so that pixel value 0 (black) is what comes in from outside.
        fill = self._normalised_black(x)
        out = F.grid_sample(
            x - fill, grid, mode="bilinear", padding_mode="zeros", align_corners=False
        )
        return out.add_(fill)

    def _normalised_black(self, x: torch.Tensor) -> torch.Tensor:
        mean, std = self._stats(x)
        return (0 - mean) / std

    def _stats(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mean = torch.tensor(self.mean, dtype=x.dtype, device=x.device).view(1, -1, 1, 1)
        std = torch.tensor(self.std, dtype=x.dtype, device=x.device).view(1, -1, 1, 1)
        return mean, std

    # ----------------------------------------------------------------- flip

    @staticmethod
    def _flip(
        x: torch.Tensor, generator: torch.Generator, total: int, part: slice
    ) -> torch.Tensor:
        from torchvision.transforms.v2 import functional as TF  # 1.5 s import: lazy

        flip = _uniform(generator, (total,), 0.0, 1.0)[part] < 0.5
        mask = flip.to(x.device).view(-1, 1, 1, 1)
        return torch.where(mask, TF.horizontal_flip(x), x)

    # --------------------------------------------------------------- jitter

    def _jitter(
        self, x: torch.Tensor, generator: torch.Generator, total: int, part: slice
    ) -> torch.Tensor:
        n, c = x.shape[:2]
        factors = _uniform(generator, (3, total), 1 - JITTER, 1 + JITTER)[:, part]
        factors = factors.to(device=x.device, dtype=x.dtype).view(3, n, 1, 1, 1)
        brightness, contrast, saturation = factors
        mean, std = self._stats(x)
        # torchvision's adjust_brightness / _contrast / _saturation (v2.functional)
        # with one factor per image: blends clamped to the 0..1 pixel range. In
        # place, as each full-batch pass counts on the CPU.
        pixels = torch.addcmul(mean, x, std)
        pixels.mul_(brightness).clamp_(0, 1)
        # The mean of the grey image is the weighted mean of the channel means.
        level = pixels.mean(dim=(-2, -1))
        if c == 3:
            level = level @ _GRAY_WEIGHTS.to(device=x.device, dtype=x.dtype)
        _blend_(pixels, level.view(n, 1, 1, 1), contrast)
        if c == 3:  # a grey image has no saturation (as PIL and torchvision)
            from torchvision.transforms.v2 import functional as TF  # 1.5 s: lazy

            _blend_(pixels, TF.rgb_to_grayscale(pixels), saturation)
        return pixels.sub_(mean).div_(std)


def _blend_(image: torch.Tensor, other: torch.Tensor, ratio: torch.Tensor) -> None:
    # torchvision's _blend, in place: image * ratio + other * (1 - ratio), clamped.
    image.mul_(ratio).addcmul_(other, 1 - ratio).clamp_(0, 1)


def crop_boxes(
    n: int, height: int, width: int, generator: torch.Generator
) -> torch.Tensor:
    """``n`` random resized crop boxes ``(top, left, h, w)``, as torchvision draws one.

    Up to 10 tries of an area share in :data:`CROP_SCALE` and a log-uniform ratio
    in :data:`CROP_RATIO`, the first that fits; else the central crop. All tries
    are drawn at once for every image.
    """
    area = height * width
    shape = (n, _CROP_ATTEMPTS)
    target = area * _uniform(generator, shape, *CROP_SCALE)
    log_ratio = _uniform(
        generator, shape, math.log(CROP_RATIO[0]), math.log(CROP_RATIO[1])
    )
    ratio = torch.exp(log_ratio)
    w = torch.round(torch.sqrt(target * ratio))
    h = torch.round(torch.sqrt(target / ratio))
    fits = (w > 0) & (w <= width) & (h > 0) & (h <= height)
    first = fits.to(torch.int8).argmax(dim=1, keepdim=True)  # first try that fits
    w = w.gather(1, first).squeeze(1)
    h = h.gather(1, first).squeeze(1)
    fallback_h, fallback_w = _central_crop(height, width)
    found = fits.any(dim=1)
    h = torch.where(found, h, fallback_h)
    w = torch.where(found, w, fallback_w)
    top = torch.floor(_uniform(generator, (n,), 0.0, 1.0) * (height - h + 1))
    left = torch.floor(_uniform(generator, (n,), 0.0, 1.0) * (width - w + 1))
    return torch.stack([top, left, h, w], dim=1)


def _central_crop(height: int, width: int) -> tuple[float, float]:
    in_ratio = width / height
    if in_ratio < min(CROP_RATIO):
        return float(round(width / min(CROP_RATIO))), float(width)
    if in_ratio > max(CROP_RATIO):
        return float(height), float(round(height * max(CROP_RATIO)))
    return float(height), float(width)


def augment_transform(
    choices: Iterable[str], image_size: int | tuple[int, int]
) -> list[v2.Transform]:
    """The per-sample equivalent of :class:`BatchAugment`, for one PIL image.

    Goes before ``ToTensor``/``Normalize`` (``loaders.standard_transform(...,
    augment=...)``). Its random numbers are torchvision's: torch's global RNG of
    the process that runs it (each DataLoader worker's own; the main process's
    with ``num_workers=0``), so this path is not bit-equal to the fast path.

    Parameters
    ----------
    choices : iterable of str
        Names from ``config.AUGMENTATIONS``.
    image_size : int or (int, int)
        Side, or ``(height, width)``, of the images (crops are resized back to it).
    """
    from torchvision.transforms import v2  # 1.5 s to import: only this path needs it

    chosen = set(validate(choices))
    size = (image_size, image_size) if isinstance(image_size, int) else image_size
    steps: list[v2.Transform] = []
    if "crop" in chosen:
        steps.append(
            v2.RandomResizedCrop(
                size, scale=CROP_SCALE, ratio=CROP_RATIO, antialias=True
            )
        )
    if "flip" in chosen:
        steps.append(v2.RandomHorizontalFlip())
    if "rotate" in chosen:
        steps.append(
            v2.RandomRotation(
                MAX_DEGREES, interpolation=v2.InterpolationMode.BILINEAR, fill=0
            )
        )
    if "jitter" in chosen:
        steps.append(
            v2.ColorJitter(brightness=JITTER, contrast=JITTER, saturation=JITTER)
        )
    return steps
