"""A folder of the user's images: what a run trains on, the split a seed gives,
what check-data reports for given files, which decoded-image caches are kept.

Every image is written by the test with known pixels, so what arrives in the
batches is checked against numbers computed here, by hand.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from workbench.cli.commands import main
from workbench.core.config import TrainConfig
from workbench.core.data.build import build_loaders
from workbench.core.data.folder import load_folder
from workbench.core.data.folder_check import check_folder
from workbench.core.data.loader_set import Loaders
from workbench.core.data.registry import DataError

LOADERS = ["fast", "dataloader"]

pytestmark = pytest.mark.usefixtures("data_dir")


def _save(path: Path, pixels: np.ndarray) -> Path:
    """uint8 (H, W, 3) or (H, W) pixels, in the format the suffix names."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.ascontiguousarray(pixels, dtype=np.uint8)).save(path)
    return path


def _noise(rng: np.random.Generator, height: int = 20, width: int = 20) -> np.ndarray:
    return rng.integers(0, 256, (height, width, 3), dtype=np.uint8)


def _cfg(root: Path, **changes) -> TrainConfig:
    values = {
        "dataset": "folder",
        "data_dir": str(root),
        "image_size": 16,
        "model": "small-cnn",
        "batch_size": 64,
    }
    return TrainConfig(**{**values, **changes})


def _pixels(loader, loaders: Loaders) -> tuple[torch.Tensor, torch.Tensor]:
    """Every image of one epoch as uint8 (N, C, H, W), the normalisation undone."""
    xs, ys = zip(*loader, strict=True)
    x, y = torch.cat(xs), torch.cat(ys)
    mean = torch.tensor(loaders.info.mean).view(1, -1, 1, 1)
    std = torch.tensor(loaders.info.std).view(1, -1, 1, 1)
    values = (x * std + mean) * 255
    assert (values - values.round()).abs().max() < 0.01  # whole pixel values
    return values.round().to(torch.uint8), y


# ------------------------------------------------------------ orientation


def _coordinates(ident: int) -> np.ndarray:
    """Red = 10 x row, green = 10 x column, blue = 100 + ident; even idents are
    16 high and 24 wide, odd ones 24 high and 16 wide."""
    height, width = (16, 24) if ident % 2 == 0 else (24, 16)
    rows, cols = np.indices((height, width))
    blue = np.full_like(rows, 100 + ident)
    return np.stack([10 * rows, 10 * cols, blue], axis=-1).astype(np.uint8)


def _expected_square(ident: int) -> np.ndarray:
    """(3, 16, 16): the centre 16 columns of a wide image, 16 rows of a tall one."""
    top, left = (0, 4) if ident % 2 == 0 else (4, 0)
    rows, cols = np.indices((16, 16))
    blue = np.full_like(rows, 100 + ident)
    return np.stack([10 * (rows + top), 10 * (cols + left), blue]).astype(np.uint8)


