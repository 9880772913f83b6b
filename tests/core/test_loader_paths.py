"""Both loader paths (fast and DataLoader), for folders and the built-in datasets.

The paths deliver the same batches without augmentation; with it, only training
images change, and the per-sample path draws from the fast path's ranges.
"""

from __future__ import annotations

import math

import pytest
import torch
from torchvision.transforms import v2

from tests.core.test_cifar import RECORDS_PER_FILE, _expected, _write_batches
from tests.idx_files import mnist_like_arrays, write_mnist_raw
from tests.image_folders import make_folder
from workbench.core.config import AUGMENTATIONS, TrainConfig
from workbench.core.data import cifar
from workbench.core.data.augment import (
    CROP_RATIO,
    CROP_SCALE,
    JITTER,
    MAX_DEGREES,
    augment_transform,
)
from workbench.core.data.build import build_loaders
from workbench.core.data.registry import DATASET_INFO

SIDE = 64  # of the test images the per-sample augmentations are measured on

pytestmark = pytest.mark.usefixtures("data_dir")


def _epoch(loader) -> tuple[torch.Tensor, torch.Tensor]:
    xs, ys = zip(*loader, strict=True)
    return torch.cat(xs), torch.cat(ys)


# ------------------------------------------------------------ folders


def test_a_folder_reads_the_same_on_both_paths(tmp_path):
    root = make_folder(tmp_path / "d", 3, per_class=6, size=20)
    cfg = TrainConfig(
        dataset="folder",
        data_dir=str(root),
        image_size=16,
        model="small-cnn",
        batch_size=5,
        seed=4,
        val_fraction=0.5,  # 9 validation images: an order to keep
    )
    fast = build_loaders(cfg, "cpu")
    per_batch = build_loaders(cfg.replace(loader="dataloader"), "cpu")
    assert per_batch.path.startswith("From disk through a DataLoader")
    # Statistics of a sample of the training images there: here, all of them.
    assert per_batch.info.class_names == fast.info.class_names
    assert per_batch.info.image_shape == fast.info.image_shape == (3, 16, 16)
    for ours, theirs in (
        (per_batch.info.mean, fast.info.mean),
        (per_batch.info.std, fast.info.std),
    ):
        torch.testing.assert_close(
            torch.tensor(ours), torch.tensor(theirs), atol=2e-6, rtol=0
        )
    # The same validation images in the same order, normalised alike.
    x, y = _epoch(fast.val)
    px, py = _epoch(per_batch.val)
    assert torch.equal(py, y)
    torch.testing.assert_close(px, x, atol=1e-5, rtol=0)
    # The same training batches, epoch by epoch.
    for epoch in (0, 1):
        fast.train.set_epoch(epoch)
        per_batch.train.set_epoch(epoch)
        pairs = zip(fast.train, per_batch.train, strict=True)
        for (x, y), (px, py) in pairs:
            assert torch.equal(py, y)
            torch.testing.assert_close(px, x, atol=1e-5, rtol=0)


# ------------------------------------------------------------ built-in datasets


def _builtin(dataset: str, root) -> tuple[TrainConfig, torch.Tensor, torch.Tensor]:
    """A config reading tiny files of ``dataset``, and its stored test images."""
    if dataset == "mnist":
        write_mnist_raw(root, "mnist", n_train=30, n_test=10)
        images, labels = mnist_like_arrays(10, seed=1)
        images, labels = torch.from_numpy(images).unsqueeze(1), torch.from_numpy(labels)
    else:
        _write_batches(root)
        images, labels = _expected(cifar.TEST_FILES)
    cfg = TrainConfig(
        dataset=dataset, data_dir=str(root), download=False, batch_size=8, seed=2
    )
    return cfg, images, labels.long()


