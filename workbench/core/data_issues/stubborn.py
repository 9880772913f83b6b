"""Stubborn errors: images that every finished run on the same data gets wrong.

A label error or an image that does not belong tends to defeat every model, not
one: each finished run of the ledger on the same data (the same dataset, folder
split, image size and fixes, not a fold run) reads every image with its latest
weights, and the images none of them reads as labelled are listed. Training
images count too: a model that trained on an image and still calls it another
class is a strong sign.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from workbench.core.checkpoints.io import (
    CheckpointError,
    eval_model,
    info_of,
    load_checkpoint,
)
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.loaders import FastLoader
from workbench.core.data_issues.images import NamedImages
from workbench.core.runs.listing import list_runs

# What makes two runs' data the same images with the same labels.
_DATA_FIELDS = ("dataset", "data_dir", "val_fraction", "fixes")
MAX_RUNS = 20  # the newest finished runs on the same data


@dataclass(frozen=True, slots=True)
class Stubborn:
    """Rows (training then validation images) every run in ``runs`` got wrong."""

    rows: np.ndarray
    runs: tuple[str, ...]


def _same_data(cfg: TrainConfig, other: TrainConfig) -> bool:
    if other.folds > 1:
        return False
    if any(getattr(cfg, f) != getattr(other, f) for f in _DATA_FIELDS):
        return False
    if cfg.dataset == "folder" and cfg.seed != other.seed:
        return False  # the seed draws a folder's validation split
    return cfg.resolved_image_size == other.resolved_image_size


def stubborn_errors(
    cfg: TrainConfig, images: NamedImages, root: Path | None = None
) -> Stubborn:
    """The images every finished run on ``cfg``'s data reads as another class.

    No such run: no rows (and no runs named).
    """
    arrays = images.arrays
    pixels = torch.cat([arrays.train_images, arrays.test_images])
    labels = torch.cat([arrays.train_labels, arrays.test_labels])
    wrong = torch.ones(len(labels), dtype=torch.bool)
    used: list[str] = []
    for run in list_runs(root):
        if len(used) == MAX_RUNS:
            break
        if run.status != "finished" or not run.folder.checkpoint_path.is_file():
            continue
        try:
            other = TrainConfig.from_dict(run.config)
            if not _same_data(cfg, other):
                continue
            payload = load_checkpoint(run.folder.checkpoint_path)
            info = info_of(payload)
            if tuple(info.image_shape[1:]) != tuple(pixels.shape[-2:]):
                continue
            model = eval_model(payload)
        except (ConfigError, CheckpointError):
            continue  # a damaged run is no evidence either way
        wrong &= _predicted(model, pixels, labels, info) != labels
        used.append(run.id)
    if not used:
        return Stubborn(np.zeros(0, dtype=np.int64), ())
    return Stubborn(torch.nonzero(wrong).flatten().numpy(), tuple(used))


@torch.no_grad()
def _predicted(
    model: torch.nn.Module, pixels: torch.Tensor, labels: torch.Tensor, info
) -> torch.Tensor:
    """``model``'s class for each image, normalised as its run fed them."""
    loader = FastLoader(
        pixels,
        labels,
        batch_size=1024,
        shuffle=False,
        seed=0,
        device="cpu",
        mean=info.mean,
        std=info.std,
    )
    return torch.cat([model(x).argmax(dim=1) for x, _y in loader])
