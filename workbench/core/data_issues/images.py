"""The images a data-issues pass looks at, each with a name the user can find.

An image folder's images are named by their path in the folder; a built-in
dataset's by split and index (``train #123``), the order its loaders read.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.core.config import TrainConfig
from workbench.core.data.folder import load_folder, scan_folder, split_pairs
from workbench.core.data.registry import FOLDER, ImageArrays
from workbench.core.data.sources import load_run_arrays


@dataclass(frozen=True, slots=True)
class NamedImages:
    """A dataset's uint8 images and labels, and a name for each image."""

    arrays: ImageArrays
    train_names: list[str]
    val_names: list[str]


def named_images(cfg: TrainConfig) -> NamedImages:
    """``cfg``'s training and validation images as its runs read them, named."""
    if cfg.dataset != FOLDER:
        arrays = load_run_arrays(cfg)
        return NamedImages(
            arrays,
            [f"train #{i}" for i in range(len(arrays.train_labels))],
            [f"val #{i}" for i in range(len(arrays.test_labels))],
        )
    assert cfg.data_dir is not None  # validated by TrainConfig
    data = load_folder(
        cfg.data_dir,
        image_size=cfg.resolved_image_size,
        val_fraction=cfg.val_fraction,
        seed=cfg.seed,
    )
    listing = scan_folder(cfg.data_dir)
    skipped = {entry.split(": ", 1)[0] for entry in data.skipped}
    train, val = (
        [
            name
            for name in (listing.relative(path) for path, _label in pairs)
            if name not in skipped
        ]
        for pairs in split_pairs(listing, cfg.val_fraction, cfg.seed)
    )
    return NamedImages(data.arrays, train, val)
