"""The learning-rate range test: a rate ramped up over steps, the loss watched.

Smith's range test (Cyclical Learning Rates, 2017), as fastai's ``lr_find``
popularised it: the rate grows exponentially from ``start`` to ``end`` over
``steps`` batches of the run's own data, model, freeze mask, precision and
optimizer; the loss is smoothed by a debiased moving average and the test stops
once that passes ``diverge`` times its best. The run is put back exactly
afterwards (:mod:`workbench.core.tuning.preserve`).

Two suggestions are read off the smoothed curve (:mod:`lr_suggest`); probe runs
check them (:mod:`lr_probe`) before one is offered.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from workbench.core.config import ConfigError
from workbench.core.train.class_weights import training_loss
from workbench.core.train.freezing import train_mode
from workbench.core.train.probes import autocast_context
from workbench.core.training_run import TrainingRun
from workbench.core.tuning.lr_suggest import Suggestions, suggest
from workbench.core.tuning.preserve import preserved

START, END, STEPS = 1e-7, 10.0, 100
DIVERGE = 4.0  # stop once the smoothed loss passes this many times its best
BETA = 0.98  # the smoothing of the loss (fastai's)
# Consecutive non-finite losses after which the rate is past any use.
MAX_NON_FINITE = 3


@dataclass(frozen=True)
class RangeSettings:
    """What the range test ramps: ``start`` to ``end`` over ``steps`` batches."""

    start: float = START
    end: float = END
    steps: int = STEPS
    diverge: float = DIVERGE

    def check(self) -> None:
        """Raise ConfigError naming a setting that cannot work."""
        if not (0 < self.start < self.end) or not math.isfinite(self.end):
            raise ConfigError(
                f"the rates must rise from above 0: start {self.start:g}, "
                f"end {self.end:g}"
            )
        if self.steps < 10:
            raise ConfigError(
                f"the range test needs 10 steps or more, not {self.steps}"
            )
        if not self.diverge > 1:
            raise ConfigError(f"diverge must be above 1, not {self.diverge:g}")

    def rate(self, step: int) -> float:
        """The rate of step ``step`` (0-based) of the ramp."""
        return self.start * (self.end / self.start) ** (step / (self.steps - 1))


@dataclass(frozen=True)
class RangeCurve:
    """What the range test measured, one entry per step whose loss was finite."""

    rates: tuple[float, ...]
    losses: tuple[float, ...]
    smoothed: tuple[float, ...]
    dropped: int  # steps whose loss was not finite: left out, said
    stopped_because: str  # "diverged", "the ramp ended", "stopped", ...
    suggestions: Suggestions | None = None
    notes: tuple[str, ...] = field(default=())


def range_test(
    run: TrainingRun,
    settings: RangeSettings | None = None,
    *,
    stop: Callable[[], bool] = lambda: False,
    progress: Callable[[int, int], None] | None = None,
) -> RangeCurve:
    """Ramp the rate over ``run``'s own batches; ``run`` is left as it was.

    ``progress(step, steps)`` is called after each step; ``stop()`` ends the
    test early (the curve so far is kept).
    """
    settings = settings or RangeSettings()
    settings.check()
    if run.ddp is not None:
        raise ConfigError("the learning-rate finder runs in one process")
    with preserved(run):
        return _ramp(run, settings, stop, progress)


def _ramp(
    run: TrainingRun,
    settings: RangeSettings,
    stop: Callable[[], bool],
    progress: Callable[[int, int], None] | None,
) -> RangeCurve:
    model, optimizer = run.model, run.optimizer
    scaler = torch.amp.GradScaler(run.device.type, enabled=run.precision == "fp16")
    rates: list[float] = []
    losses: list[float] = []
    smoothed: list[float] = []
    average, best, dropped, bad_in_a_row = 0.0, math.inf, 0, 0
    why = "the ramp ended"
    train_mode(model)
    batches = endless_batches(run)
    for step in range(settings.steps):
        if stop():
            why = "stopped"
            break
        rate = settings.rate(step)
        for group in optimizer.param_groups:
            group["lr"] = rate
        x, y = next(batches)
        loss = train_step(run, model, scaler, x, y)
        if progress is not None:
            progress(step + 1, settings.steps)
        if not math.isfinite(loss):
            dropped += 1
            bad_in_a_row += 1
            if bad_in_a_row >= MAX_NON_FINITE:
                why = "the loss stopped being finite"
                break
            continue
        bad_in_a_row = 0
        average = BETA * average + (1 - BETA) * loss
        value = average / (1 - BETA ** (len(losses) + 1))
        rates.append(rate)
        losses.append(loss)
        smoothed.append(value)
        best = min(best, value)
        if len(smoothed) > 1 and value > settings.diverge * best:
            why = "diverged"
            break
    notes = []
    if dropped:
        notes.append(
            f"{dropped} step{'s' if dropped != 1 else ''} with a loss that was not "
            "finite left out"
        )
    suggestions = suggest(np.array(rates), np.array(smoothed))
    if suggestions is None:
        notes.append("too few steps to suggest a rate: widen the range")
    return RangeCurve(
        tuple(rates),
        tuple(losses),
        tuple(smoothed),
        dropped,
        why,
        suggestions,
        tuple(notes),
    )


def train_step(
    run: TrainingRun,
    model: nn.Module,
    scaler: torch.amp.GradScaler,
    x: torch.Tensor,
    y: torch.Tensor,
) -> float:
    """One optimizer step at the rate set; its loss (a non-finite one: no step)."""
    optimizer = run.optimizer
    optimizer.zero_grad(set_to_none=True)
    with autocast_context(run.precision, run.device):
        loss = training_loss(run, model(x), y)  # the run's own (weighted) loss
    value = loss.item()
    if not math.isfinite(value):
        return value  # stepping on it would leave the weights NaN
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return value


def endless_batches(run: TrainingRun) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """The run's training batches from where it stands, epoch after epoch."""
    loader = run.loaders.train
    if len(loader) == 0:
        raise ConfigError("the training set is empty")
    epoch, start = run.epoch, run.batch_in_epoch
    while True:
        loader.set_epoch(epoch)
        yield from loader.iter_from(start)
        epoch, start = epoch + 1, 0