@pytest.mark.parametrize("loader", LOADERS)
def test_colour_images_arrive_with_rows_columns_and_channels_in_place(tmp_path, loader):
    root = tmp_path / "d"
    for ident in range(8):  # class a: 0-3, class b: 4-7
        _save(root / "ab"[ident // 4] / f"{ident}.png", _coordinates(ident))
    loaders = build_loaders(_cfg(root, loader=loader, val_fraction=0.25), "cpu")
    assert loaders.info.image_shape == (3, 16, 16)
    held_out = {}
    for split in (loaders.train, loaders.val):
        images, labels = _pixels(split, loaders)
        for image, label in zip(images, labels, strict=True):
            ident = int(image[2, 0, 0]) - 100
            assert int(label) == ident // 4
            np.testing.assert_array_equal(image.numpy(), _expected_square(ident))
            held_out[ident] = split is loaders.val
    assert sorted(held_out) == list(range(8))
    assert sum(held_out.values()) == 2  # one of each class


# ------------------------------------------------------------ statistics


@pytest.mark.parametrize("loader", LOADERS)
def test_per_channel_mean_and_std_are_the_training_images_own(tmp_path, loader):
    root = tmp_path / "d"
    rng = np.random.default_rng(0)
    written = []
    for name in ("a", "b"):
        for index in range(3):
            # Each channel its own range: red 0-255, green 0-99, blue 200-255.
            pixels = np.stack(
                [
                    rng.integers(0, 256, (16, 16)),
                    rng.integers(0, 100, (16, 16)),
                    rng.integers(200, 256, (16, 16)),
                ],
                axis=-1,
            ).astype(np.uint8)
            written.append(_save(root / "train" / name / f"{index}.png", pixels))
        # White validation images: not part of the statistics.
        _save(root / "val" / name / "white.png", np.full((16, 16, 3), 255, np.uint8))
    values = np.stack([np.asarray(Image.open(p)) for p in written]) / 255.0
    mean = values.mean(axis=(0, 1, 2))  # over images, rows and columns
    std = values.std(axis=(0, 1, 2))  # population std
    assert mean[1] < 0.25 < mean[0] < 0.75 < mean[2]

    loaders = build_loaders(_cfg(root, loader=loader), "cpu")
    np.testing.assert_allclose(loaders.info.mean, mean, rtol=0, atol=2e-6)
    np.testing.assert_allclose(loaders.info.std, std, rtol=0, atol=2e-6)
    # The validation batches are normalised with the training statistics.
    x, _y = next(iter(loaders.val))
    run_mean, run_std = np.array(loaders.info.mean), np.array(loaders.info.std)
    white = torch.tensor((1 - run_mean) / run_std, dtype=torch.float32).view(1, 3, 1, 1)
    torch.testing.assert_close(x, white.expand(2, 3, 16, 16), atol=1e-5, rtol=0)


# ------------------------------------------------------------ the split


def _numbered_folder(root: Path, per_class: int = 10) -> Path:
    """Solid images whose red value is 10 x their number: a 0-9, b 10-19."""
    for ident in range(2 * per_class):
        colour = np.array([10 * ident, 255 - 10 * ident, 50], np.uint8)
        name = "ab"[ident // per_class]
        _save(root / name / f"{ident:02d}.png", np.tile(colour, (16, 16, 1)))
    return root


def _split(root: Path, loader: str, seed: int) -> tuple[frozenset, frozenset, str]:
    """The numbers a run trains on, those it validates on, and its path."""
    loaders = build_loaders(_cfg(root, loader=loader, seed=seed), "cpu")
    parts = []
    for split in (loaders.train, loaders.val):
        images, labels = _pixels(split, loaders)
        idents = [int(v) // 10 for v in images[:, 0, 0, 0]]
        assert [i // 10 for i in idents] == labels.tolist()
        parts.append(frozenset(idents))
    return parts[0], parts[1], loaders.path


def test_a_seed_gives_one_split_on_both_paths_and_another_seed_another(tmp_path):
    root = _numbered_folder(tmp_path / "d")
    splits = {
        (loader, seed): _split(root, loader, seed)
        for seed in (0, 1)
        for loader in LOADERS
    }
    for train, val, _path in splits.values():
        assert not train & val  # nothing in both
        assert train | val == set(range(20))  # nothing left out
        assert len(val) == 4
        assert len(val & set(range(10))) == 2  # a fifth of each class
    train0, val0, path0 = splits["fast", 0]
    assert path0.startswith("In memory: 20 images decoded once")
    # The same seed: the same split, again (from the disk cache) and per batch.
    train, val, path = _split(root, "fast", 0)
    assert path.startswith("In memory: 20 images read from the disk cache")
    assert (train, val) == (train0, val0)
    assert splits["dataloader", 0][:2] == (train0, val0)
    # Another seed: another split, the same on both paths.
    assert splits["fast", 1][1] != val0
    assert splits["dataloader", 1][:2] == splits["fast", 1][:2]


# ------------------------------------------------------------ check-data and a run


def _mixed_folder(root: Path) -> Path:
    """cat: 6 images, suffixes in any case; dog: 3 images, 2 broken files, 2 others."""
    rng = np.random.default_rng(1)
    for name in ("0.png", "1.jpg", "IMG_0001.JPG", "IMG_0002.JPEG", "a.Png", "s.TIFF"):
        _save(root / "cat" / name, _noise(rng))
    for name in ("0.png", "1.png", "2.BMP"):
        _save(root / "dog" / name, _noise(rng))
    (root / "dog" / "empty.jpg").write_bytes(b"")
    whole = _save(root / "dog" / "whole.png", _noise(rng)).read_bytes()
    (root / "dog" / "whole.png").unlink()
    (root / "dog" / "cut.PNG").write_bytes(whole[: len(whole) // 2])
    (root / "dog" / "notes.txt").write_text("not an image")
    (root / "dog" / "README").write_text("no suffix")
    return root


def test_check_data_counts_every_image_whatever_the_case_of_its_suffix(
    tmp_path, capsys
):
    root = _mixed_folder(tmp_path / "pets")
    report = check_folder(root, image_size=16)
    assert report.images_per_class() == {"cat": 6, "dog": 3}
    assert sorted(p.name for p in report.unreadable) == ["cut.PNG", "empty.jpg"]
    assert sorted(p.name for p in report.ignored) == ["README", "notes.txt"]
    assert [(f.severity, f.path.name) for f in report.findings] == [
        ("warning", "cut.PNG"),
        ("warning", "empty.jpg"),
    ]
    assert main(["check-data", str(root), "--image-size", "16"]) == 0
    out = capsys.readouterr().out
    assert "  cat: 6 images (all 6)\n" in out
    assert "  dog: 3 images (all 3)\n" in out
    assert "can train: 0 errors, 2 warnings" in out


@pytest.mark.parametrize("loader", LOADERS)
def test_a_run_trains_on_every_image_check_data_counts(tmp_path, loader):
    root = _mixed_folder(tmp_path / "pets")
    counts = check_folder(root, image_size=16).images_per_class()
    loaders = build_loaders(_cfg(root, loader=loader), "cpu")
    labels = torch.cat([y for split in (loaders.train, loaders.val) for _x, y in split])
    assert len(labels) == loaders.train.num_samples + loaders.val.num_samples == 9
    per_class = torch.bincount(labels, minlength=2).tolist()
    assert dict(zip(loaders.info.class_names, per_class, strict=True)) == counts
    assert sorted(s.split(":")[0] for s in loaders.skipped) == [
        "dog/cut.PNG",
        "dog/empty.jpg",
    ]


def test_a_class_without_training_images_cannot_train_on_either_path(tmp_path, capsys):
    root = tmp_path / "d"
    rng = np.random.default_rng(4)
    for name in ("a", "b"):
        for index in range(3):
            _save(root / "train" / name / f"{index}.png", _noise(rng))
        _save(root / "val" / name / "v.png", _noise(rng))
    _save(root / "val" / "c" / "v.png", _noise(rng))  # validated, never trained
    report = check_folder(root, image_size=16)
    assert report.images_per_class() == {"a": 4, "b": 4, "c": 1}
    assert [f.line() for f in report.findings] == [
        "error: class 'c' has no readable training images: add some to train/c "
        "or remove its folders"
    ]
    assert main(["check-data", str(root), "--image-size", "16"]) == 1
    assert "cannot train: 1 errors, 0 warnings" in capsys.readouterr().out
    for loader in LOADERS:
        with pytest.raises(DataError, match="no readable training images for class c"):
            build_loaders(_cfg(root, loader=loader), "cpu")


def test_far_smaller_is_judged_by_the_shorter_side(tmp_path):
    root = tmp_path / "d"
    rng = np.random.default_rng(2)
    shapes = {  # name: (height, width), training size 64: warned below 32
        "strip.png": (20, 200),
        "tower.png": (200, 20),
        "under.png": (100, 31),
        "half.png": (32, 32),
        "wide.png": (40, 200),
    }
    for name, (height, width) in shapes.items():
        _save(root / "a" / name, _noise(rng, height, width))
    _save(root / "b" / "big.png", _noise(rng, 64, 64))
    report = check_folder(root, image_size=64)
    small = {f.path.name: f.line() for f in report.findings}
    assert small == {
        name: f"warning: {size} is far smaller than the training size 64: "
        f"{root / 'a' / name}"
        for name, size in (
            ("strip.png", "200x20"),
            ("tower.png", "20x200"),
            ("under.png", "31x100"),
        )
    }
    assert report.can_train


# ------------------------------------------------------------ the disk cache


def test_pruning_keeps_the_four_most_recently_used_caches(tmp_path):
    root = tmp_path / "d"
    rng = np.random.default_rng(3)
    for name in ("a/0.png", "a/1.png", "b/0.png", "b/1.png"):
        _save(root / name, _noise(rng, 8, 8))
    caches = tmp_path / "caches"

    def load(seed: int) -> tuple[bool, set[Path]]:
        before = set(caches.glob("*.pt"))
        data = load_folder(root, image_size=8, seed=seed, cache_dir=caches)
        return data.from_cache, set(caches.glob("*.pt")) - before

    written = []
    for seed in range(4):  # a cache per seed, the first the oldest
        from_cache, (path,) = load(seed)
        assert not from_cache
        os.utime(path, (1000.0 * (seed + 1),) * 2)
        written.append(path)
    assert load(0) == (True, set())  # read: now the most recently used
    from_cache, (fifth,) = load(4)
    assert not from_cache
    # The least recently used (seed 1's) went; the one just written stays.
    assert set(caches.glob("*.pt")) == {written[0], written[2], written[3], fifth}
    assert load(1)[0] is False
