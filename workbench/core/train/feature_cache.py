"""Train only the head on kept features when the frozen backbone cannot change them.

When every parameter before the head is frozen, nothing random runs before it
(no augmentation, no active dropout, no BatchNorm in train mode) and the model
is not compiled, the head's input for an image is the same at every step.
:class:`FeatureFeed` computes it once per training sample (a forward pre-hook on
the head captures it, so the model's own pooling and flatten are included),
keeps it on the run's device, and feeds the head batches of it in exactly the
uncached run's order and batch boundaries (the loader's ``epoch_order``, so a
mid-epoch resume and a pinned order still hold). If the freeze mask changes so
the conditions fail, the feed falls back to the loader's images from that batch.

bf16/fp16 are handled: the features are computed under the run's autocast and
kept in the dtype the head would receive. ``torch.compile`` switches the cache
off (the head would train uncompiled, a different program than asked for).

Validation (:meth:`FeatureFeed.evaluate`) runs the head on the validation
images' features, computed once in eval mode and full precision in the
validation loader's own batches, when the model's output is its head's output
to the bit: the numbers :func:`evaluate_predictions` computes through the whole
model. A fold run of a cross-validation inside
:func:`~workbench.core.crossval.shared_features.sharing_features` takes the
training features an earlier fold run computed, and keeps its own (those of
its held-out images too) for the folds after it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Callable, Generator, Iterator
from typing import NamedTuple

import torch
from torch import nn

from workbench.core.crossval.shared_features import SharedFeatures, current_store
from workbench.core.data.loaders import split_batches
from workbench.core.events import Evaluation, FeaturesProgress
from workbench.core.models.builtins import head_name
from workbench.core.train.freezing import train_mode
from workbench.core.train.probes import (
    autocast_context,
    evaluate_predictions,
    sync_device,
)
from workbench.core.training_run import TrainingRun

PREFIX = "feature cache: "
IS_TRAINABLE = " is trainable"  # "off: <parameter> is trainable"

Batches = Iterator[tuple[torch.Tensor, torch.Tensor]]


def trainable_before_head(model: nn.Module) -> str | None:
    """The first trainable parameter outside the head, or None.

    While there is one the cache stays off, whatever else the run does.
    """
    inside = head_name(model) + "."
    for name, param in model.named_parameters():
        if param.requires_grad and not name.startswith(inside):
            return name
    return None


def backbone_blocker(model: nn.Module) -> str | None:
    """Why the head's input could change between two steps, or None.

    Reads the modules' current modes: call it after ``train_mode(model)``.
    """
    head = head_name(model)
    if not head:
        return "the model has no head module"
    trainable = trainable_before_head(model)
    if trainable is not None:
        return f"{trainable}{IS_TRAINABLE}"
    inside = head + "."
    for name, module in model.named_modules():
        if not module.training or name == head or name.startswith(inside):
            continue
        if _is_dropout(module):
            return f"{name} is active dropout before the head"
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            return f"{name} is BatchNorm in train mode before the head"
    return None


def _is_dropout(module: nn.Module) -> bool:
    # torchvision's StochasticDepth (EfficientNet, ConvNeXt) drops whole samples.
    if isinstance(module, nn.modules.dropout._DropoutNd):
        return module.p > 0
    return type(module).__name__ == "StochasticDepth" and getattr(module, "p", 0) > 0


def run_blocker(run: TrainingRun) -> str | None:
    """Why ``run`` cannot train on cached features, or None (modes set here)."""
    cfg = run.config
    if cfg.feature_cache == "off":
        return "turned off"
    if run.finished:
        return "nothing left to train"
    if cfg.augment:
        return "augmentation is on"
    if cfg.compile:
        return "torch.compile is on"
    if cfg.balanced_sampler:
        # An epoch's draw leaves some samples out: their features would be unset.
        return "the balanced sampler is on"
    if run.ddp is not None:
        # The head alone would train outside DDP: no gradient averaging.
        return "several processes train"
    train_mode(run.model)
    return backbone_blocker(run.model)


class _Sharing(NamedTuple):
    """A fold run's place in its cross-validation's shared features."""

    store: SharedFeatures
    train_rows: torch.Tensor  # the training-split row of each training sample
    val_rows: torch.Tensor  # ... and of each validation sample


class FeatureFeed:
    """The training batches of a run: cached features for the head, or images.

    Build it with :meth:`start`; ``status`` is the one-line report.
    """

    def __init__(self, run: TrainingRun, status: str) -> None:
        self.run = run
        self.status = status
        self.features: torch.Tensor | None = None
        self.labels: torch.Tensor | None = None
        self.seconds = 0.0
        self._head: nn.Module | None = None
        # True when the model's eval-mode output is its head's, to the bit.
        self._head_is_output = False
        # The validation batches' (features, labels), once computed.
        self._val_batches: list[tuple[torch.Tensor, torch.Tensor]] | None = None

    @property
    def active(self) -> bool:
        """True while the head trains on the cached features."""
        return self.features is not None

    @classmethod
    def start(
        cls, run: TrainingRun, stop: Callable[[], bool] = lambda: False
    ) -> FeatureFeed:
        """:meth:`prepare` without its progress reports."""
        preparing = cls.prepare(run, stop)
        while True:
            try:
                next(preparing)
            except StopIteration as done:
                return done.value

    @classmethod
    def prepare(
        cls, run: TrainingRun, stop: Callable[[], bool] = lambda: False
    ) -> Generator[FeaturesProgress, None, FeatureFeed]:
        """Decide, compute the features if the cache applies, and say which.

        Yields the computation's progress (none when the cache does not apply);
        returns the feed. The status goes into ``run.notices`` (replacing an
        earlier one) when the cache is on, when it was asked for, or when
        something is frozen; a run that trains everything under ``auto`` is not
        told about it.
        """
        why = run_blocker(run)
        feed = cls(run, "")
        if why is None:
            why = yield from feed._compute(stop)
        if why is None:
            assert feed.features is not None
            size = "x".join(str(n) for n in feed.features.shape[1:])
            feed.status = (
                f"{PREFIX}on ({len(feed.features):,} features of size {size}, "
                f"computed in {feed.seconds:.1f} s)"
            )
        else:
            asked = " (asked for on; the full model trains)"
            feed.status = f"{PREFIX}off: {why}" + (
                asked if run.config.feature_cache == "on" else ""
            )
        run.notices[:] = [n for n in run.notices if not n.startswith(PREFIX)]
        frozen = any(not p.requires_grad for p in run.model.parameters())
        if feed.active or run.config.feature_cache != "auto" or frozen:
            run.notices.append(feed.status)
        return feed

    def _compute(
        self, stop: Callable[[], bool]
    ) -> Generator[FeaturesProgress, None, str | None]:
        """Fill ``features`` and ``labels`` per training sample; else why not.

        A fold run sharing its cross-validation's features also computes its
        validation samples' training features, for the folds that train on them.
        """
        run = self.run
        head = run.model.get_submodule(head_name(run.model))
        capture = _Capture(head)
        started = time.perf_counter()
        store = current_store()
        rows = None if store is None else store.rows_of(run)
        sharing = None if store is None or rows is None else _Sharing(store, *rows)
        taken = 0 if store is None else store.taken
        try:
            why = yield from self._all_features(capture, stop, sharing)
            if store is not None and store.off is not None and store.taken > taken:
                # A batch was not what was kept of it: what this run took from
                # the store may not be its own numbers.
                why = yield from self._all_features(capture, stop, None)
        finally:
            capture.remove()
            train_mode(run.model)
        if why is None:
            sync_device(run.device)
            self.seconds = time.perf_counter() - started
            self._head = head
        else:
            self.features = self.labels = None
        return why

    def _all_features(
        self, capture: _Capture, stop: Callable[[], bool], sharing: _Sharing | None
    ) -> Generator[FeaturesProgress, None, str | None]:
        """The training features; sharing, the held-out images' ones too."""
        why = yield from self._training_features(capture, stop, sharing)
        if why is None and sharing is not None and sharing.store.off is None:
            why = yield from self._held_out_features(capture, stop, sharing)
        return why

    def _training_features(
        self, capture: _Capture, stop: Callable[[], bool], sharing: _Sharing | None
    ) -> Generator[FeaturesProgress, None, str | None]:
        run, model = self.run, self.run.model
        loader = run.loaders.train
        loader.set_epoch(run.epoch)
        # In the current epoch's own batches: its features are the very numbers
        # the uncached run computes this epoch.
        order = loader.epoch_order().to(run.device)
        features = labels = None
        done = 0
        total = loader.num_samples + (0 if sharing is None else len(sharing.val_rows))
        yield FeaturesProgress(done, total)
        with torch.no_grad(), autocast_context(run.precision, run.device):
            cuts = split_batches(order, loader.batch_size)
            for (x, y), index in zip(loader.iter_from(0), cuts, strict=True):
                if stop():
                    return "stopped while computing the features"
                rows = None if sharing is None else sharing.train_rows[index]
                # The first batch is computed even when kept: it checks the rest.
                feat = None if features is None else _kept(sharing, rows)
                if feat is None:
                    if features is None:
                        first = _check_first_batch(model, capture, x)
                        if first.why is not None:
                            return first.why
                        self._head_is_output = first.head_is_output
                        feat = first.features
                    else:
                        feat = capture.features(model, x)
                    assert feat is not None  # _check_first_batch saw it reached
                    _keep(sharing, rows, feat)
                if features is None:
                    why = _too_big(feat, loader.num_samples, run.device)
                    if why is not None:
                        return why
                    features = feat.new_empty((loader.num_samples, *feat.shape[1:]))
                    labels = torch.empty(
                        loader.num_samples, dtype=torch.int64, device=run.device
                    )
                features.index_copy_(0, index, feat)
                labels.index_copy_(0, index, y.to(run.device))
                done += len(index)
                yield FeaturesProgress(done, total)
        if features is None or labels is None:
            return "the training set is empty"
        self.features, self.labels = features, labels
        return None

    def _held_out_features(
        self, capture: _Capture, stop: Callable[[], bool], sharing: _Sharing
    ) -> Generator[FeaturesProgress, None, str | None]:
        """Keep the training features of the validation samples (a fold run's
        held-out images) the store lacks: the other folds train on them."""
        run = self.run
        val = run.loaders.val
        done = run.loaders.train.num_samples
        total = done + val.num_samples
        cuts = split_batches(val.epoch_order().to(run.device), val.batch_size)
        with torch.no_grad(), autocast_context(run.precision, run.device):
            for (x, _y), index in zip(val, cuts, strict=True):
                if stop():
                    return "stopped while computing the features"
                rows = sharing.val_rows[index]
                if not sharing.store.has(rows):
                    feat = capture.features(run.model, x)
                    assert feat is not None
                    sharing.store.keep(rows, feat)
                done += len(index)
                yield FeaturesProgress(done, total)
        return None

    def _validation_features(
        self, capture: _Capture
    ) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The validation batches' (head inputs, labels), as validation computes
        them: in eval mode, in full precision, in the validation loader's batches.
        """
        model = self.run.model
        model.eval()
        batches = []
        with torch.no_grad():
            for x, y in self.run.loaders.val:
                feat = capture.features(model, x)
                assert feat is not None
                batches.append((feat, y))
        train_mode(model)
        return batches

    def iter_from(self, start_batch: int) -> Batches:
        """The current epoch's batches from ``start_batch``, as the loader cuts them."""
        loader = self.run.loaders.train
        if self.features is None:
            yield from loader.iter_from(start_batch)
            return
        order = loader.epoch_order()[start_batch * loader.batch_size :]
        order = order.to(self.features.device)
        for batch, index in enumerate(
            split_batches(order, loader.batch_size), start_batch
        ):
            if self.features is None or self.labels is None:
                # Fell back mid-epoch: the loader's images from this batch on.
                yield from loader.iter_from(batch)
                return
            yield (
                self.features.index_select(0, index),
                self.labels.index_select(0, index),
            )

    def forward(self, model: nn.Module, x: torch.Tensor) -> torch.Tensor:
        """The logits of a batch: the head on features, or the whole model."""
        if self._head is not None and self.features is not None:
            return self._head(x)
        return model(x)

    def evaluate(self) -> Evaluation:
        """The validation at an epoch's end, as :func:`evaluate_predictions` makes it.

        While the head trains on kept features and the model's output is its
        head's, the same function runs the head on the validation images' kept
        features (computed at the first validation): the same numbers, without
        the backbone. Otherwise the whole model validates.
        """
        run, head = self.run, self._head
        if head is None or self.features is None or not self._head_is_output:
            return evaluate_predictions(run)
        if self._val_batches is None:
            capture = _Capture(head)
            try:
                self._val_batches = self._validation_features(capture)
            finally:
                capture.remove()
        on_features = dataclasses.replace(
            run,
            model=_HeadOnly(run.model, head),
            loaders=dataclasses.replace(run.loaders, val=self._val_batches),
        )
        return evaluate_predictions(on_features)

    def recheck(self, batch: int) -> tuple[str, Batches] | None:
        """After a freeze-mask change: fall back if the cache no longer holds.

        Returns the notice and the images of batch ``batch`` (the one in hand,
        fetched as features) when it falls back; None otherwise.
        """
        if self.features is None:
            return None
        why = backbone_blocker(self.run.model)
        if why is None:
            return None
        self.features = self.labels = self._head = self._val_batches = None
        self.status = f"{PREFIX}off from step {self.run.global_step + 1}: {why}"
        notices = self.run.notices
        notices[:] = [n for n in notices if not n.startswith(PREFIX)] + [self.status]
        message = self.status + "; the full model trains from here"
        return message, self.run.loaders.train.iter_from(batch)


