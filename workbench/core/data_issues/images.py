"""The images a data-issues pass looks at, each with a name the user can find.

An image folder's images are named by their path in the folder; a built-in
dataset's by split and index (``train #123``), the order its loaders read.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.core.config import TrainConfig
from workbench.core.data.fixes import apply_fixes, builtin_keys, folder_names, kept_rows
from workbench.core.data.folder import load_folder, scan_folder
from workbench.core.data.registry import FOLDER, ImageArrays, dataset_info
from workbench.core.data.sources import load_run_arrays


@dataclass(frozen=True, slots=True)
class NamedImages:
    """A dataset's uint8 images and labels, and a name for each image."""

    arrays: ImageArrays
    train_names: list[str]
    val_names: list[str]


def named_images(cfg: TrainConfig) -> NamedImages:
    """``cfg``'s training and validation images as its runs read them, named.

    The run's fixes (``cfg.fixes``) are applied: relabelled, excluded gone.
    """
    if cfg.dataset != FOLDER:
        arrays = load_run_arrays(cfg)
        keys = names = builtin_keys(arrays)
        class_names = dataset_info(cfg.dataset).class_names
    else:
        assert cfg.data_dir is not None  # validated by TrainConfig
        data = load_folder(
            cfg.data_dir,
            image_size=cfg.resolved_image_size,
            val_fraction=cfg.val_fraction,
            seed=cfg.seed,
        )
        arrays, class_names = data.arrays, data.info.class_names
        names = folder_names(cfg, scan_folder(cfg.data_dir), data.skipped)
        files = data.fingerprint.files
        keys = ([files[n] for n in names[0]], [files[n] for n in names[1]])
    fixed = apply_fixes(arrays, keys, cfg, class_names)
    train, val = (
        [split_names[row] for row in kept_rows(split_keys, cfg)]
        for split_names, split_keys in zip(names, keys, strict=True)
    )
    return NamedImages(fixed, train, val)
