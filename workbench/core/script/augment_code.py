"""The augmentation half of a written script: seeded batch augmentation.

On the fast path the blocks repeat :class:`workbench.core.data.augment.
BatchAugment` operation for operation: the same generator per batch (seeded
by ``(SEED, epoch, batch)``), the same draws in the same order (crop boxes,
angles, flips, jitter factors, all float64 on the CPU), the same affine grid,
flip and colour blends. The script's training losses then equal ``train``'s
bit for bit (``tests/core/test_script_datasets.py``). On the ``DataLoader``
path the script composes the same torchvision transforms the workbench does.
Change one side, change the other.
"""

from __future__ import annotations

from workbench.core.config import TrainConfig
from workbench.core.data.augment import (
    CROP_RATIO,
    CROP_SCALE,
    JITTER,
    MAX_DEGREES,
    augment_transform,
)
from workbench.core.script.parts import literal

# The line of a fast-path setup that makes a training epoch's batches.
_TRAIN_LINE = (
    "        return batches(train_images, train_labels, order, BATCH_SIZE, device, "
    "{mean}, {std})\n"
)


def augment_settings(cfg: TrainConfig) -> list[str]:
    """The settings lines of a script that augments (none when it does not)."""
    if not cfg.augment:
        return []
    return [
        "# Random changes to each training image, in this order: crop, rotate,",
        "# flip, jitter (validation images are left as they are).",
        f"AUGMENT = {literal(list(cfg.augment))}",
        f"CROP_SCALE = {literal(CROP_SCALE)}  # the share of the area a crop keeps",
        f"CROP_RATIO = {literal(CROP_RATIO)}  # a crop's width / height",
        f"MAX_DEGREES = {literal(MAX_DEGREES)}  # rotations within +-MAX_DEGREES",
        f"JITTER = {literal(JITTER)}  # brightness, contrast, saturation: 1 +- it",
    ]


def augment_blocks(cfg: TrainConfig) -> list[str]:
    """The functions a fast-path script augments with (none: no augmentation)."""
    if not cfg.augment or cfg.loader != "fast":
        return []
    return [BATCH_AUGMENT]


def augmented_setup(setup: str, cfg: TrainConfig, *, folder: bool) -> str:
    """``setup`` (main()'s data part) with its training batches augmented."""
    if not cfg.augment or cfg.loader != "fast":
        return setup
    mean, std = ("mean", "std") if folder else ("MEAN", "STD")
    line = _TRAIN_LINE.format(mean=mean, std=std)
    if setup.count(line) != 1:
        raise ValueError("the training batches of the setup were not found")
    new = (
        f"        raw = batches(train_images, train_labels, order, BATCH_SIZE, "
        f"device, {mean}, {std})\n"
        f"        return augmented(raw, epoch, {mean}, {std})\n"
    )
    return setup.replace(line, new)


def loader_steps(cfg: TrainConfig) -> list[str]:
    """The torchvision transforms the ``DataLoader`` path augments with, as code."""
    if not cfg.augment:
        return []
    made = augment_transform(cfg.augment, cfg.resolved_image_size)
    size = cfg.resolved_image_size
    steps = []
    for step in made:
        kind = type(step).__name__
        if kind == "RandomResizedCrop":
            steps.append(
                "v2.RandomResizedCrop(\n"
                f"                ({size}, {size}), scale=CROP_SCALE, "
                "ratio=CROP_RATIO, antialias=True\n            )"
            )
        elif kind == "RandomHorizontalFlip":
            steps.append("v2.RandomHorizontalFlip()")
        elif kind == "RandomRotation":
            steps.append(
                "v2.RandomRotation(\n                MAX_DEGREES, "
                "interpolation=v2.InterpolationMode.BILINEAR, fill=0\n            )"
            )
        else:
            steps.append(
                "v2.ColorJitter(brightness=JITTER, contrast=JITTER, saturation=JITTER)"
            )
    return steps


