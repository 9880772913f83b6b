"""The loaders of an image-folder run: decoded once in memory, or read per batch."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import torch

from workbench.core.crossval.folds import fold_of_run, fold_pairs
from workbench.core.data.augment import augment_transform
from workbench.core.data.fixes import (
    apply_fixes,
    apply_to_pairs,
    check_fixes_found,
    folder_keys,
)
from workbench.core.data.folder import (
    images_progress,
    load_folder,
    memory_budget,
    over_budget,
    scan_folder,
)
from workbench.core.data.folder_stream import FolderDataset, streamed_splits
from workbench.core.data.loader_set import VAL_MIN_BATCH_SIZE, Loaders, fast_loaders
from workbench.core.data.loaders import DataLoaderBatches, FastLoader, can_pin
from workbench.core.data.registry import CancelCallback, ProgressCallback
from workbench.core.models.inputs import fit_to_model

if TYPE_CHECKING:
    from workbench.core.config import TrainConfig

_SKIPPED_SHOWN = 3


def fallback_workers() -> int:
    """Workers for a folder too large for memory: all cores but one, at most 4."""
    return max(1, min(4, (os.cpu_count() or 2) - 1))


def folder_loaders(
    cfg: TrainConfig,
    device: torch.device,
    *,
    progress: ProgressCallback | None = None,
    cancel: CancelCallback | None = None,
) -> Loaders:
    """Scan ``cfg.data_dir``, decode it (or plan to read it per batch), build loaders.

    The in-memory path is taken when ``cfg.loader`` is ``"fast"`` and the decoded
    images fit :func:`memory_budget`; otherwise a ``DataLoader`` decodes files
    per batch. ``Loaders.path`` says which and why.
    """
    assert cfg.data_dir is not None  # validated by TrainConfig
    size = cfg.resolved_image_size
    listing = scan_folder(cfg.data_dir)
    decoding = images_progress(progress, listing.root.name)
    over = over_budget(listing, size)
    notices: list[str] = []
    val_batch_size = max(cfg.batch_size, VAL_MIN_BATCH_SIZE)
    if cfg.loader == "fast" and over is None:
        data = load_folder(
            listing.root,
            image_size=size,
            val_fraction=cfg.val_fraction,
            seed=cfg.seed,
            progress=decoding,
            cancel=cancel,
        )
        arrays = data.arrays
        if cfg.fixes:
            keys = folder_keys(cfg, listing, data.skipped, data.fingerprint.files)
            arrays = apply_fixes(arrays, keys, cfg, data.info.class_names)
        arrays, held_out = fold_of_run(arrays, cfg, data.info.class_names)
        train: FastLoader | DataLoaderBatches
        val: FastLoader | DataLoaderBatches
        info = fit_to_model(data.info, cfg.model, cfg.weights)
        train, val = fast_loaders(cfg, device, arrays, info, val_batch_size)
        megabytes = (arrays.train_images.numel() + arrays.test_images.numel()) / 1024**2
        source = "read from the disk cache" if data.from_cache else "decoded once"
        path = (
            f"In memory: {len(arrays.train_labels) + len(arrays.test_labels):,} "
            f"images {source}, {megabytes:,.0f} MB of the "
            f"{memory_budget() / 1024**2:,.0f} MB budget."
        )
        skipped, fingerprint = data.skipped, data.fingerprint
        if data.cache_note:
            notices.append(data.cache_note[0].upper() + data.cache_note[1:] + ".")
        val_images: torch.Tensor | None = arrays.test_images
    else:
        from torchvision.transforms import v2  # 1.5 s import: this path only

        streamed = streamed_splits(
            listing,
            image_size=size,
            val_fraction=cfg.val_fraction,
            seed=cfg.seed,
            progress=decoding,
            cancel=cancel,
        )
        info = fit_to_model(streamed.info, cfg.model, cfg.weights)
        train_pairs, val_pairs, held_out = streamed.train, streamed.val, None
        if cfg.fixes:
            names = info.class_names
            files = streamed.fingerprint.files
            keys = [
                [files[listing.relative(path)] for path, _label in pairs]
                for pairs in (train_pairs, val_pairs)
            ]
            check_fixes_found(cfg, keys[0] + keys[1], names)
            train_pairs = apply_to_pairs(train_pairs, keys[0], cfg, names)
            val_pairs = apply_to_pairs(val_pairs, keys[1], cfg, names)
        if cfg.folds > 1:
            train_pairs, val_pairs, held_out = fold_pairs(
                train_pairs, cfg, info.class_names
            )
        skipped = streamed.skipped
        fingerprint = streamed.fingerprint
        # The fast path chosen but over budget: decode in parallel processes.
        workers = cfg.workers if cfg.loader == "dataloader" else fallback_workers()
        pin_memory = cfg.pin_memory and can_pin(device)
        options = {
            "seed": cfg.seed,
            "device": device,
            "num_workers": workers,
            "pin_memory": pin_memory,
        }
        train = DataLoaderBatches(
            FolderDataset(
                train_pairs,
                size,
                info,
                v2.Compose(augment_transform(cfg.augment, size))
                if cfg.augment
                else None,
            ),
            batch_size=cfg.batch_size,
            shuffle=True,
            **options,
        )
        val = DataLoaderBatches(
            FolderDataset(val_pairs, size, info),
            batch_size=val_batch_size,
            shuffle=False,
            **options,
        )
        why = over if over is not None else "the DataLoader loader was chosen"
        path = (
            f"From disk through a DataLoader ({workers} workers), each file "
            f"decoded per batch: {why}."
        )
        val_images = None
    if skipped:
        shown = "; ".join(skipped[:_SKIPPED_SHOWN])
        count = len(skipped)
        more = f" and {count - _SKIPPED_SHOWN} more" if count > _SKIPPED_SHOWN else ""
        files = "1 file that does" if count == 1 else f"{count} files that do"
        notices.append(f"Skipped {files} not decode: {shown}{more}.")
    notices.append(path)
    return Loaders(
        train=train,
        val=val,
        info=info,
        notices=tuple(notices),
        val_images=val_images,
        fingerprint=fingerprint,
        skipped=skipped,
        path=path,
        held_out=held_out,
    )
