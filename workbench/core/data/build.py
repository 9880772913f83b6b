"""The loaders a run asks for: its dataset, loader kind, batch size and device."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import torch
from torch.utils.data import Dataset

from workbench.core.crossval.folds import fold_of_run
from workbench.core.data.augment import augment_transform
from workbench.core.data.fixes import apply_fixes, builtin_keys
from workbench.core.data.folder_loading import folder_loaders
from workbench.core.data.loader_set import VAL_MIN_BATCH_SIZE, Loaders, fast_loaders
from workbench.core.data.loaders import (
    ArrayDataset,
    DataLoaderBatches,
    FastLoader,
    can_pin,
    standard_transform,
)
from workbench.core.data.registry import (
    FOLDER,
    TORCHVISION_CLASS_NAMES,
    CancelCallback,
    DatasetInfo,
    ImageArrays,
    ProgressCallback,
    dataset_info,
)
from workbench.core.data.sources import load_run_arrays, load_torchvision_splits
from workbench.core.models.inputs import fit_to_model

if TYPE_CHECKING:
    from workbench.core.config import TrainConfig

log = logging.getLogger(__name__)


def build_loaders(
    cfg: TrainConfig,
    device: torch.device | str,
    *,
    arrays: ImageArrays | None = None,
    progress: ProgressCallback | None = None,
    cancel: CancelCallback | None = None,
) -> Loaders:
    """Load ``cfg.dataset`` and build the loaders ``cfg.loader`` asks for.

    Parameters
    ----------
    cfg : TrainConfig
        Uses dataset, data_dir, download, loader, batch_size, workers, pin_memory
        and seed.
    device : torch.device or str
        Where batches are delivered.
    arrays : ImageArrays, optional
        Already-loaded data; skips loading from disk. The ``"dataloader"`` kind then
        wraps them in :class:`ArrayDataset` (same pixels and transform as the
        torchvision dataset it otherwise reads).
    progress, cancel
        Passed to :func:`download_dataset` if files must be downloaded.

    Returns
    -------
    Loaders

    Raises
    ------
    DataError, DownloadCancelled
        As :func:`load_arrays`.
    """
    device = torch.device(device)
    if cfg.dataset == FOLDER:
        return folder_loaders(cfg, device, progress=progress, cancel=cancel)
    held_out = None
    if cfg.folds > 1 or cfg.fixes:  # the per-sample path then reads these too
        if arrays is None:
            arrays = load_run_arrays(cfg, progress=progress, cancel=cancel)
        names = dataset_info(cfg.dataset).class_names
        arrays = apply_fixes(arrays, builtin_keys(arrays), cfg, names)
        arrays, held_out = fold_of_run(arrays, cfg, names)
    data = sized_info(dataset_info(cfg.dataset), cfg.resolved_image_size)
    info = fit_to_model(data, cfg.model, cfg.weights)
    # Pixel statistics of the data the inputs are prepared like (my-digits: base),
    # or of the pretrained weights.
    stats = fit_to_model(dataset_info(cfg.style_dataset), cfg.model, cfg.weights)
    notices: list[str] = []
    pin_memory = cfg.pin_memory
    if pin_memory and not can_pin(device):
        pin_memory = False
        notices.append(
            "pin_memory switched off: it only speeds up host-to-CUDA copies, "
            f"and this run uses {device}."
        )
    val_batch_size = max(cfg.batch_size, VAL_MIN_BATCH_SIZE)
    train: FastLoader | DataLoaderBatches
    val: FastLoader | DataLoaderBatches
    val_images: torch.Tensor | None
    if cfg.loader == "fast":
        if arrays is None:
            arrays = load_run_arrays(cfg, progress=progress, cancel=cancel)
        arrays = resized(arrays, info.image_shape[1])
        train, val = fast_loaders(cfg, device, arrays, stats, val_batch_size)
        notices.extend(_fast_loader_notices(train, pin_memory))
        val_images = arrays.test_images
    else:
        train_set, val_set = _per_sample_datasets(cfg, stats, arrays, progress, cancel)
        options: dict[str, Any] = {
            "seed": cfg.seed,
            "device": device,
            "num_workers": cfg.workers,
            "pin_memory": pin_memory,
        }
        train = DataLoaderBatches(
            train_set, batch_size=cfg.batch_size, shuffle=True, **options
        )
        val = DataLoaderBatches(
            val_set, batch_size=val_batch_size, shuffle=False, **options
        )
        val_images = _stored_images(val_set)
    for notice in notices:
        log.info("%s", notice)
    return Loaders(
        train=train,
        val=val,
        info=info,
        notices=tuple(notices),
        val_images=val_images,
        held_out=held_out,
    )


def sized_info(info: DatasetInfo, size: int) -> DatasetInfo:
    """``info`` for images brought to ``size`` x ``size`` (CIFAR-10 at 64, say)."""
    shape = (info.channels, size, size)
    return info if info.image_shape == shape else replace(info, image_shape=shape)


def resized(arrays: ImageArrays, size: int) -> ImageArrays:
    """``arrays`` brought to ``size`` x ``size``: resize, then centre crop."""
    if arrays.image_shape[1:] == (size, size):
        return arrays

    from torchvision.transforms.v2 import functional as F  # 1.5 s import: lazy

    def fit(images: torch.Tensor) -> torch.Tensor:
        x = images if images.dim() == 4 else images.unsqueeze(1)
        return F.center_crop(F.resize(x, size, antialias=True), [size, size])

    return ImageArrays(
        fit(arrays.train_images),
        arrays.train_labels,
        fit(arrays.test_images),
        arrays.test_labels,
    )


def _stored_images(dataset: Dataset[Any]) -> torch.Tensor | None:
    """The uint8 images a per-sample dataset reads (torchvision's or ours)."""
    images = getattr(dataset, "data", None)  # torchvision MNIST family
    if images is None:
        images = getattr(dataset, "images", None)  # ArrayDataset
    if images is None:
        return None
    return torch.as_tensor(images)


def _fast_loader_notices(train: FastLoader, pin_memory: bool) -> list[str]:
    if train.data_device.type != "cuda" and train.device.type == "cuda":
        return [
            "The dataset stays in host memory: it would take more than half of the "
            f"free memory on {train.device}. Each batch is copied over through "
            "pinned memory."
        ]
    if pin_memory:
        return [
            f"pin_memory has no effect here: the fast loader keeps the whole dataset "
            f"on {train.device}, so no batch is copied from the host."
        ]
    return []


def _per_sample_datasets(
    cfg: TrainConfig,
    info: DatasetInfo,
    arrays: ImageArrays | None,
    progress: ProgressCallback | None,
    cancel: CancelCallback | None,
) -> tuple[Dataset[Any], Dataset[Any]]:
    """The canonical per-sample pipeline: PIL image -> ToTensor -> Normalize.

    Training samples get ``cfg.augment``'s torchvision transforms first.
    """
    # Gray images repeated to the model's three channels (torchvision's models).
    to_rgb = dataset_info(cfg.dataset).channels < info.channels
    transform = standard_transform(info.mean, info.std, to_rgb=to_rgb)
    steps = augment_transform(cfg.augment, cfg.resolved_image_size)
    train_transform = standard_transform(info.mean, info.std, steps, to_rgb=to_rgb)
    if arrays is None and cfg.dataset in TORCHVISION_CLASS_NAMES:
        # The torchvision dataset object itself, as in the PyTorch tutorials.
        train_set, val_set = load_torchvision_splits(
            cfg.dataset,
            cfg.data_dir,
            download=cfg.download,
            progress=progress,
            cancel=cancel,
            transform=transform,
        )
        train_set.transform = train_transform
        return train_set, val_set
    if arrays is None:
        arrays = load_run_arrays(cfg, progress=progress, cancel=cancel)
    arrays = resized(arrays, cfg.resolved_image_size)
    return (
        ArrayDataset(
            arrays.train_images.numpy(), arrays.train_labels.numpy(), train_transform
        ),
        ArrayDataset(arrays.test_images.numpy(), arrays.test_labels.numpy(), transform),
    )
