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
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Generator, Iterator

import torch
from torch import nn

from workbench.core.data.loaders import split_batches
from workbench.core.events import FeaturesProgress
from workbench.core.models.builtins import head_name
from workbench.core.train.freezing import train_mode
from workbench.core.train.probes import autocast_context, sync_device
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
        """Fill ``features`` and ``labels`` per training sample; else why not."""
        run, model = self.run, self.run.model
        loader = run.loaders.train
        loader.set_epoch(run.epoch)
        head = model.get_submodule(head_name(model))
        capture = _Capture(head)
        started = time.perf_counter()
        # In the current epoch's own batches: its features are the very numbers
        # the uncached run computes this epoch.
        order = loader.epoch_order().to(run.device)
        features = labels = None
        done, total = 0, loader.num_samples
        yield FeaturesProgress(done, total)
        try:
            with torch.no_grad(), autocast_context(run.precision, run.device):
                cuts = split_batches(order, loader.batch_size)
                for (x, y), index in zip(loader.iter_from(0), cuts, strict=True):
                    if stop():
                        return "stopped while computing the features"
                    if features is None:
                        why = _check_first_batch(model, head, x, capture)
                        if why is not None:
                            return why
                    feat = capture.features(model, x)
                    assert feat is not None  # _check_first_batch saw it reached
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
        finally:
            capture.remove()
            train_mode(model)
        if features is None or labels is None:
            return "the training set is empty"
        sync_device(run.device)
        self.seconds = time.perf_counter() - started
        self.features, self.labels, self._head = features, labels, head
        return None

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
        self.features = self.labels = self._head = None
        self.status = f"{PREFIX}off from step {self.run.global_step + 1}: {why}"
        notices = self.run.notices
        notices[:] = [n for n in notices if not n.startswith(PREFIX)] + [self.status]
        message = self.status + "; the full model trains from here"
        return message, self.run.loaders.train.iter_from(batch)


class _AtHead(Exception):
    """Raised by the hook to end a forward pass at the head's input."""


class _Capture:
    """A forward pre-hook on the head that keeps its input.

    While ``stop`` is set the pass ends there: the head does not run, so its
    dropout draws no random numbers and its BatchNorm statistics stay as they are.
    """

    def __init__(self, head: nn.Module) -> None:
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


def _check_first_batch(
    model: nn.Module, head: nn.Module, x: torch.Tensor, capture: _Capture
) -> str | None:
    """Why the head's input changes, or does not make the output; or None."""
    first, again = capture.features(model, x), capture.features(model, x)
    if first is None or again is None:
        return "the forward pass never reaches the head module"
    if not torch.allclose(first.float(), again.float(), rtol=1e-4, atol=1e-5):
        return "the head's input changes between two passes (randomness before it)"
    # In eval mode (no dropout, no statistics updated): the model's output must
    # be the head applied to its captured input.
    model.eval()
    capture.stop = False
    try:
        out = model(x)
        feat = capture.value
        ref = head(feat) if feat is not None else None
    finally:
        capture.stop = True
        capture.value = None
        train_mode(model)
    if (
        ref is None
        or out.shape != ref.shape
        or not torch.allclose(out.float(), ref.float(), rtol=1e-4, atol=1e-5)
    ):
        return "the model's output is not its head's output"
    return None


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