def _kept(sharing: _Sharing | None, rows: torch.Tensor | None) -> torch.Tensor | None:
    """The shared features of ``rows`` when all are kept; else None."""
    if sharing is None or rows is None or not sharing.store.has(rows):
        return None
    return sharing.store.take(rows)


def _keep(
    sharing: _Sharing | None, rows: torch.Tensor | None, feat: torch.Tensor
) -> None:
    """Share a computed batch (the sharing ends if it is not what was kept)."""
    if sharing is not None and rows is not None:
        sharing.store.keep(rows, feat)


class _HeadOnly(nn.Module):
    """The model seen from its head's input: validation on kept features.

    The model is a submodule, so ``eval()`` and ``train()`` set its modes as
    they would on the model itself.
    """

    def __init__(self, model: nn.Module, head: nn.Module) -> None:
        super().__init__()
        self.model = model
        self.head = head
        self.training = model.training

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.head(features)


@contextlib.contextmanager
def head_inputs(
    model: nn.Module,
) -> Iterator[Callable[[torch.Tensor], torch.Tensor | None]]:
    """``features(x)``: the input ``model``'s head gets for the batch ``x``.

    The head does not run; None when the forward pass never reaches it.
    """
    capture = _Capture(model.get_submodule(head_name(model)))
    try:
        yield lambda x: capture.features(model, x)
    finally:
        capture.remove()


