"""One cross-validation's frozen-backbone features, computed once for all its folds.

Every fold run of a cross-validation builds the same model from the same seed;
with a frozen backbone each training image then has the same features in
every fold, and each is in K-1 folds' training images and one fold's
validation images. Inside :func:`sharing_features` the feature cache of a fold
run (:mod:`workbench.core.train.feature_cache`) takes the features an earlier
fold run of the same cross-validation kept, and keeps those it computes for
the next: the pass computes each image's features once instead of K times.

The numbers are the ones each fold run computes alone (its Reproduce runs
without sharing): a fold run computes its first batch even when every
feature of it is kept, and any batch it computes is compared bit for bit with
what is kept of it; a difference ends the sharing for the whole pass (the run
then computes all its own). Batches of one image are always computed and
never kept: this CPU's convolutions give such a batch other last bits than a
batch of two or more, whose features are the same whatever else is in it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from workbench.core.training_run import TrainingRun


class SharedFeatures:
    """The features of one cross-validation's training images, by training-split row.

    ``computed`` and ``taken`` count images: features computed and kept, and
    features a fold run took instead of computing them; ``off`` says why the
    sharing ended (None while it goes on).
    """

    def __init__(self) -> None:
        self.computed = 0
        self.taken = 0
        self.off: str | None = None
        self._key: tuple[object, ...] | None = None
        self._features: torch.Tensor | None = None
        self._known: torch.Tensor | None = None

    def rows_of(self, run: TrainingRun) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The training-split rows of ``run``'s training and validation samples.

        On ``run.device``; None when the run cannot share (not a fold run, or
        sharing ended). A fold run of another cross-validation (any setting
        but the fold differs) starts the store afresh.
        """
        held_out = run.loaders.held_out
        if held_out is None:
            return None
        total = run.loaders.train.num_samples + len(held_out)
        key = (run.config.replace(fold=0), str(run.device), run.precision, total)
        if key != self._key:
            self._key, self._features, self._known, self.off = key, None, None, None
        if self.off is not None:
            return None
        training = torch.ones(total, dtype=torch.bool)
        training[held_out] = False
        # fold_arrays keeps both parts in training-split order.
        rows = torch.arange(total)
        return rows[training].to(run.device), held_out.to(run.device)

    def has(self, rows: torch.Tensor) -> bool:
        """True when every row's features are kept (never for a single row)."""
        if self.off is not None or self._known is None or len(rows) < 2:
            return False
        return bool(self._known[rows].all())

    def take(self, rows: torch.Tensor) -> torch.Tensor:
        """The kept features of ``rows`` (all kept: see :meth:`has`)."""
        assert self._features is not None
        self.taken += len(rows)
        return self._features.index_select(0, rows)

    def keep(self, rows: torch.Tensor, features: torch.Tensor) -> bool:
        """Keep a computed batch; False (sharing ends) when it is not what is kept.

        A batch of one image is neither kept nor compared.
        """
        if self.off is not None or len(rows) < 2:
            return self.off is None
        if self._features is None or self._known is None:
            assert self._key is not None  # rows_of came first
            total = self._key[-1]
            assert isinstance(total, int)
            self._features = features.new_empty((total, *features.shape[1:]))
            self._known = torch.zeros(total, dtype=torch.bool, device=features.device)
        known = self._known[rows]
        if known.any() and not torch.equal(
            self._features[rows[known]], features[known]
        ):
            self.stop("a fold computed other features for the same images")
            return False
        self._features.index_copy_(0, rows, features)
        self.computed += int((~known).sum())
        self._known[rows] = True
        return True

    def stop(self, why: str) -> None:
        """End the sharing for the pass (each fold run computes its own from now)."""
        self.off = why
        self._features = self._known = None


_current: list[SharedFeatures] = []  # the innermost pass last


@contextlib.contextmanager
def sharing_features() -> Iterator[SharedFeatures]:
    """Fold runs started inside share their frozen backbone's features."""
    store = SharedFeatures()
    _current.append(store)
    try:
        yield store
    finally:
        _current.remove(store)


def current_store() -> SharedFeatures | None:
    """The store of the innermost :func:`sharing_features`, or None outside one."""
    return _current[-1] if _current else None