@pytest.mark.parametrize("loader", ["fast", "dataloader"])
@pytest.mark.parametrize("dataset", ["mnist", "cifar10"])
def test_builtin_datasets_augment_training_images_and_never_validation(
    tmp_path, dataset, loader
):
    cfg, images, labels = _builtin(dataset, tmp_path)
    cfg = cfg.replace(loader=loader)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)  # the per-sample path draws from the global RNG
        plain = build_loaders(cfg, "cpu")
        augmented = build_loaders(cfg.replace(augment=AUGMENTATIONS), "cpu")
        x, y = _epoch(augmented.val)
        train_x, train_y = next(iter(augmented.train))
    # Validation: the stored images, only normalised.
    info = DATASET_INFO[dataset]
    assert torch.equal(y, labels)
    torch.testing.assert_close(x, info.normalise(images.float() / 255))
    assert len(y) == (10 if dataset == "mnist" else RECORDS_PER_FILE)
    # Training: the same samples in the same order, each one changed.
    plain_x, plain_y = next(iter(plain.train))
    assert torch.equal(train_y, plain_y)
    changed = (train_x - plain_x).flatten(1).abs().amax(1) > 0.1
    assert changed.all()


# ------------------------------------------------------------ per-sample ranges


def _ramps() -> torch.Tensor:
    """Float (2, SIDE, SIDE): channel 0 is the row index, channel 1 the column."""
    rows, cols = torch.meshgrid(
        torch.arange(SIDE, dtype=torch.float32),
        torch.arange(SIDE, dtype=torch.float32),
        indexing="ij",
    )
    return torch.stack([rows, cols])


def _draws(choice: str, image: torch.Tensor, n: int) -> list[torch.Tensor]:
    transform = v2.Compose(augment_transform((choice,), SIDE))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return [transform(image) for _ in range(n)]


def test_per_sample_crops_keep_the_fast_paths_area_and_ratio():
    areas, ratios = [], []
    for out in _draws("crop", _ramps(), 100):
        # Resizing a ramp keeps its ends: the crop's first and last row and column.
        height = float(out[0].max() - out[0].min()) + 1
        width = float(out[1].max() - out[1].min()) + 1
        areas.append(height * width / SIDE**2)
        ratios.append(width / height)
    # Rounding to whole pixels moves a share or a ratio by a few hundredths.
    assert CROP_SCALE[0] - 0.04 <= min(areas) < CROP_SCALE[0] + 0.05
    assert max(areas) <= CROP_SCALE[1]
    assert CROP_RATIO[0] - 0.05 <= min(ratios) < 0.85
    assert 1.2 < max(ratios) <= CROP_RATIO[1] + 0.05


def test_per_sample_rotations_stay_within_the_fast_paths_angles():
    angles = []
    for out in _draws("rotate", _ramps(), 60):
        # Near the centre the column ramp's gradient points along the rotated x axis.
        centre = out[1, SIDE // 2 - 4 : SIDE // 2 + 4, SIDE // 2 - 4 : SIDE // 2 + 4]
        along_x = float((centre[:, 1:] - centre[:, :-1]).mean())
        along_y = float((centre[1:, :] - centre[:-1, :]).mean())
        angles.append(math.degrees(math.atan2(along_y, along_x)))
    assert max(abs(a) for a in angles) <= MAX_DEGREES + 0.5
    assert min(angles) < -MAX_DEGREES + 3  # both ways, nearly to the limit
    assert max(angles) > MAX_DEGREES - 3


def test_per_sample_jitter_and_flip_draw_from_the_fast_paths_ranges():
    gray = torch.full((3, 8, 8), 0.5)  # brightness alone changes a flat gray
    levels = [float(out.mean()) for out in _draws("jitter", gray, 100)]
    assert 0.5 * (1 - JITTER) - 1e-4 <= min(levels) < 0.5 * (1 - JITTER) + 0.03
    assert 0.5 * (1 + JITTER) - 0.03 < max(levels) <= 0.5 * (1 + JITTER) + 1e-4
    ramps = _ramps()
    flipped = [bool(out[1, 0, 0] == SIDE - 1) for out in _draws("flip", ramps, 100)]
    assert 30 <= sum(flipped) <= 70  # each image flipped half the time