BATCH_AUGMENT = '''
def batch_generator(seed: int, epoch: int, batch: int) -> torch.Generator:
    """The generator batch ``batch`` of epoch ``epoch`` draws its changes from.

    Its own stream (0xA06 mixed in), never the global one dropout uses.
    """
    state = np.random.SeedSequence([seed, epoch, batch, 0xA06]).generate_state(1)
    return torch.Generator().manual_seed(int(state[0]))


def uniform(
    generator: torch.Generator, shape: tuple[int, ...], low: float, high: float
) -> torch.Tensor:
    """Every random number is drawn here: float64, on the CPU, in [low, high)."""
    values = torch.rand(shape, generator=generator, dtype=torch.float64)
    return values.mul_(high - low).add_(low)


def crop_boxes(
    n: int, height: int, width: int, generator: torch.Generator
) -> torch.Tensor:
    """``n`` random resized crop boxes (top, left, h, w), as torchvision draws one.

    Up to 10 tries of an area share and a log-uniform ratio, the first that
    fits; else the central crop. All tries are drawn at once for every image.
    """
    shape = (n, 10)
    target = height * width * uniform(generator, shape, *CROP_SCALE)
    low, high = math.log(CROP_RATIO[0]), math.log(CROP_RATIO[1])
    ratio = torch.exp(uniform(generator, shape, low, high))
    w = torch.round(torch.sqrt(target * ratio))
    h = torch.round(torch.sqrt(target / ratio))
    fits = (w > 0) & (w <= width) & (h > 0) & (h <= height)
    first = fits.to(torch.int8).argmax(dim=1, keepdim=True)  # first try that fits
    w = w.gather(1, first).squeeze(1)
    h = h.gather(1, first).squeeze(1)
    # The central crop, of a ratio within CROP_RATIO.
    central_h, central_w = float(height), float(width)
    if width / height < min(CROP_RATIO):
        central_h = float(round(width / min(CROP_RATIO)))
    elif width / height > max(CROP_RATIO):
        central_w = float(round(height * max(CROP_RATIO)))
    found = fits.any(dim=1)
    h = torch.where(found, h, central_h)
    w = torch.where(found, w, central_w)
    top = torch.floor(uniform(generator, (n,), 0.0, 1.0) * (height - h + 1))
    left = torch.floor(uniform(generator, (n,), 0.0, 1.0) * (width - w + 1))
    return torch.stack([top, left, h, w], dim=1)


def warp(
    x: torch.Tensor, boxes: torch.Tensor, angles: torch.Tensor, black: torch.Tensor
) -> torch.Tensor:
    """Crop each image to its box, resize it back, then rotate it (bilinear).

    With any angle, what comes in from outside the image is black; without,
    the edge pixels repeat (as torchvision's resized crop).
    """
    n, _c, h, w = x.shape
    top, left, bh, bw = boxes.unbind(1)
    rad = angles * (math.pi / 180)
    cos, sin = torch.cos(rad), torch.sin(rad)
    # Output pixel offsets from the centre, rotated back into the crop, scaled
    # into the box, as offsets in the input on affine_grid's [-1, 1] scale.
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
    theta = theta.to(device=x.device, dtype=x.dtype)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    if not bool(torch.any(angles != 0)):
        return F.grid_sample(
            x, grid, mode="bilinear", padding_mode="border", align_corners=False
        )
    # grid_sample pads with 0, the mean colour once normalised: shift so that
    # black is what comes in from outside.
    out = F.grid_sample(
        x - black, grid, mode="bilinear", padding_mode="zeros", align_corners=False
    )
    return out.add_(black)


def blend_(image: torch.Tensor, other: torch.Tensor, ratio: torch.Tensor) -> None:
    """torchvision's blend, in place: image * ratio + other * (1 - ratio), clamped."""
    image.mul_(ratio).addcmul_(other, 1 - ratio).clamp_(0, 1)


def augment(
    x: torch.Tensor,
    generator: torch.Generator,
    mean: tuple[float, ...],
    std: tuple[float, ...],
) -> torch.Tensor:
    """A normalised batch, each image with its own random changes from ``generator``."""
    n, c, h, w = x.shape
    if n == 0:
        return x
    mean_t = torch.tensor(mean, dtype=x.dtype, device=x.device).view(1, -1, 1, 1)
    std_t = torch.tensor(std, dtype=x.dtype, device=x.device).view(1, -1, 1, 1)
    if "crop" in AUGMENT or "rotate" in AUGMENT:
        if "crop" in AUGMENT:
            boxes = crop_boxes(n, h, w, generator)
        else:
            boxes = torch.tensor([[0, 0, h, w]], dtype=torch.float64).expand(n, 4)
        if "rotate" in AUGMENT:
            angles = uniform(generator, (n,), -MAX_DEGREES, MAX_DEGREES)
        else:
            angles = torch.zeros(n, dtype=torch.float64)
        x = warp(x, boxes, angles, (0 - mean_t) / std_t)
    if "flip" in AUGMENT:
        flip = uniform(generator, (n,), 0.0, 1.0) < 0.5
        x = torch.where(flip.to(x.device).view(-1, 1, 1, 1), x.flip(-1), x)
    if "jitter" in AUGMENT:
        factors = uniform(generator, (3, n), 1 - JITTER, 1 + JITTER)
        factors = factors.to(device=x.device, dtype=x.dtype).view(3, n, 1, 1, 1)
        brightness, contrast, saturation = factors
        # On the pixel values (0..1): undo the normalisation, blend, redo it.
        pixels = torch.addcmul(mean_t, x, std_t)
        pixels.mul_(brightness).clamp_(0, 1)
        level = pixels.mean(dim=(-2, -1))  # the grey image's mean, per image
        if c == 3:  # ITU-R 601-2 luma
            weights = torch.tensor([0.2989, 0.587, 0.114])
            level = level @ weights.to(device=x.device, dtype=x.dtype)
        blend_(pixels, level.view(n, 1, 1, 1), contrast)
        if c == 3:  # a grey image has no saturation
            r, g, b = pixels.unbind(dim=-3)
            gray = r.mul(0.2989).add_(g, alpha=0.587).add_(b, alpha=0.114)
            blend_(pixels, gray.unsqueeze(dim=-3), saturation)
        x = pixels.sub_(mean_t).div_(std_t)
    return x


def augmented(
    batches: Iterator[tuple[torch.Tensor, torch.Tensor]],
    epoch: int,
    mean: tuple[float, ...],
    std: tuple[float, ...],
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """An epoch's training batches, batch ``i`` changed by its own generator."""
    for index, (x, y) in enumerate(batches):
        yield augment(x, batch_generator(SEED, epoch, index), mean, std), y
'''
