"""Short probe runs that check the suggested rates before one is offered.

A suggestion read off a curve is a guess; Lightning's and pytorch-lr-finder's
users report ones that train badly. Each probe trains the run from where it
stands for the same number of steps at one rate (the same seed, batches and
schedule, shrunk to the probe's length), then measures the validation loss and
accuracy. The rates: a third of the valley, the valley and three times it; when
the two rules disagree by over 3x, on through the band between them, a factor
of 3 apart, up to three times the higher. The rate offered is the probe that
measured best. The run is put back after each probe.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from workbench.core.train.engine import build_scheduler
from workbench.core.train.freezing import train_mode
from workbench.core.train.probes import evaluate_predictions, mean_loss_and_accuracy
from workbench.core.training_run import TrainingRun
from workbench.core.tuning.lr_find import (
    RangeCurve,
    RangeSettings,
    endless_batches,
    range_test,
    train_step,
)
from workbench.core.tuning.lr_suggest import Suggestions
from workbench.core.tuning.preserve import preserved

MAX_PROBE_STEPS = 100  # a probe trains one epoch, or this many steps if fewer
STEP = 3.0  # between two probes' rates


@dataclass(frozen=True)
class Probe:
    """What a short run at ``rate`` measured."""

    rate: float
    steps: int
    train_loss: float  # the mean of the probe's last quarter of steps
    val_loss: float
    val_accuracy: float

    @property
    def score(self) -> tuple[float, float]:
        """Higher is better: accuracy first, then the lower loss."""
        accuracy = self.val_accuracy if math.isfinite(self.val_accuracy) else -1.0
        loss = self.val_loss if math.isfinite(self.val_loss) else self.train_loss
        return accuracy, -loss if math.isfinite(loss) else -math.inf


def probe_steps(run: TrainingRun) -> int:
    """How long each probe trains: one epoch, at most ``MAX_PROBE_STEPS``."""
    return max(1, min(run.steps_per_epoch, MAX_PROBE_STEPS))


def probe_rates(guess: Suggestions) -> tuple[float, ...]:
    """A third of the lower suggestion to three times the higher, 3x apart.

    When the rules agree: a third of the valley, the valley, three times it.
    """
    low, high = guess.band if guess.disagree else (guess.valley, guess.valley)
    rates = [low / STEP]
    while rates[-1] < high * STEP / 1.5:  # the last within 1.5x of 3x the higher
        rates.append(rates[-1] * STEP)
    return tuple(rates)


def run_probes(
    run: TrainingRun,
    rates: tuple[float, ...],
    *,
    steps: int | None = None,
    stop: Callable[[], bool] = lambda: False,
    progress: Callable[[int, int], None] | None = None,
) -> list[Probe]:
    """One probe per rate; fewer when stopped."""
    steps = steps or probe_steps(run)
    probes: list[Probe] = []
    for index, rate in enumerate(rates):
        if stop():
            break
        with preserved(run):
            probes.append(_probe(run, rate, steps, stop))
        if progress is not None:
            progress(index + 1, len(rates))
    return probes


def best_probe(probes: list[Probe]) -> Probe | None:
    """The probe that measured best (the rate offered); None without probes."""
    return max(probes, key=lambda p: p.score, default=None)


def _probe(
    run: TrainingRun, rate: float, steps: int, stop: Callable[[], bool]
) -> Probe:
    cfg = run.config.replace(lr=rate)
    for group in run.optimizer.param_groups:
        group["lr"] = rate
    scheduler = build_scheduler(cfg, run.optimizer, steps)
    scaler = torch.amp.GradScaler(run.device.type, enabled=run.precision == "fp16")
    train_mode(run.model)
    batches = endless_batches(run)
    losses: list[float] = []
    for _ in range(steps):
        if stop():
            break
        x, y = next(batches)
        losses.append(train_step(run, run.model, scaler, x, y))
        if scheduler is not None:
            scheduler.step()
        if not math.isfinite(losses[-1]):
            break
    tail = losses[-max(1, len(losses) // 4) :]
    train_loss = sum(tail) / len(tail) if tail else math.nan
    if not math.isfinite(train_loss):
        return Probe(rate, len(losses), math.inf, math.inf, math.nan)
    val_loss, val_accuracy = mean_loss_and_accuracy(evaluate_predictions(run))
    return Probe(rate, len(losses), train_loss, val_loss, val_accuracy)


@dataclass(frozen=True)
class RateFound:
    """A whole find: the curve, the probes of its valley, the rate offered."""

    curve: RangeCurve
    probes: tuple[Probe, ...]
    offered: Probe | None
    probe_steps: int
    from_step: int  # where the run stood (0: a new run)


def find_rate(
    run: TrainingRun,
    settings: RangeSettings | None = None,
    *,
    steps: int | None = None,
    stop: Callable[[], bool] = lambda: False,
    progress: Callable[[str, int, int], None] | None = None,
) -> RateFound:
    """The range test, then probes around its valley; ``run`` is left as it was.

    ``progress(stage, done, total)`` with stage ``"range test"`` or ``"probes"``.
    """

    def report(stage: str) -> Callable[[int, int], None] | None:
        if progress is None:
            return None
        return lambda done, total: progress(stage, done, total)

    curve = range_test(run, settings, stop=stop, progress=report("range test"))
    steps = steps or probe_steps(run)
    probes: list[Probe] = []
    if curve.suggestions is not None and not stop():
        probes = run_probes(
            run,
            probe_rates(curve.suggestions),
            steps=steps,
            stop=stop,
            progress=report("probes"),
        )
    offered = None if stop() else best_probe(probes)
    return RateFound(curve, tuple(probes), offered, steps, run.global_step)
