"""A sweep's trials as parallel coordinates: one axis per setting, then accuracy.

Qt-free: each axis maps its values onto 0..1 (a rate on a log scale, choices
evenly spaced in the order the space lists them), and each trial becomes the
positions of its values on every axis. The window's plot only draws them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from optuna.distributions import CategoricalDistribution, FloatDistribution
from optuna.trial import FrozenTrial, TrialState

ACCURACY = "accuracy"


@dataclass(frozen=True)
class Axis:
    """One vertical axis: a setting (or the accuracy) and how it maps to 0..1."""

    name: str
    low: float = 0.0
    high: float = 1.0
    log: bool = False
    choices: tuple[Any, ...] = ()

    def position(self, value: Any) -> float:
        """Where ``value`` sits on this axis, 0 (bottom) to 1 (top); NaN if nowhere."""
        if self.choices:
            if value not in self.choices:
                return math.nan
            if len(self.choices) == 1:
                return 0.5
            return self.choices.index(value) / (len(self.choices) - 1)
        if value is None or not isinstance(value, (int, float)):
            return math.nan
        low, high, value = self.low, self.high, float(value)
        if self.log:
            if value <= 0:
                return math.nan
            low, high, value = math.log10(low), math.log10(high), math.log10(value)
        if high == low:
            return 0.5
        return (value - low) / (high - low)

    def ticks(self) -> list[tuple[float, str]]:
        """Labelled places on the axis: each choice, or both ends of a range."""
        if self.choices:
            return [(self.position(c), str(c)) for c in self.choices]
        text = _rate if self.log else _percent if self.name == ACCURACY else _number
        return [(0.0, text(self.low)), (1.0, text(self.high))]


@dataclass(frozen=True)
class Line:
    """One trial: its positions on every axis, its accuracy and how it ended."""

    number: int
    positions: tuple[float, ...]
    accuracy: float | None
    state: str  # "complete", "pruned", "running", "failed"


def trial_accuracy(trial: FrozenTrial) -> float | None:
    """The final accuracy, or the last reported one of a pruned or running trial."""
    if trial.value is not None:
        return float(trial.value)
    if trial.intermediate_values:
        return float(trial.intermediate_values[max(trial.intermediate_values)])
    return None


def axes_for(trials: Sequence[FrozenTrial]) -> list[Axis]:
    """An axis per setting any trial has (in first-seen order), then accuracy."""
    distributions: dict[str, Any] = {}
    for trial in trials:
        for name, dist in trial.distributions.items():
            distributions.setdefault(name, dist)
    axes = [_axis(name, dist) for name, dist in distributions.items()]
    scores = [a for t in trials if (a := trial_accuracy(t)) is not None]
    low, high = (min(scores), max(scores)) if scores else (0.0, 1.0)
    return [*axes, Axis(ACCURACY, low, high)]


def lines_for(trials: Iterable[FrozenTrial], axes: Sequence[Axis]) -> list[Line]:
    """Each trial as a line over ``axes``."""
    lines = []
    for trial in trials:
        accuracy = trial_accuracy(trial)
        values = [
            accuracy if axis.name == ACCURACY else trial.params.get(axis.name)
            for axis in axes
        ]
        positions = tuple(a.position(v) for a, v in zip(axes, values, strict=True))
        lines.append(Line(trial.number, positions, accuracy, _state(trial.state)))
    return lines


def _axis(name: str, dist: Any) -> Axis:
    if isinstance(dist, CategoricalDistribution):
        return Axis(name, choices=tuple(dist.choices))
    if isinstance(dist, FloatDistribution):
        return Axis(name, dist.low, dist.high, log=dist.log)
    return Axis(name, float(dist.low), float(dist.high))


def _state(state: TrialState) -> str:
    return {
        TrialState.COMPLETE: "complete",
        TrialState.PRUNED: "pruned",
        TrialState.RUNNING: "running",
        TrialState.WAITING: "running",
    }.get(state, "failed")


def _rate(value: float) -> str:
    return f"{value:.0e}" if value == float(f"{value:.0e}") else f"{value:.1e}"


def _number(value: float) -> str:
    return f"{value:.3g}"


def _percent(value: float) -> str:
    return f"{value:.1%}"