class _AtHead(Exception):
    """Raised by the hook to end a forward pass at the head's input."""


class _Capture:
    """A forward pre-hook on the head that keeps its input.

    While ``stop`` is set the pass ends there: the head does not run, so its
    dropout draws no random numbers and its BatchNorm statistics stay as they are.
    """

    def __init__(self, head: nn.Module) -> None:
        self.head = head
        self.value: torch.Tensor | None = None
        self.stop = True
        self._handle = head.register_forward_pre_hook(self._hook)

    def _hook(self, _module: nn.Module, args: tuple[torch.Tensor, ...]) -> None:
        self.value = args[0].detach()
        if self.stop:
            raise _AtHead

    def features(self, model: nn.Module, x: torch.Tensor) -> torch.Tensor | None:
        """The head's input for batch ``x``; None if the pass never reached it."""
        with contextlib.suppress(_AtHead):
            model(x)
        value, self.value = self.value, None
        return value

    def remove(self) -> None:
        self._handle.remove()


class _FirstBatch(NamedTuple):
    why: str | None  # why the cache cannot hold, or None
    features: torch.Tensor | None = None  # the head's input, as training gets it
    head_is_output: bool = False  # the model's eval output is its head's, exactly


def _check_first_batch(
    model: nn.Module, capture: _Capture, x: torch.Tensor
) -> _FirstBatch:
    """Whether the head's input changes, or does not make the output; the
    batch's features (the second of two passes that must agree)."""
    first, again = capture.features(model, x), capture.features(model, x)
    if first is None or again is None:
        return _FirstBatch("the forward pass never reaches the head module")
    if not torch.allclose(first.float(), again.float(), rtol=1e-4, atol=1e-5):
        return _FirstBatch(
            "the head's input changes between two passes (randomness before it)"
        )
    # In eval mode (no dropout, no statistics updated) and full precision, as
    # validation runs: the model's output must be the head applied to its input.
    model.eval()
    capture.stop = False
    try:
        with torch.autocast(x.device.type, enabled=False):
            out = model(x)
            feat = capture.value
            ref = capture.head(feat) if feat is not None else None
    finally:
        capture.stop = True
        capture.value = None
        train_mode(model)
    if (
        ref is None
        or out.shape != ref.shape
        or not torch.allclose(out.float(), ref.float(), rtol=1e-4, atol=1e-5)
    ):
        return _FirstBatch("the model's output is not its head's output")
    return _FirstBatch(None, again, torch.equal(out, ref))


def _too_big(feat: torch.Tensor, samples: int, device: torch.device) -> str | None:
    need = feat[:1].numel() * feat.element_size() * samples
    if device.type == "cuda":
        budget = torch.cuda.mem_get_info(device)[0] // 2
    else:
        try:
            budget = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES") // 4
        except (ValueError, OSError, AttributeError):
            return None
    if need > budget:
        return f"the features would take {need / 2**30:.1f} GiB"
    return None
