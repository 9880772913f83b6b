"""A folder of the user's images, second pass: the split of small classes, the
folder layouts a run accepts, what check-data says about leaks and imbalance,
the DataLoader path's channels and statistics, the memory budget, the
decoded-image cache's key, progress, and how a change of data is named.

Every image is written by the test with known pixels (or, where only the file
listing matters, as an empty file with an image suffix).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from workbench.core.config import TrainConfig
from workbench.core.data import folder_loading, folder_stream
from workbench.core.data.build import build_loaders
from workbench.core.data.folder import (
    MEMORY_BUDGET_ENV,
    DataFingerprint,
    load_folder,
    scan_folder,
    split_pairs,
)
from workbench.core.data.folder_check import check_folder
from workbench.core.data.registry import DataError

LOADERS = ["fast", "dataloader"]

pytestmark = pytest.mark.usefixtures("data_dir")


def _save(path: Path, pixels: np.ndarray) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.ascontiguousarray(pixels, dtype=np.uint8)).save(path)
    return path


def _noise(seed: int, side: int = 8) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (side, side, 3), np.uint8)


def _touch(path: Path) -> None:
    """An empty file: enough for what lists the folder, never decoded."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


def _cfg(root: Path, **changes) -> TrainConfig:
    values = {
        "dataset": "folder",
        "data_dir": str(root),
        "image_size": 8,
        "model": "small-cnn",
        "batch_size": 4,
    }
    return TrainConfig(**{**values, **changes})


# ------------------------------------------------------------ the split


def test_each_class_holds_out_its_rounded_share_and_at_least_one_image(tmp_path):
    root = tmp_path / "d"
    sizes = {"a": 1, "b": 2, "c": 3, "d": 9}  # a fifth: 0.2, 0.4, 0.6, 1.8 images
    for name, count in sizes.items():
        for index in range(count):
            _touch(root / name / f"{index}.png")
    train, val = split_pairs(scan_folder(root), 0.2, seed=0)
    per_class = [
        [sum(y == c for _p, y in pairs) for c in range(4)] for pairs in (train, val)
    ]
    # One image: trained on. Two or more: at least one validated, at least one
    # trained on. Nine: a fifth is 1.8, rounded to 2.
    assert per_class == [[1, 1, 2, 7], [0, 1, 1, 2]]


def test_train_beside_test_is_the_folders_own_split(tmp_path):
    root = tmp_path / "d"
    for split, count in (("train", 3), ("test", 2)):
        for name in ("a", "b"):
            for index in range(count):
                _touch(root / split / name / f"{index}.png")
    train, val = split_pairs(scan_folder(root), 0.5, seed=0)
    assert sorted(p.relative_to(root).as_posix() for p, _y in val) == [
        f"test/{name}/{index}.png" for name in "ab" for index in range(2)
    ]
    assert {p.parts[-3] for p, _y in train} == {"train"}
    assert len(train) == 6


def test_a_run_trains_on_the_images_in_sub_folders_of_a_class(tmp_path):
    root = tmp_path / "d"
    _save(root / "a" / "0.png", _noise(0))
    _save(root / "a" / "2023" / "summer" / "1.png", _noise(1))
    _save(root / "b" / "0.png", _noise(2))
    _save(root / "b" / "old" / "1.png", _noise(3))
    assert check_folder(root, image_size=8).images_per_class() == {"a": 2, "b": 2}
    loaders = build_loaders(_cfg(root), "cpu")
    assert loaders.train.num_samples + loaders.val.num_samples == 4
    assert sorted(loaders.fingerprint.files) == [
        "a/0.png",
        "a/2023/summer/1.png",
        "b/0.png",
        "b/old/1.png",
    ]


# ------------------------------------------------------------ check-data


def test_a_leak_is_reported_on_the_val_copy_and_names_the_train_copy(tmp_path):
    root = tmp_path / "d"
    for split in ("train", "val"):
        for index, name in enumerate("ab"):
            _save(root / split / name / "0.png", _noise(10 * index + len(split)))
    original = _save(root / "train" / "a" / "photo.png", _noise(99))
    copy = root / "val" / "b" / "copy.png"
    copy.write_bytes(original.read_bytes())
    report = check_folder(root, image_size=8)
    assert [f.line() for f in report.findings] == [
        f"warning: the same image is filed under a and b, in train and val "
        f"({original}): {copy}"
    ]


