"""Teach a trained model the user's handwriting, and show what it cost.

A fine-tune is an ordinary run (:func:`~workbench.core.train.engine.prepare_run`) on
the ``my-digits`` dataset, starting from the weights of a trained model, with
``replay`` images of the base dataset mixed in and the freeze mask applied.
Around it, two measurements make the trade visible: accuracy on the user's
drawings and on the base test set before and after (forgetting shows as a
drop on the base), and a bit-for-bit check that frozen parameters stayed put.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from workbench.core.checkpoints.io import load_model_state
from workbench.core.config import MY_DIGITS_BASES, ConfigError, TrainConfig
from workbench.core.data.my_digits import MyDigits
from workbench.core.data.preprocess import style_of
from workbench.core.data.registry import (
    DATASET_INFO,
    DatasetInfo,
    DownloadProgress,
    ImageArrays,
)
from workbench.core.data.sources import load_base_arrays, load_run_arrays
from workbench.core.models.inputs import fit_to_model
from workbench.core.train.engine import TrainingRun, prepare_run

# Defaults for a fine-tune: a handful of drawings needs few, gentle steps.
REPLAY = 512
EPOCHS = 10
LEARNING_RATE = 2e-3
BATCH_SIZE = 64


def fine_tune_config(
    base: TrainConfig,
    frozen: tuple[str, ...],
    *,
    replay: int = REPLAY,
    epochs: int = EPOCHS,
    lr: float = LEARNING_RATE,
) -> TrainConfig:
    """The config of a fine-tune that continues from a model trained with ``base``.

    Raises
    ------
    ConfigError
        When the base model was not trained on digits (its classes would not
        mean 0-9).
    """
    source = base.style_dataset
    if source not in MY_DIGITS_BASES:
        raise ConfigError(
            f"fine-tuning on my digits needs a model trained on digits or MNIST; "
            f"this one learned {DATASET_INFO[source].title}"
        )
    return base.replace(
        dataset="my-digits",
        base_dataset=source,
        replay=replay,
        epochs=epochs,
        max_steps=None,
        lr=lr,
        batch_size=min(base.batch_size, BATCH_SIZE),
        frozen=tuple(frozen),
        folds=1,  # a fold model's fine-tune trains on all of the drawings
        fold=0,
    )


@dataclass(frozen=True, slots=True)
class Scores:
    """Accuracy on the user's drawings and on the base dataset's test split."""

    mine: float
    mine_count: int
    base: float
    base_count: int


@dataclass(frozen=True, slots=True)
class FrozenCheck:
    """The outcome of comparing frozen parameters before and after a run."""

    checked: tuple[str, ...]
    changed: tuple[str, ...]

    @property
    def unchanged(self) -> bool:
        """True when every checked parameter is bit-identical."""
        return not self.changed

    def describe(self) -> str:
        """One line for the user."""
        if not self.checked:
            return "no parameters were frozen"
        if self.unchanged:
            return f"all {len(self.checked)} frozen tensors are bit-identical"
        return (
            f"{len(self.changed)} of {len(self.checked)} frozen tensors changed "
            f"(unfrozen during the run?): {', '.join(self.changed[:5])}"
        )


def frozen_copy(model: nn.Module) -> dict[str, torch.Tensor]:
    """Copies of the parameters that are frozen now (``requires_grad`` off)."""
    return {
        name: p.detach().to("cpu", copy=True)
        for name, p in model.named_parameters()
        if not p.requires_grad
    }


def check_frozen(model: nn.Module, before: dict[str, torch.Tensor]) -> FrozenCheck:
    """Which of ``before``'s parameters are no longer bit-identical in ``model``."""
    params = dict(model.named_parameters())
    changed = tuple(
        name
        for name, old in before.items()
        if not torch.equal(params[name].detach().cpu(), old)
    )
    return FrozenCheck(checked=tuple(before), changed=changed)


@torch.no_grad()
def accuracy(
    model: nn.Module,
    images: torch.Tensor,
    labels: torch.Tensor,
    dataset: str | DatasetInfo,
    *,
    batch_size: int = 1024,
) -> float:
    """Accuracy of ``model`` (put in ``eval()`` and restored) on uint8 images.

    ``dataset`` names the pixel statistics to normalise with, or is the inputs'
    DatasetInfo (gray repeated to three channels for a torchvision model).
    NaN when empty.
    """
    if len(labels) == 0:
        return float("nan")
    info = DATASET_INFO[dataset] if isinstance(dataset, str) else dataset
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    correct = 0
    try:
        for start in range(0, len(labels), batch_size):
            x = images[start : start + batch_size].to(device, torch.float32)
            x = info.normalise((x / 255.0).unsqueeze(1))
            y = labels[start : start + batch_size].to(device)
            correct += int((model(x).argmax(1) == y).sum())
    finally:
        model.train(was_training)
    return correct / len(labels)


def scores(
    model: nn.Module,
    cfg: TrainConfig,
    base_arrays: ImageArrays,
    store: MyDigits | None = None,
) -> Scores:
    """Accuracy on every drawing and on ``base_arrays``' test split."""
    store = store or MyDigits()
    source = cfg.style_dataset
    images, labels = store.all_arrays(style_of(source))
    info = fit_to_model(DATASET_INFO[source], cfg.model, cfg.weights)
    return Scores(
        mine=accuracy(model, images, labels, info),
        mine_count=len(labels),
        base=accuracy(model, base_arrays.test_images, base_arrays.test_labels, info),
        base_count=len(base_arrays.test_labels),
    )


@dataclass
class FineTune:
    """A prepared fine-tune: the run, its starting scores and frozen copies."""

    run: TrainingRun
    base_arrays: ImageArrays
    before: Scores
    frozen_before: dict[str, torch.Tensor]

    def finish(self) -> tuple[Scores, FrozenCheck]:
        """Scores after training, and the check of the frozen parameters."""
        after = scores(self.run.model, self.run.config, self.base_arrays)
        return after, check_frozen(self.run.model, self.frozen_before)


def prepare_fine_tune(
    cfg: TrainConfig,
    weights: dict[str, torch.Tensor],
    *,
    base_arrays: ImageArrays | None = None,
    progress: Callable[[DownloadProgress], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> FineTune:
    """Build the fine-tune run from ``weights`` and measure where it starts.

    Parameters
    ----------
    cfg : TrainConfig
        A :func:`fine_tune_config`.
    weights : dict
        The trained model's state (a ``snapshot_state`` or checkpoint's).
    base_arrays : ImageArrays, optional
        The base dataset if already in memory.
    """
    if base_arrays is None:
        base_arrays = load_base_arrays(cfg, progress=progress, cancel=cancel)
    arrays = load_run_arrays(cfg, base_arrays=base_arrays)
    run = prepare_run(cfg, arrays=arrays)
    load_model_state(run.model, weights)
    before = scores(run.model, cfg, base_arrays)
    return FineTune(run, base_arrays, before, frozen_copy(run.model))
