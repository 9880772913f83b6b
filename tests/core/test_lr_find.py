"""The learning-rate finder: a ramp that leaves no trace, two suggestions, probes.

The proof that it leaves no trace: a run trained after a find has the same
per-step losses and bit-identical weights as one never preceded by a find, on
a model with dropout and BatchNorm, with augmentation on, the find started
mid-epoch of a run already under way.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from workbench.core import events as E
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.train.engine import TrainControl, fit, iter_fit, prepare_run
from workbench.core.tuning.lr_find import RangeSettings, range_test
from workbench.core.tuning.lr_probe import best_probe, run_probes
from workbench.core.tuning.lr_suggest import (
    Suggestions,
    steepest_index,
    suggest,
    valley_index,
)

DROPOUT_BN = """
from torch import nn


class Net(nn.Module):
    def __init__(self, num_classes, in_channels=1):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(in_channels, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(4),
            nn.Flatten(),
            nn.Dropout(0.3),
        )
        self.head = nn.Linear(128, num_classes)

    def forward(self, x):
        return self.head(self.body(x))
"""


@pytest.fixture
def net_cfg(tmp_path) -> TrainConfig:
    path = tmp_path / "net.py"
    path.write_text(DROPOUT_BN, encoding="utf-8")
    return TrainConfig(
        model=f"{path}:Net",
        epochs=1,
        batch_size=32,
        log_every=1,
        augment=("crop", "rotate"),
        lr=0.01,
    )


def _losses(events) -> list[float]:
    return [e.loss for e in events if isinstance(e, E.StepMetrics)]


def _weights(run) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in run.model.state_dict().items()}


def test_a_run_after_a_find_and_probes_trains_as_if_there_had_been_none(
    tiny_arrays, net_cfg
):
    untouched = prepare_run(net_cfg, arrays=tiny_arrays)
    first = []
    control = TrainControl()
    for event in iter_fit(untouched, control):
        first.append(event)
        if isinstance(event, E.StepMetrics) and event.global_step == 5:
            control.request_stop()  # mid-epoch: a position to keep
    expected = _losses(first) + _losses(fit(untouched))

    run = prepare_run(net_cfg, arrays=tiny_arrays)
    control = TrainControl()
    before = []
    for event in iter_fit(run, control):
        before.append(event)
        if isinstance(event, E.StepMetrics) and event.global_step == 5:
            control.request_stop()
    curve = range_test(run, RangeSettings(steps=30))
    assert len(curve.rates) > 10
    assert run.global_step == 5
    probes = run_probes(run, (0.01 / 3, 0.01, 0.03), steps=4)
    assert [p.rate for p in probes] == pytest.approx([0.01 / 3, 0.01, 0.03])
    after = _losses(before) + _losses(fit(run))
    assert after == expected  # every step's loss, exactly
    for name, value in _weights(untouched).items():
        assert torch.equal(run.model.state_dict()[name], value), name


def test_the_ramp_rises_exponentially_and_stops_once_the_loss_diverges(
    tiny_arrays,
):
    run = prepare_run(TrainConfig(model="mlp", batch_size=32), arrays=tiny_arrays)
    curve = range_test(run, RangeSettings(start=1e-5, end=100.0, steps=60))
    rates = np.array(curve.rates)
    ratios = rates[1:] / rates[:-1]
    np.testing.assert_allclose(ratios, (100.0 / 1e-5) ** (1 / 59), rtol=1e-9)
    assert curve.rates[0] == pytest.approx(1e-5)
    assert curve.stopped_because == "diverged"
    assert len(curve.rates) < 60
    # It stops at the first smoothed loss over 4x the best before it.
    assert curve.smoothed[-1] > 4 * min(curve.smoothed)
    best_so_far = np.minimum.accumulate(curve.smoothed)
    assert (np.array(curve.smoothed[1:-1]) <= 4 * best_so_far[:-2]).all()
    # Debiased: the first smoothed value is the first loss itself.
    assert curve.smoothed[0] == pytest.approx(curve.losses[0])


def test_non_finite_losses_are_left_out_and_said(tiny_arrays, monkeypatch):
    from workbench.core.tuning import lr_find

    real = lr_find.train_step
    calls = []

    def flaky(run, model, scaler, x, y):
        calls.append(1)
        return math.nan if len(calls) in (3, 7) else real(run, model, scaler, x, y)

    monkeypatch.setattr(lr_find, "train_step", flaky)
    run = prepare_run(TrainConfig(model="mlp", batch_size=32), arrays=tiny_arrays)
    curve = range_test(run, RangeSettings(start=1e-6, end=1e-3, steps=20))
    assert curve.dropped == 2
    assert len(curve.rates) == 18
    assert all(math.isfinite(v) for v in curve.losses)
    assert "2 steps with a loss that was not finite left out" in curve.notes
    assert curve.stopped_because == "the ramp ended"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (RangeSettings(start=0.0), "the rates must rise from above 0"),
        (RangeSettings(start=1.0, end=0.1), "the rates must rise from above 0"),
        (RangeSettings(steps=3), "the range test needs 10 steps or more, not 3"),
        (RangeSettings(diverge=1.0), "diverge must be above 1"),
    ],
)
def test_settings_that_cannot_work_are_refused(tiny_arrays, settings, message):
    run = prepare_run(TrainConfig(model="mlp", batch_size=32), arrays=tiny_arrays)
    with pytest.raises(ConfigError, match=message):
        range_test(run, settings)


def test_the_valley_is_the_middle_of_the_longest_fall():
    # A low, slowly rising start, a fall over indices 10..30, then a rise: the
    # longest fall is 10..30, and the rule takes start + 6 + 3 (20 / 3, halved).
    losses = np.concatenate(
        [
            1.0 + np.arange(10) * 1e-3,
            np.linspace(1.99, 0.5, 21),
            np.linspace(0.6, 3, 10),
        ]
    )
    assert valley_index(losses) == 19


def test_the_steepest_point_is_where_the_loss_falls_fastest_per_decade():
    rates = np.logspace(-6, 0, 61)  # 10 points a decade
    losses = 2.0 - np.tanh((np.log10(rates) + 3) * 2)  # steepest at 1e-3
    assert rates[steepest_index(rates, losses)] == pytest.approx(1e-3)


def test_suggestions_skip_the_ends_and_show_a_band_when_they_disagree():
    assert suggest(np.logspace(-6, 0, 12), np.linspace(2, 1, 12)) is None
    close = Suggestions(valley=1e-3, steepest=2e-3)
    assert not close.disagree
    far = Suggestions(valley=1e-3, steepest=4e-2)
    assert far.disagree
    assert far.band == (1e-3, 4e-2)


def test_probes_measure_each_rate_and_the_best_is_offered(tiny_arrays):
    run = prepare_run(TrainConfig(model="mlp", batch_size=32), arrays=tiny_arrays)
    probes = run_probes(run, (1e-3, 3e-3, 9e-3), steps=6)
    assert [p.steps for p in probes] == [6, 6, 6]
    for probe in probes:
        assert 0.0 <= probe.val_accuracy <= 1.0
        assert math.isfinite(probe.val_loss)
    best = best_probe(probes)
    assert best.val_accuracy == max(p.val_accuracy for p in probes)


def test_the_offered_probe_is_the_most_accurate_then_the_lowest_loss():
    from workbench.core.tuning.lr_probe import Probe

    low = Probe(1e-4, 10, 1.0, 0.9, 0.80)
    mid = Probe(3e-4, 10, 0.8, 0.7, 0.85)
    tie = Probe(9e-4, 10, 0.7, 0.6, 0.85)  # as accurate, a lower loss
    diverged = Probe(3e-3, 4, math.inf, math.inf, math.nan)
    assert best_probe([low, mid, diverged]) is mid
    assert best_probe([low, mid, tie, diverged]) is tie
    assert best_probe([diverged, low]) is low
    assert best_probe([]) is None


def test_the_probes_span_the_band_when_the_rules_disagree():
    from workbench.core.tuning.lr_probe import probe_rates

    agree = probe_rates(Suggestions(valley=1e-3, steepest=2e-3))
    assert agree == pytest.approx((1e-3 / 3, 1e-3, 3e-3))
    band = probe_rates(Suggestions(valley=1e-4, steepest=5e-3))
    assert band[0] == pytest.approx(1e-4 / 3)
    np.testing.assert_allclose(np.array(band[1:]) / np.array(band[:-1]), 3.0)
    assert band[-1] >= 5e-3 * 3 / 1.5  # up to three times the higher
    assert band[-1] < 5e-3 * 3 * 3 / 1.5
    assert 1e-4 == pytest.approx(band[1])  # the valley itself is probed
