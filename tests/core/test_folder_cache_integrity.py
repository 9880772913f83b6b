"""The decoded-image cache proves its content, and a disk that cannot hold it
costs only the next run's decode (issue 34, items 1 and 15)."""

from __future__ import annotations

import pytest
import torch

from tests.image_folders import make_folder
from workbench.core.config import TrainConfig
from workbench.core.data.folder import CACHE_FOLDER, load_folder
from workbench.core.data.folder_loading import folder_loaders

pytestmark = pytest.mark.usefixtures("data_dir")


def _overwrite_pixels(cache_file, images: torch.Tensor) -> None:
    """Change 64 bytes of the stored training images in place, zip left valid."""
    content = bytearray(cache_file.read_bytes())
    pixels = images.contiguous().numpy().tobytes()
    piece = pixels[512:576]
    at = content.find(piece)
    assert content.count(piece) == 1, "the stored pixels are not found once"
    content[at : at + len(piece)] = bytes(255 - b for b in piece)
    cache_file.write_bytes(bytes(content))


def test_a_cache_with_other_pixels_is_refused_and_rebuilt(tmp_path, data_dir):
    root = make_folder(tmp_path / "d", 2, 8)
    first = load_folder(root, image_size=16)
    (cache_file,) = (data_dir / CACHE_FOLDER).glob("*.pt")
    _overwrite_pixels(cache_file, first.arrays.train_images)
    # Still a loadable file with other pixels: only a digest can tell.
    damaged = torch.load(cache_file, weights_only=True)["train_images"]
    assert not torch.equal(damaged, first.arrays.train_images)

    again = load_folder(root, image_size=16)
    assert not again.from_cache
    assert "damaged" in again.cache_note
    assert "decoded again" in again.cache_note
    assert torch.equal(again.arrays.train_images, first.arrays.train_images)
    # Rebuilt: the next load reads a cache that passes its check.
    third = load_folder(root, image_size=16)
    assert third.from_cache
    assert third.cache_note == ""
    assert torch.equal(third.arrays.train_images, first.arrays.train_images)


def test_a_run_says_its_cache_was_damaged(tmp_path, data_dir):
    root = make_folder(tmp_path / "d", 2, 8)
    first = load_folder(root, image_size=16)
    (cache_file,) = (data_dir / CACHE_FOLDER).glob("*.pt")
    _overwrite_pixels(cache_file, first.arrays.train_images)
    cfg = TrainConfig(dataset="folder", data_dir=str(root), image_size=16, seed=0)
    loaders = folder_loaders(cfg, torch.device("cpu"))
    assert any("cache was damaged" in n for n in loaders.notices)
    assert any("images decoded once" in n for n in loaders.notices)


def test_a_full_disk_under_the_cache_trains_without_it_and_says_so(
    tmp_path, small_disk, monkeypatch
):
    monkeypatch.setenv("PTCORE_DATA_DIR", str(small_disk.path / "data"))
    (small_disk.path / "data" / CACHE_FOLDER).mkdir(parents=True)
    root = make_folder(tmp_path / "d", 2, 8, size=40)
    small_disk.fill()
    cfg = TrainConfig(dataset="folder", data_dir=str(root), image_size=32, seed=0)
    loaders = folder_loaders(cfg, torch.device("cpu"))
    note = next(n for n in loaders.notices if "not cached" in n)
    assert "the disk is full" in note
    assert "the next run decodes them again" in note
    assert loaders.train.num_samples + loaders.val.num_samples == 16
    assert list((small_disk.path / "data" / CACHE_FOLDER).iterdir()) == []
