"""A run's duration includes its preparation, said apart (issue 34, item 25):
the Runs tab said "Took 0:47" for 2:21 on the clock when the data and the
feature cache took the rest."""

from __future__ import annotations

import time

import pytest

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.runs.listing import list_runs
from workbench.core.session import Session
from workbench.core.train import engine
from workbench.core.train.engine import TrainControl

CFG = TrainConfig(
    dataset="digits", model="mlp", batch_size=64, max_steps=3, log_every=1
)


def _train(session: Session, cfg: TrainConfig) -> None:
    plan = session.plan(cfg)
    session.begin(plan)
    events = list(session.train(plan, TrainControl()))
    session.finish(next(e for e in events if isinstance(e, E.TrainResult)))


def test_the_preparation_is_recorded_apart_and_added_over_continues(
    runs_root, monkeypatch
):
    slow = engine.prepare_run

    def prepare_slowly(*args, **kwargs):
        time.sleep(1.2)  # as a large folder's decoding would
        return slow(*args, **kwargs)

    monkeypatch.setattr("workbench.core.session.prepare_run", prepare_slowly)
    session = Session(origin="test")
    _train(session, CFG)
    (run,) = list_runs()
    first = run.prepare_seconds
    assert first >= 1.2
    _train(session, CFG.replace(max_steps=6))  # Continue: preparing again
    (run,) = list_runs()
    assert run.prepare_seconds == pytest.approx(first * 2, rel=0.5)
    assert run.prepare_seconds > first