def test_the_imbalance_warning_names_the_smallest_class_with_images(tmp_path):
    root = tmp_path / "d"
    for index in range(10):
        _save(root / "many" / f"{index}.png", _noise(index))
    _save(root / "few" / "0.png", _noise(50))
    (root / "none").mkdir()
    report = check_folder(root, image_size=8)
    assert not report.can_train  # "none" has no images
    assert (
        "warning: strong class imbalance: many has 10 images, few 1; train with "
        "--class-weights balanced or --balanced-sampler"
        in [f.line() for f in report.findings]
    )


# ------------------------------------------------------------ the DataLoader path


@pytest.mark.parametrize("loader", LOADERS)
def test_one_colour_image_makes_the_folder_colour_whatever_its_place(tmp_path, loader):
    root = tmp_path / "d"
    for split in ("train", "val"):
        for name in ("a", "b"):
            gray = np.full((8, 8), 40 if name == "a" else 200, np.uint8)
            _save(root / split / name / "0.png", gray)
    # The one colour image is the first file read; the last file read is gray.
    _save(root / "train" / "a" / "00-colour.png", _noise(7))
    loaders = build_loaders(_cfg(root, loader=loader), "cpu")
    assert loaders.info.image_shape == (3, 8, 8)
    x, _y = next(iter(loaders.val))
    assert x.shape[1:] == (3, 8, 8)


def test_the_dataloader_paths_statistics_sample_draws_from_every_class(
    tmp_path, monkeypatch
):
    root = tmp_path / "d"
    for name, value in (("a", 0), ("b", 255)):  # class a black, class b white
        for index in range(6):
            _save(root / "train" / name / f"{index}.png", np.full((8, 8, 3), value))
        _save(root / "val" / name / "0.png", np.full((8, 8, 3), value))
    monkeypatch.setattr(folder_stream, "STATS_SAMPLE", 4)  # 4 of the 12
    loaders = build_loaders(_cfg(root, loader="dataloader", seed=0), "cpu")
    # A seeded random sample mixes the classes; the first four are all black.
    assert all(0 < m < 1 for m in loaders.info.mean)
    assert all(0.1 < s < 1 for s in loaders.info.std)


@pytest.mark.parametrize("loader", LOADERS)
def test_a_flat_channel_is_divided_by_one_not_by_nearly_zero(tmp_path, loader):
    root = tmp_path / "d"
    rng = np.random.default_rng(5)
    for name in ("a", "b"):
        for index in range(3):
            pixels = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)
            pixels[..., 2] = 50  # blue: one value in every training image
            _save(root / "train" / name / f"{index}.png", pixels)
        _save(root / "val" / name / "0.png", np.full((8, 8, 3), 60, np.uint8))
    loaders = build_loaders(_cfg(root, loader=loader), "cpu")
    assert loaders.info.std[2] == 1.0
    assert loaders.info.mean[2] == pytest.approx(50 / 255, abs=1e-6)
    x, _y = next(iter(loaders.val))
    # Blue 60 of a validation image: (60 - 50) / 255 away from the mean.
    torch.testing.assert_close(
        x[:, 2], torch.full_like(x[:, 2], 10 / 255), atol=1e-5, rtol=0
    )


def test_the_dataloader_path_leaves_unreadable_validation_files_out(tmp_path):
    root = tmp_path / "d"
    for name in ("a", "b"):
        for index in range(2):
            _save(root / "train" / name / f"{index}.png", _noise(index))
        _save(root / "val" / name / "0.png", _noise(9))
        _touch(root / "val" / name / "broken.png")
    loaders = build_loaders(_cfg(root, loader="dataloader"), "cpu")
    assert sorted(loaders.skipped) == [
        "val/a/broken.png: the file is empty (0 bytes)",
        "val/b/broken.png: the file is empty (0 bytes)",
    ]
    labels = torch.cat([y for _x, y in loaders.val])
    assert labels.tolist() == [0, 1]


@pytest.mark.parametrize("loader", LOADERS)
def test_a_folder_without_readable_validation_images_cannot_train(tmp_path, loader):
    root = tmp_path / "d"
    for name in ("a", "b"):
        _save(root / "train" / name / "0.png", _noise(1))
        _touch(root / "val" / name / "broken.png")
    with pytest.raises(DataError, match="leaves no readable images for validation"):
        build_loaders(_cfg(root, loader=loader), "cpu")


# ------------------------------------------------------------ the memory budget


