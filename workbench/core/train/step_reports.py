"""What a run reports from what it measured: logged steps, epochs, compile time.

The engine adds each step to an :class:`Interval` (sums kept on the device, so
no step waits for it) and turns the interval into a :class:`StepMetrics` at a
log step, and an epoch's sums into :class:`EpochMetrics`.
"""

from __future__ import annotations

import math
import time

import torch

from workbench.core.events import EpochMetrics, Evaluation, StepMetrics
from workbench.core.training_run import TrainingRun


class TrainingError(RuntimeError):
    """A run that cannot go on; the text tells the user what to change."""


class Interval:
    """Running sums between two log points, kept on the device to avoid syncs."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.reset()

    def reset(self) -> None:
        self.loss_sum = torch.zeros((), device=self.device)
        self.correct = torch.zeros((), device=self.device, dtype=torch.long)
        self.samples = 0
        self.steps = 0
        self.seconds = 0.0
        self.phases: tuple[float, ...] = ()  # seconds in each step_clock phase

    def add(self, loss: torch.Tensor, logits: torch.Tensor, y: torch.Tensor) -> None:
        n = y.numel()
        self.loss_sum += loss.detach() * n
        self.correct += (logits.detach().argmax(1) == y).sum()
        self.samples += n
        self.steps += 1


def compile_overhead(
    compiling_seconds: float, compiled_steps: int, step_seconds: float
) -> float:
    """What compiling added to the steps that compiled, beyond steady steps."""
    if compiled_steps == 0:
        return 0.0
    steady = 0.0 if math.isnan(step_seconds) else step_seconds
    return max(compiling_seconds - compiled_steps * steady, 0.0)


def log_step(
    run: TrainingRun, interval: Interval, epoch: int, loss: float, started: float
) -> StepMetrics:
    loss_mean = (interval.loss_sum / max(interval.samples, 1)).item()
    if not (math.isfinite(loss) and math.isfinite(loss_mean)):
        raise TrainingError(
            f"the loss became {loss} at step {run.global_step} (epoch {epoch + 1}); "
            f"training stopped. Lower the learning rate (now {run.config.lr:g}) "
            "or use fp32."
        )
    run.history.steps.append((run.global_step, loss))
    lr = run.optimizer.param_groups[0]["lr"]
    metrics = StepMetrics(
        epoch=epoch,
        step=run.batch_in_epoch,
        global_step=run.global_step,
        total_steps=run.total_steps,
        loss=loss,
        accuracy=interval.correct.item() / max(interval.samples, 1),
        lr=float(lr),
        images_per_s=interval.samples / interval.seconds if interval.seconds else 0.0,
        elapsed_s=time.perf_counter() - started,
        step_seconds=interval.seconds / max(interval.steps, 1),
        phases=tuple(seconds / max(interval.steps, 1) for seconds in interval.phases),
    )
    run.history.speeds.append((run.global_step, metrics.images_per_s))
    interval.reset()
    return metrics


def epoch_metrics(
    run: TrainingRun,
    stats: Interval,
    epoch: int,
    validation: tuple[float, float],
    seconds: float,
    predictions: Evaluation,
) -> EpochMetrics:
    val_loss, val_acc = validation
    # The confusion matrix goes into the history (and checkpoints): a few
    # hundred integers that let the window replay every epoch's matrix.
    confusion = tuple(tuple(row) for row in predictions.confusion().tolist())
    return EpochMetrics(
        epoch=epoch,
        global_step=run.global_step,
        train_loss=(stats.loss_sum / max(stats.samples, 1)).item(),
        train_accuracy=stats.correct.item() / max(stats.samples, 1),
        val_loss=val_loss,
        val_accuracy=val_acc,
        images_per_s=stats.samples / seconds if seconds else 0.0,
        seconds=seconds,
        confusion=confusion,
    )


class PhaseTotals:
    """A whole run's step time split: the logged intervals' phases added up."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self.steps = 0

    def add(self, phases: tuple[float, ...], steps: int) -> None:
        """An interval's seconds in each phase, over ``steps`` steps."""
        if not phases:
            return
        if not self.seconds:
            self.seconds = [0.0] * len(phases)
        self.seconds = [a + b for a, b in zip(self.seconds, phases, strict=True)]
        self.steps += steps

    def per_step(self) -> tuple[float, ...]:
        """Mean seconds a step in each phase; () when nothing was measured."""
        return tuple(seconds / self.steps for seconds in self.seconds)
