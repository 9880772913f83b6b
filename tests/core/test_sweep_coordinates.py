"""A sweep's trials as parallel coordinates: where each value sits on its axis."""

from __future__ import annotations

import math

import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution
from optuna.trial import TrialState

from workbench.core.tuning.coordinates import ACCURACY, Axis, axes_for, lines_for

LR = FloatDistribution(1e-4, 1e-2, log=True)
BATCH = CategoricalDistribution((32, 64, 128))


def _trial(number, lr, batch, value=None, state=TrialState.COMPLETE, reported=None):
    trial = optuna.trial.create_trial(
        params={"lr": lr, "batch_size": batch},
        distributions={"lr": LR, "batch_size": BATCH},
        value=value,
        state=state,
        intermediate_values=reported or {},
    )
    trial.number = number
    return trial


def test_each_value_sits_where_its_axis_puts_it():
    trials = [
        _trial(0, 1e-3, 64, value=0.9),
        _trial(1, 1e-4, 32, value=0.8),
        _trial(2, 1e-2, 128, state=TrialState.PRUNED, reported={1: 0.6, 2: 0.7}),
        _trial(3, 1e-3, 32, state=TrialState.FAIL),
    ]
    axes = axes_for(trials)
    assert [a.name for a in axes] == ["lr", "batch_size", ACCURACY]
    # The accuracy axis spans what was measured, a pruned trial's last report too.
    assert (axes[2].low, axes[2].high) == (0.7, 0.9)
    lines = lines_for(trials, axes)
    assert [line.state for line in lines] == [
        "complete",
        "complete",
        "pruned",
        "failed",
    ]
    # lr on a log scale: 1e-3 is halfway between 1e-4 and 1e-2.
    assert lines[0].positions == pytest.approx((0.5, 0.5, 1.0))
    assert lines[1].positions == pytest.approx((0.0, 0.0, 0.5))
    assert lines[2].positions == pytest.approx((1.0, 1.0, 0.0))
    assert lines[2].accuracy == 0.7
    assert lines[3].positions[:2] == pytest.approx((0.5, 0.0))
    assert math.isnan(lines[3].positions[2])  # no accuracy: off the axis


def test_the_axes_label_their_ends_and_choices():
    assert Axis("lr", 1e-4, 1e-2, log=True).ticks() == [(0.0, "1e-04"), (1.0, "1e-02")]
    assert Axis("batch_size", choices=(32, 64, 128)).ticks() == [
        (0.0, "32"),
        (0.5, "64"),
        (1.0, "128"),
    ]
    assert Axis(ACCURACY, 0.7, 0.9).ticks() == [(0.0, "70.0%"), (1.0, "90.0%")]
    assert math.isnan(Axis("optimizer", choices=("sgd",)).position("adam"))
