"""Augmentation: per-sample, seeded, resumable, and what each choice promises."""

from __future__ import annotations

import pytest
import torch
from PIL import Image
from torchvision.transforms.v2 import functional as TF

from workbench.core.config import AUGMENTATIONS
from workbench.core.data.augment import (
    JITTER,
    BatchAugment,
    _uniform,
    augment_transform,
    batch_generator,
    crop_boxes,
    describe,
    title,
    validate,
)
from workbench.core.data.loaders import (
    FastLoader,
    _normalise,
    standard_transform,
)

GRAY = ((0.5,), (0.25,))
RGB = ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))


def _batch(n: int = 16, channels: int = 1, side: int = 28, seed: int = 0):
    """A normalised batch of random uint8 images, and its (mean, std)."""
    g = torch.Generator().manual_seed(seed)
    images = torch.randint(0, 256, (n, channels, side, side), generator=g)
    mean, std = GRAY if channels == 1 else RGB
    return _normalise(images.to(torch.uint8), mean, std), mean, std


def _pixels(x: torch.Tensor, mean, std) -> torch.Tensor:
    m = torch.tensor(mean).view(1, -1, 1, 1)
    s = torch.tensor(std).view(1, -1, 1, 1)
    return x * s + m


# ------------------------------------------------------------------ names


def test_every_choice_has_a_title_and_describe_reads_as_a_phrase():
    assert all(title(c) for c in AUGMENTATIONS)
    assert describe(()) == "no augmentation"
    assert describe(["flip"]) == "horizontal flip"
    assert describe(["jitter", "crop", "flip"]) == (
        "random resized crop, horizontal flip and colour jitter"
    )


def test_unknown_or_repeated_choices_are_refused():
    assert validate(["rotate", "crop"]) == ("rotate", "crop")
    with pytest.raises(ValueError, match="unknown augmentation 'blur'"):
        BatchAugment(["blur"], *GRAY)
    with pytest.raises(ValueError, match="once"):
        validate(["flip", "flip"])


# ------------------------------------------------------- batch behaviour


@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("choices", [(c,) for c in AUGMENTATIONS] + [AUGMENTATIONS])
def test_output_keeps_shape_dtype_and_device(channels, choices):
    x, mean, std = _batch(8, channels, 20)
    out = BatchAugment(choices, mean, std)(x, batch_generator(0, 0, 0))
    assert out.shape == x.shape
    assert out.dtype == x.dtype
    assert out.device == x.device
    assert not torch.equal(out, x)


def test_no_choices_is_the_identity():
    x, mean, std = _batch()
    assert BatchAugment((), mean, std)(x, batch_generator(0, 0, 0)) is x


def test_each_image_gets_its_own_crop():
    # 64 copies of one image: with one crop per batch they would stay equal.
    x, mean, std = _batch(1)
    x = x.expand(64, -1, -1, -1).contiguous()
    out = BatchAugment(["crop"], mean, std)(x, batch_generator(0, 0, 0))
    distinct = {tuple(img.flatten().tolist()) for img in out}
    assert len(distinct) > 32
    boxes = crop_boxes(64, 28, 28, batch_generator(0, 0, 0))
    assert len({tuple(b.tolist()) for b in boxes}) > 32


def test_each_image_gets_its_own_angle_flip_and_jitter():
    x, mean, std = _batch(1, 3, 16)
    x = x.expand(64, -1, -1, -1).contiguous()
    for choice in ("rotate", "jitter"):
        out = BatchAugment([choice], mean, std)(x, batch_generator(0, 0, 0))
        assert len({tuple(img.flatten().tolist()) for img in out}) > 32, choice
    out = BatchAugment(["flip"], mean, std)(x, batch_generator(0, 0, 0))
    flipped = torch.tensor([torch.equal(img, x[0].flip(-1)) for img in out])
    kept = torch.tensor([torch.equal(img, x[0]) for img in out])
    assert torch.all(flipped | kept)
    assert 16 < int(flipped.sum()) < 48


def test_same_seed_epoch_and_batch_give_the_same_output_and_leave_global_rng():
    x, mean, std = _batch(32, 3, 16)
    augment = BatchAugment(AUGMENTATIONS, mean, std)
    before = torch.random.get_rng_state()
    first = augment(x, batch_generator(7, 2, 3))
    again = augment(x, batch_generator(7, 2, 3))
    assert torch.equal(torch.random.get_rng_state(), before)
    assert torch.equal(first, again)
    for other in ((8, 2, 3), (7, 3, 3), (7, 2, 4)):
        assert not torch.equal(augment(x, batch_generator(*other)), first), other


