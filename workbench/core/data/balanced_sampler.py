"""The training split's class counts, and the balanced sampler built on them.

The sampler gives each training sample the weight 1 / (its class's count), so
the samples of every class weigh 1 together; each epoch then draws as many
samples as the split holds, with replacement (``loaders._epoch_order``),
seeded by the run's seed and the epoch. Both loaders draw the same indices,
several processes cut the same draw into their shards, and a checkpoint pins
the interrupted epoch's draw, so a resumed run continues exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from workbench.core.data.loaders import DataLoaderBatches, FastLoader
from workbench.core.data.registry import DataError, DatasetInfo

# torch.multinomial draws from at most this many categories (samples).
MAX_SAMPLES = 2**24


def training_labels(loader: FastLoader | DataLoaderBatches) -> torch.Tensor:
    """The label of every training sample, int64 on the CPU, in index order."""
    if isinstance(loader, FastLoader):
        return loader.labels
    dataset: Any = loader.dataset
    for name in ("targets", "labels"):  # torchvision's MNIST family; ArrayDataset
        labels = getattr(dataset, name, None)
        if labels is not None:
            return torch.as_tensor(np.asarray(labels), dtype=torch.int64)
    pairs = getattr(dataset, "pairs", None)  # an image folder read per batch
    if pairs is not None:
        return torch.tensor([label for _path, label in pairs], dtype=torch.int64)
    raise DataError(
        f"cannot count the classes of {type(dataset).__name__}: it lists no labels"
    )


def class_counts(labels: torch.Tensor, num_classes: int) -> torch.Tensor:
    """Samples of each class (int64, ``num_classes`` long)."""
    return torch.bincount(labels.cpu(), minlength=num_classes)[:num_classes]


def check_every_class(counts: torch.Tensor, info: DatasetInfo, setting: str) -> None:
    """:class:`DataError` naming the classes without a training image.

    ``setting`` is what needs them (``class weights balanced``).
    """
    empty = [info.class_names[i] for i, n in enumerate(counts.tolist()) if n == 0]
    if empty:
        listed = ", ".join(empty[:5]) + (" ..." if len(empty) > 5 else "")
        raise DataError(
            f"{setting} needs every class in the training split, and class "
            f"{listed} has no training images: add some, or train without it"
        )


def balance(loader: FastLoader | DataLoaderBatches, info: DatasetInfo) -> None:
    """Make ``loader`` draw every class equally often (see the module docstring)."""
    labels = training_labels(loader)
    if len(labels) > MAX_SAMPLES:
        raise DataError(
            f"the balanced sampler draws from at most {MAX_SAMPLES:,} training "
            f"images; this split has {len(labels):,}: use class weights instead"
        )
    counts = class_counts(labels, info.num_classes)
    check_every_class(counts, info, "the balanced sampler")
    loader.sample_weights = 1.0 / counts.double()[labels]
