"""Which epoch was best, and whether to stop because none has been since.

Both are read off the run's history alone (every completed epoch's metrics are
in it, and in its checkpoints), so a run killed and resumed keeps the same best
epoch and stops at the same epoch as one that never stopped: there is no
counter of its own to lose.

An epoch is the new best when its metric beats the best so far by more than
``min_delta`` (validation loss: is lower by more); an epoch that does not is
"stale". Early stopping ends the run once ``patience`` stale epochs follow the
best one, as Keras's ``EarlyStopping`` and Lightning's do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.core.config import BEST_METRICS, TrainConfig
from workbench.core.events import EpochMetrics
from workbench.core.train.class_scores import macro_f1
from workbench.core.training_run import TrainingRun

__all__ = [
    "BEST_METRICS",
    "BestEpoch",
    "best_epoch",
    "early_stop_reason",
    "run_best",
    "run_stop_reason",
]
METRIC_NAMES = {
    "val_accuracy": "validation accuracy",
    "val_loss": "validation loss",
    "macro_f1": "macro-F1",
}


def metric_value(epoch: EpochMetrics, metric: str) -> float:
    """``epoch``'s value of ``metric`` (NaN when it was not measured)."""
    if metric == "val_loss":
        return epoch.val_loss
    if metric == "macro_f1":
        if not epoch.confusion:
            return math.nan
        return macro_f1(np.asarray(epoch.confusion))
    return epoch.val_accuracy


def completed_epochs(epochs: list[EpochMetrics], done: int) -> list[EpochMetrics]:
    """The record of each of the first ``done`` epochs, in order.

    A stopped epoch leaves a record of its part; the record of the epoch once
    resumed and finished replaces it.
    """
    last: dict[int, EpochMetrics] = {}
    for record in epochs:
        if record.epoch < done:
            last[record.epoch] = record
    return [last[index] for index in sorted(last)]


@dataclass(frozen=True)
class BestEpoch:
    """The best completed epoch so far (0-based) and the epochs after it."""

    epoch: int
    value: float
    stale: int  # completed epochs since ``epoch`` that did not beat it


def best_epoch(
    epochs: list[EpochMetrics], metric: str, min_delta: float = 0.0
) -> BestEpoch | None:
    """The best of ``epochs`` (completed ones) by ``metric``; None before any."""
    best: BestEpoch | None = None
    lower = metric == "val_loss"
    for record in epochs:
        value = metric_value(record, metric)
        if best is None:
            if math.isfinite(value):
                best = BestEpoch(record.epoch, value, 0)
            continue
        gain = best.value - value if lower else value - best.value
        if math.isfinite(value) and gain > min_delta:
            best = BestEpoch(record.epoch, value, 0)
        else:
            best = BestEpoch(best.epoch, best.value, best.stale + 1)
    return best


def value_text(metric: str, value: float) -> str:
    """``97.22%`` for accuracy and macro-F1, ``0.0812`` for a loss."""
    return f"{value:.4f}" if metric == "val_loss" else f"{100 * value:.2f}%"


def early_stop_reason(
    epochs: list[EpochMetrics], metric: str, patience: int | None, min_delta: float
) -> str | None:
    """Why the run stops early after ``epochs`` (completed), or None to go on."""
    if not patience:
        return None
    best = best_epoch(epochs, metric, min_delta)
    if best is None or best.stale < patience:
        return None
    by = f" by more than {min_delta:g}" if min_delta else ""
    return (
        f"{METRIC_NAMES[metric]} did not improve{by} for {best.stale} epochs "
        f"after epoch {best.epoch + 1} ({value_text(metric, best.value)})"
    )


def run_best(run: TrainingRun) -> BestEpoch | None:
    """``run``'s best completed epoch, judged as its config says."""
    cfg = run.config
    done = completed_epochs(run.history.epochs, run.epoch)
    return best_epoch(done, cfg.best_metric, cfg.early_stop_delta)


def run_stop_reason(run: TrainingRun, cfg: TrainConfig | None = None) -> str | None:
    """Why ``run`` stops early now under ``cfg`` (its own by default), or None."""
    cfg = cfg or run.config
    done = completed_epochs(run.history.epochs, run.epoch)
    return early_stop_reason(
        done, cfg.best_metric, cfg.early_stop, cfg.early_stop_delta
    )
