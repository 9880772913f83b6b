"""Where a step's time goes: each phase's time lands in its phase, and they add up."""

from __future__ import annotations

import time

import pytest
import torch

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.runs.folder import RunFolder
from workbench.core.runs.recorder import RunRecorder
from workbench.core.runs.run_file import read_run_file
from workbench.core.train.engine import fit, iter_fit, prepare_run
from workbench.core.train.step_clock import (
    COPY,
    DATA,
    FORWARD,
    PHASES,
    StepClock,
    split_text,
)

DATA_S, FORWARD_S, BACKWARD_S, OPTIMIZER_S = 0.030, 0.020, 0.015, 0.010


def _slowed(run):
    """``run`` with each phase of a step made slow by a known sleep."""
    fetch = run.loaders.train.iter_from

    def slow_fetch(start):
        for batch in fetch(start):
            time.sleep(DATA_S)
            yield batch

    run.loaders.train.iter_from = slow_fetch

    def slow_forward(_module, _inputs, output):
        if output.requires_grad:  # a training step, not validation
            time.sleep(FORWARD_S)
            output.register_hook(lambda _grad: time.sleep(BACKWARD_S))

    run.model.register_forward_hook(slow_forward)
    run.optimizer.register_step_pre_hook(lambda *_: time.sleep(OPTIMIZER_S))
    return run


def test_each_phase_of_a_step_is_charged_where_its_time_went(tiny_arrays):
    cfg = TrainConfig(model="mlp", epochs=1, batch_size=64, log_every=2)
    run = _slowed(prepare_run(cfg, arrays=tiny_arrays))
    events = fit(run)
    steps = [e for e in events if isinstance(e, E.StepMetrics)]
    assert len(steps) == 2
    for step in steps:
        split = dict(zip(PHASES, step.phases, strict=True))
        # Each sleep shows in its own phase: a sleep may overshoot (on a busy
        # machine by many ms), never undershoot, so time charged to the wrong
        # phase leaves its own phase short.
        for phase, slept in [
            ("data", DATA_S),
            ("forward", FORWARD_S),
            ("backward", BACKWARD_S),
            ("optimizer", OPTIMIZER_S),
        ]:
            assert slept <= split[phase] < slept + 0.1, (phase, split)
        assert split["copy"] < 0.002  # the data already lives on the CPU
        assert sum(step.phases) == pytest.approx(step.step_seconds, rel=0.05)
    result = events[-1]
    assert sum(result.phases) == pytest.approx(result.step_seconds, rel=0.05)
    assert result.phases[DATA] >= DATA_S
    assert result.phases[FORWARD] >= FORWARD_S
    assert split_text(result.phases).startswith("a step ")


def test_a_copy_inside_the_fetch_is_charged_to_copy_not_data():
    clock = StepClock(torch.device("cpu"))
    clock.restart()
    time.sleep(0.010)
    with clock.copying():
        time.sleep(0.020)
    clock.mark(DATA)
    wall, phases = clock.take()
    assert 0.010 <= phases[DATA] < 0.018
    assert 0.020 <= phases[COPY] < 0.028
    assert sum(phases) == pytest.approx(wall, rel=0.02)


def test_a_compiling_step_is_left_out():
    clock = StepClock(torch.device("cpu"))
    clock.restart()
    time.sleep(0.020)  # the compiling step's fetch
    clock.mark(DATA)
    clock.drop_step()  # this step compiles: none of it counts
    time.sleep(0.020)
    clock.mark(FORWARD)  # ignored until restarted
    clock.restart()
    wall, phases = clock.take()
    assert wall < 0.005
    assert sum(phases) < 0.005


def test_the_split_can_be_switched_off_and_the_speed_is_still_measured(tiny_arrays):
    cfg = TrainConfig(model="mlp", epochs=1, batch_size=64, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)
    run.time_phases = False
    events = fit(run)
    steps = [e for e in events if isinstance(e, E.StepMetrics)]
    assert steps
    assert all(s.phases == () and s.step_seconds > 0 for s in steps)
    assert events[-1].phases == ()


def test_the_runs_ledger_keeps_the_split(runs_root, tiny_arrays):
    cfg = TrainConfig(model="mlp", epochs=1, batch_size=64, log_every=2)
    run = prepare_run(cfg, arrays=tiny_arrays)
    recorder = RunRecorder(RunFolder.create(cfg, origin="test"), 1)
    recorder.start(run)
    for event in iter_fit(run):
        recorder.on_event(event, run)
        if isinstance(event, E.TrainResult):
            result = event
    data, problem = read_run_file(recorder.folder.path / "run.json")
    assert problem is None
    assert list(data["step_time"]) == list(PHASES)
    assert tuple(data["step_time"].values()) == result.phases
    metrics = (recorder.folder.path / "metrics.jsonl").read_text()
    assert '"phases": [' in metrics


def test_the_split_in_words():
    assert split_text(()) == ""
    text = split_text((0.001, 0.0, 0.001, 0.002, 0.0, 0.0))
    assert text == (
        "a step 4.00 ms: data 25%, copy 0%, forward 25%, backward 50%, "
        "optimizer 0%, other 0%"
    )