def test_flip_mirrors_the_image():
    image = torch.zeros(1, 1, 4, 6, dtype=torch.uint8)
    image[..., :, 0] = 255  # a white left column
    x = _normalise(image, *GRAY).expand(32, -1, -1, -1).contiguous()
    out = BatchAugment(["flip"], *GRAY)(x, batch_generator(0, 0, 0))
    mirrored = x[0].flip(-1)
    assert torch.equal(mirrored[..., :, -1], x[0][..., :, 0])  # white on the right
    is_mirrored = [torch.equal(img, mirrored) for img in out]
    assert any(is_mirrored)
    assert all(
        m or torch.equal(img, x[0]) for m, img in zip(is_mirrored, out, strict=True)
    )


def test_warp_matches_torchvision_rotate_and_resized_crop():
    x, _mean, _std = _batch(2, 3, 24)
    augment = BatchAugment(["rotate"], (0.0,) * 3, (1.0,) * 3)  # fill 0 as rotate's
    full = torch.tensor([[0, 0, 24, 24]] * 2, dtype=torch.float64)
    out = augment.warp(x, full, torch.tensor([12.0, -9.0]))
    for k, angle in enumerate((12.0, -9.0)):
        ref = TF.rotate(x[k], angle, interpolation=TF.InterpolationMode.BILINEAR)
        torch.testing.assert_close(out[k], ref, atol=1e-4, rtol=0)
    boxes = torch.tensor([[2, 3, 18, 20], [0, 1, 23, 21]], dtype=torch.float64)
    out = augment.warp(x, boxes, torch.zeros(2))
    for k in range(2):
        top, left, h, w = (int(v) for v in boxes[k])
        ref = TF.resized_crop(x[k], top, left, h, w, [24, 24], antialias=True)
        # The edges differ: resized_crop clamps to the crop, the grid reads on.
        torch.testing.assert_close(
            out[k][..., 2:-2, 2:-2], ref[..., 2:-2, 2:-2], atol=1e-4, rtol=0
        )
    identity = augment.warp(x, full, torch.zeros(2))
    torch.testing.assert_close(identity, x, atol=1e-5, rtol=0)


def test_crops_keep_the_promised_area_and_ratio():
    boxes = crop_boxes(2000, 28, 28, batch_generator(1, 0, 0))
    top, left, h, w = boxes.unbind(1)
    assert torch.all((top >= 0) & (left >= 0) & (top + h <= 28) & (left + w <= 28))
    area = h * w / 28**2
    assert area.min() >= 0.65  # 0.7..1 before rounding
    assert area.max() <= 1.0
    assert (w / h).min() >= 0.7
    assert (w / h).max() <= 1.4


def test_rotation_fills_with_black_pixels():
    white = torch.full((64, 1, 16, 16), 255, dtype=torch.uint8)
    x = _normalise(white, *GRAY)
    out = BatchAugment(["rotate"], *GRAY)(x, batch_generator(0, 0, 0))
    pixels = _pixels(out, *GRAY)
    assert pixels[:, :, 0, 0].min() < 0.5  # a corner turned in from outside
    assert pixels.min() >= -1e-5


@pytest.mark.parametrize("channels", [1, 3])
def test_jitter_keeps_pixels_in_0_to_1_and_matches_torchvision(channels):
    x, mean, std = _batch(64, channels, 12)
    augment = BatchAugment(["jitter"], mean, std)
    out = augment(x, batch_generator(3, 0, 0))
    pixels = _pixels(out, mean, std)
    assert pixels.min() >= -1e-5
    assert pixels.max() <= 1 + 1e-5
    # One image redone with v2.functional and the factors the batch drew.
    b, c, s = _uniform(batch_generator(3, 0, 0), (3, 64), 1 - JITTER, 1 + JITTER)
    image = _pixels(x, mean, std)[5].clamp(0, 1)
    image = TF.adjust_brightness(image, float(b[5]))
    image = TF.adjust_contrast(image, float(c[5]))
    image = TF.adjust_saturation(image, float(s[5]))
    torch.testing.assert_close(pixels[5], image, atol=1e-5, rtol=0)


# ------------------------------------------------------------ the loader


