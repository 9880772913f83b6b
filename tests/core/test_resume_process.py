"""Exact resume across processes: stop, save, resume in a new process, compare.

For each setting, three new processes (started in the background when the
session starts: see ``tests/prefetch.py``): one trains N steps straight; one
trains, is stopped after K steps (mid-epoch, as the Stop button or Ctrl+C does)
and saves; one resumes that checkpoint with ``ptcore-workbench train --resume``
and runs to N. The resumed run's loss sequence (the K saved steps plus the rest)
must equal the straight one element for element.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

from tests import prefetch
from tests.warm_python import SIDE_BY_SIDE
from workbench.core.config import TrainConfig, save_config

pytestmark = pytest.mark.slow

STOP_AT = 30  # digits at batch 64: 23 steps an epoch, so mid-way through epoch 2

_STOP_AND_SAVE = textwrap.dedent(
    """
    import sys
    from workbench.core import events as E
    from workbench.core.checkpoints.io import save_checkpoint
    from workbench.core.config import load_config
    from workbench.core.train.engine import TrainControl, iter_fit, prepare_run

    cfg = load_config(sys.argv[1])
    run = prepare_run(cfg)
    control = TrainControl()
    for event in iter_fit(run, control):
        if isinstance(event, E.StepMetrics) and event.global_step == int(sys.argv[3]):
            control.request_stop()
    save_checkpoint(sys.argv[2], run)
    print(run.global_step, run.epoch, run.batch_in_epoch)
    """
)


def _losses(path) -> list[float]:
    return [s["loss"] for s in json.loads(path.read_text())["steps"]]


SETTINGS = {
    "fast": {"loader": "fast"},
    "dataloader": {"loader": "dataloader", "workers": 0},
    # The classic CNN's dropout draws random numbers at every step, so the RNG
    # state must resume too; its frozen first layer takes oneDNN's
    # weight-gradient path without an input gradient.
    "dropout-and-frozen-layer": {
        "loader": "fast",
        "model": "cnn",
        "frozen": ("conv1.*",),
    },
}
TRAIN = [sys.executable, "-m", "workbench", "train", "--quiet", "--metrics-json"]


@prefetch.plan("resumed", per="setting")
def resumed_plan(tmp, setting):
    """Straight and stopped side by side, then the resume."""
    # Their OpenMP helpers sleep between ops instead of spinning for the next.
    env = {**os.environ, **SIDE_BY_SIDE, "PTCORE_RUNS_DIR": str(tmp / "runs")}
    cfg = TrainConfig(
        dataset="digits", model="small-cnn", epochs=2, batch_size=64, log_every=1
    ).replace(**SETTINGS[setting])
    save_config(cfg, tmp / "run.json")
    straight = [*TRAIN, str(tmp / "straight.json"), "--config", str(tmp / "run.json")]
    stop = [sys.executable, "-c", _STOP_AND_SAVE, str(tmp / "run.json")]
    stop += [_saved(tmp), str(STOP_AT)]
    done = yield {
        "straight": prefetch.Command(straight, env, processes=2),
        "stopped": prefetch.Command(stop, env, processes=2),
    }
    prefetch.succeeded(done)
    resume = [*TRAIN, str(tmp / "resumed.json"), "--resume", _saved(tmp)]
    prefetch.succeeded((yield {"resumed": prefetch.Command(resume, env, processes=2)}))
    return tmp, done["stopped"].stdout


def _saved(tmp) -> str:
    return str(tmp / "stopped.pt")


@pytest.fixture
def resumed(prefetched, setting):
    return prefetched.result(resumed_plan, setting)


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_stop_save_and_resume_in_a_new_process_repeats_the_run(resumed, setting):
    folder, where = resumed
    assert where.split() == [str(STOP_AT), "1", str(STOP_AT - 23)]  # mid-epoch
    expected = _losses(folder / "straight.json")
    assert len(expected) == 46
    assert _losses(folder / "resumed.json") == expected