def _budget_folder(root: Path) -> Path:
    """Four 8x8 images: 4 x 3 x 8 x 8 = 768 bytes decoded at image size 8."""
    for index, name in enumerate("aabb"):
        _save(root / name / f"{index}.png", _noise(index))
    return root


def test_the_budget_is_in_megabytes_and_counts_three_bytes_a_pixel(
    tmp_path, monkeypatch
):
    root = _budget_folder(tmp_path / "d")
    monkeypatch.setattr(folder_loading, "fallback_workers", lambda: 0)
    for budget, path in (
        (768 / 1024**2, "In memory"),  # exactly fits
        (767 / 1024**2, "From disk"),  # a byte short: a gray count would fit
    ):
        monkeypatch.setenv(MEMORY_BUDGET_ENV, repr(budget))
        assert build_loaders(_cfg(root), "cpu").path.startswith(path)
    monkeypatch.setenv(MEMORY_BUDGET_ENV, "0.0005")  # 524 bytes, not 537 kB
    assert build_loaders(_cfg(root), "cpu").path.startswith("From disk")


def test_over_the_budget_the_fast_path_reads_with_fallback_workers(
    tmp_path, monkeypatch
):
    root = _budget_folder(tmp_path / "d")
    monkeypatch.setenv(MEMORY_BUDGET_ENV, "0.0001")
    monkeypatch.setattr(folder_loading, "fallback_workers", lambda: 1)
    loaders = build_loaders(_cfg(root), "cpu")  # no batch asked: no process starts
    assert loaders.path.startswith("From disk through a DataLoader (1 workers)")
    assert loaders.train.loader.num_workers == 1


# ------------------------------------------------------------ notices and progress


def test_the_skipped_notice_names_three_files_and_counts_the_rest(tmp_path):
    root = tmp_path / "d"
    for split in ("train", "val"):
        for name in ("a", "b"):
            _save(root / split / name / "0.png", _noise(len(split) + ord(name)))
    for index in range(5):
        _touch(root / "train" / "ab"[index % 2] / f"broken{index}.png")
    loaders = build_loaders(_cfg(root), "cpu")
    (notice,) = [n for n in loaders.notices if n.startswith("Skipped")]
    assert notice.startswith(
        "Skipped 5 files that do not decode: train/a/broken0.png: "
    )
    assert notice.endswith(" and 2 more.")


def test_decoding_progress_ends_at_every_image(tmp_path):
    root = _budget_folder(tmp_path / "d")
    calls = []
    load_folder(root, image_size=8, progress=lambda *call: calls.append(call))
    assert calls[-1] == (4, 4)


# ------------------------------------------------------------ the cache


def test_another_validation_share_decodes_another_split(tmp_path):
    root = tmp_path / "d"
    for index in range(10):
        _save(root / "ab"[index // 5] / f"{index}.png", _noise(index))
    caches = tmp_path / "caches"
    first = load_folder(root, image_size=8, val_fraction=0.2, cache_dir=caches)
    other = load_folder(root, image_size=8, val_fraction=0.4, cache_dir=caches)
    assert not other.from_cache
    assert (len(first.arrays.test_labels), len(other.arrays.test_labels)) == (2, 4)
    again = load_folder(root, image_size=8, val_fraction=0.2, cache_dir=caches)
    assert again.from_cache
    assert len(again.arrays.test_labels) == 2


# ------------------------------------------------------------ a change of data


def test_a_change_of_data_names_added_removed_and_changed_files():
    before = DataFingerprint(
        {"a/0.png": "1", "a/1.png": "2", "b/0.png": "3", "b/1.png": "4"}
    )
    now = DataFingerprint(
        {"a/0.png": "x", "a/1.png": "y", "b/0.png": "z", "c/0.png": "5"}
    )
    assert before.difference(now) == (
        "1 file added (c/0.png); 1 file removed (b/1.png); "
        "3 files changed (a/0.png, a/1.png, b/0.png)"
    )
    assert now.difference(before) == (
        "1 file added (b/1.png); 1 file removed (c/0.png); "
        "3 files changed (a/0.png, a/1.png, b/0.png)"
    )
    more = DataFingerprint({f"a/{i}.png": "new" for i in range(4)})
    assert DataFingerprint({}).difference(more) == (
        "4 files added (a/0.png, a/1.png, a/2.png, and 1 more)"
    )
    assert before.difference(before) is None