def _loader(augment, *, batch_size=32, seed=5, images=None):
    if images is None:
        g = torch.Generator().manual_seed(0)
        images = torch.randint(0, 256, (100, 3, 12, 12), generator=g).to(torch.uint8)
    labels = torch.arange(len(images)) % 10
    return FastLoader(
        images,
        labels,
        batch_size=batch_size,
        shuffle=True,
        seed=seed,
        device="cpu",
        mean=RGB[0],
        std=RGB[1],
        augment=augment,
    )


def test_fast_loader_resumed_mid_epoch_yields_the_uninterrupted_batches():
    augment = BatchAugment(AUGMENTATIONS, *RGB)
    loader = _loader(augment)
    loader.set_epoch(2)
    whole = list(loader)
    for start in (1, 3):
        resumed = _loader(augment)
        resumed.set_epoch(2)
        tail = list(resumed.iter_from(start))
        assert len(tail) == len(whole) - start
        for (x, y), (ex, ey) in zip(tail, whole[start:], strict=True):
            assert torch.equal(x, ex)
            assert torch.equal(y, ey)
    loader.set_epoch(3)
    assert not torch.equal(next(iter(loader))[0], whole[0][0])


def test_fast_loader_augments_reproducibly_without_the_global_rng():
    augment = BatchAugment(AUGMENTATIONS, *RGB)
    before = torch.random.get_rng_state()
    first = [x for x, _ in _loader(augment)]
    second = [x for x, _ in _loader(augment)]
    assert torch.equal(torch.random.get_rng_state(), before)
    assert all(torch.equal(a, b) for a, b in zip(first, second, strict=True))
    plain = [x for x, _ in _loader(None)]
    assert not any(torch.equal(a, b) for a, b in zip(first, plain, strict=True))


def test_fast_loader_without_augment_is_bit_identical_to_plain_batches():
    g = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (100, 3, 12, 12), generator=g).to(torch.uint8)
    expected = _normalise(images, *RGB)
    for augment in (None, BatchAugment((), *RGB)):
        loader = _loader(augment, images=images)
        assert loader.augment is None
        order = loader.epoch_order()
        for k, (x, _y) in enumerate(loader):
            index = order[k * 32 : (k + 1) * 32]
            assert torch.equal(x, expected[index])


def test_fast_loader_refuses_statistics_of_another_channel_count():
    with pytest.raises(ValueError, match="channels"):
        _loader(BatchAugment(["flip"], (0.5, 0.5), (0.25, 0.25)))
    _loader(BatchAugment(["flip"], *GRAY))  # one value for every channel is fine


# ------------------------------------------------------ per-sample path


def test_per_sample_transform_has_the_same_choices_and_keeps_the_size():
    steps = augment_transform(AUGMENTATIONS, 12)
    assert [type(s).__name__ for s in steps] == [
        "RandomResizedCrop",
        "RandomHorizontalFlip",
        "RandomRotation",
        "ColorJitter",
    ]
    assert augment_transform((), 12) == []
    transform = standard_transform(*RGB, augment=steps)
    g = torch.Generator().manual_seed(0)
    pixels = torch.randint(0, 256, (12, 12, 3), generator=g).to(torch.uint8)
    with torch.random.fork_rng(devices=[]):
        out = transform(Image.fromarray(pixels.numpy()))
    assert out.shape == (3, 12, 12)
    assert out.dtype == torch.float32


def test_ranks_augment_their_rows_as_one_process_does():
    """Several processes: each rank's share of a batch gets the parameters one
    process gives those rows, so the global batch is augmented the same."""
    augment = BatchAugment(AUGMENTATIONS, *RGB)
    whole = _loader(augment, batch_size=30)  # 100 images: a last batch of 10
    ranks = [_loader(augment, batch_size=30) for _ in range(3)]
    for rank, loader in enumerate(ranks):
        loader.shard = (rank, 3)
    for loader in (whole, *ranks):
        loader.set_epoch(1)
    batches = list(whole)
    shares = [list(loader) for loader in ranks]
    for k, (x, y) in enumerate(batches):
        assert torch.equal(torch.cat([share[k][0] for share in shares]), x)
        assert torch.equal(torch.cat([share[k][1] for share in shares]), y)


def test_rows_outside_the_batch_are_refused():
    x, mean, std = _batch(4)
    with pytest.raises(ValueError, match="rows"):
        BatchAugment(["flip"], mean, std)(x, batch_generator(0, 0, 0), (3, 5))
