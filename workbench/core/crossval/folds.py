"""K stratified, seeded, disjoint folds over a run's training images.

Fold ``f`` of ``K`` holds out its share of every class; the run trains on the
other ``K - 1`` folds and validates on it. The same labels, ``K`` and seed give
the same folds on every machine (a seeded CPU permutation), so each fold run
is reproduced from its config alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from workbench.core.data.registry import DataError, ImageArrays

if TYPE_CHECKING:
    from workbench.core.config import TrainConfig


def check_folds(
    labels: Sequence[int] | np.ndarray, k: int, names: Sequence[str]
) -> None:
    """:class:`DataError` unless every class has at least ``k`` training images.

    A fold without some class would validate on fewer classes than it trains.
    """
    counts = np.bincount(np.asarray(labels, dtype=np.int64), minlength=len(names))
    smallest = int(counts.argmin())
    if counts[smallest] < k:
        raise DataError(
            f"{k} folds need at least {k} training images of every class: "
            f"class {names[smallest]!r} has {int(counts[smallest])}"
        )


def fold_of_each(labels: Sequence[int] | np.ndarray, k: int, seed: int) -> np.ndarray:
    """The fold (0..k-1) of every image: stratified, seeded, sizes within one.

    Each class's images, in a seeded random order, are dealt to the folds in
    turn; each class starts where the previous one stopped, so the folds' sizes
    differ by at most one image and each class's share by at most one too.
    """
    labels = np.asarray(labels, dtype=np.int64)
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(labels), generator=generator).numpy()
    folds = np.empty(len(labels), dtype=np.int64)
    start = 0
    for label in np.unique(labels):
        members = order[labels[order] == label]
        folds[members] = (start + np.arange(len(members))) % k
        start = (start + len(members)) % k
    return folds


def fold_split(
    labels: Sequence[int] | np.ndarray, k: int, fold: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(training indices, held-out indices) of fold ``fold``, each ascending."""
    folds = fold_of_each(labels, k, seed)
    return np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)


def fold_arrays(arrays: ImageArrays, k: int, fold: int, seed: int) -> ImageArrays:
    """``arrays`` with fold ``fold`` of the training split as its validation split.

    The dataset's own validation split is not used: it stays unseen by every
    fold (the fold models' ensemble is verified on it).
    """
    train, held_out = (
        torch.from_numpy(index)
        for index in fold_split(arrays.train_labels.numpy(), k, fold, seed)
    )
    return ImageArrays(
        arrays.train_images[train],
        arrays.train_labels[train],
        arrays.train_images[held_out],
        arrays.train_labels[held_out],
    )


def fold_of_run(
    arrays: ImageArrays, cfg: TrainConfig, names: Sequence[str]
) -> tuple[ImageArrays, torch.Tensor | None]:
    """The arrays fold run ``cfg`` reads, and the training-split index of each
    held-out image; ``(arrays, None)`` outside cross-validation.

    Raises
    ------
    DataError
        A class has fewer training images than there are folds.
    """
    if cfg.folds < 2:
        return arrays, None
    labels = arrays.train_labels.numpy()
    check_folds(labels, cfg.folds, names)
    held_out = fold_split(labels, cfg.folds, cfg.fold, cfg.seed)[1]
    return fold_arrays(arrays, cfg.folds, cfg.fold, cfg.seed), torch.from_numpy(
        held_out
    )


def fold_pairs(
    pairs: list[tuple[Path, int]], cfg: TrainConfig, names: Sequence[str]
) -> tuple[list[tuple[Path, int]], list[tuple[Path, int]], torch.Tensor]:
    """(training, held-out) ``(path, label)`` pairs of fold run ``cfg``, and the
    held-out pairs' places in ``pairs``.

    A folder read per batch: the same folds as its in-memory twin, whose
    training images are these pairs in this order.
    """
    labels = [label for _path, label in pairs]
    check_folds(labels, cfg.folds, names)
    train, held_out = fold_split(labels, cfg.folds, cfg.fold, cfg.seed)
    return (
        [pairs[i] for i in train],
        [pairs[i] for i in held_out],
        torch.from_numpy(held_out),
    )
