"""The train and validation loaders of one run, with what the user should know."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from workbench.core.data.augment import BatchAugment
from workbench.core.data.folder import DataFingerprint
from workbench.core.data.loaders import DataLoaderBatches, FastLoader
from workbench.core.data.registry import DatasetInfo, ImageArrays

if TYPE_CHECKING:
    from workbench.core.config import TrainConfig

# Validation batches are at least this large: no gradients, so memory allows it.
VAL_MIN_BATCH_SIZE = 1024


@dataclass(frozen=True, slots=True)
class Loaders:
    """The train and validation loaders of one run.

    Attributes
    ----------
    train, val : FastLoader or DataLoaderBatches
        Training batches (shuffled) and test-split batches (natural order).
    info : DatasetInfo
        The dataset they read.
    notices : tuple of str
        Messages to show the user once, e.g. a setting that was switched off.
    val_images : torch.Tensor or None
        The validation images as stored, uint8 (N, H, W) or (N, C, H, W) in
        ``val``'s order: what the evaluation view shows for a confusion-matrix cell.
    fingerprint : DataFingerprint or None
        The files an image-folder run reads (None for the built-in datasets).
    skipped : tuple of str
        Files of an image folder that did not decode, each with the reason.
    path : str
        Which loading path the run takes and why, in a sentence.
    held_out : torch.Tensor or None
        A fold run's (``workbench.core.crossval``): the training-split index
        of each validation image, in ``val``'s order; None for other runs.
    """

    train: FastLoader | DataLoaderBatches
    val: FastLoader | DataLoaderBatches
    info: DatasetInfo
    notices: tuple[str, ...]
    val_images: torch.Tensor | None = None
    fingerprint: DataFingerprint | None = None
    skipped: tuple[str, ...] = ()
    path: str = ""
    held_out: torch.Tensor | None = None

    def release_workers(self) -> None:
        """Stop any DataLoader worker processes (a run that stopped or ended)."""
        for loader in (self.train, self.val):
            if isinstance(loader, DataLoaderBatches):
                loader.release_workers()


def fast_loaders(
    cfg: TrainConfig,
    device: torch.device,
    arrays: ImageArrays,
    info: DatasetInfo,
    val_batch_size: int,
) -> tuple[FastLoader, FastLoader]:
    """Shuffled training and in-order validation batches of ``arrays``.

    Normalised with ``info``'s statistics; training batches get ``cfg.augment``.
    """
    common: dict[str, Any] = {
        "seed": cfg.seed,
        "device": device,
        "mean": info.mean,
        "std": info.std,
    }
    train = FastLoader(
        arrays.train_images,
        arrays.train_labels,
        batch_size=cfg.batch_size,
        shuffle=True,
        augment=batch_augment(cfg, info),
        **common,
    )
    val = FastLoader(
        arrays.test_images,
        arrays.test_labels,
        batch_size=val_batch_size,
        shuffle=False,
        **common,
    )
    return train, val


def batch_augment(cfg: TrainConfig, info: DatasetInfo) -> BatchAugment | None:
    """The fast path's augmentation of training batches (None: none chosen)."""
    return BatchAugment(cfg.augment, info.mean, info.std) if cfg.augment else None
