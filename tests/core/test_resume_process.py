"""Exact resume across processes: stop, save, resume in a new process, compare.

For each setting, three new processes (forked from a Python that has imported
torch, so each holds no workbench state: see ``tests/warm_python.py``): one
trains N steps straight; one
trains, is stopped after K steps (mid-epoch, as the Stop button or Ctrl+C does)
and saves; one resumes that checkpoint with ``ptcore-workbench train --resume``
and runs to N. The resumed run's loss sequence (the K saved steps plus the rest)
must equal the straight one element for element.
"""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from tests.warm_python import SIDE_BY_SIDE, WarmProcess
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


def _output(process: WarmProcess) -> str:
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    return stdout


def _losses(path) -> list[float]:
    return [s["loss"] for s in json.loads(path.read_text())["steps"]]


@pytest.mark.parametrize(
    "changes",
    [
        {"loader": "fast"},
        {"loader": "dataloader", "workers": 0},
        # The classic CNN's dropout draws random numbers at every step, so the
        # RNG state must resume too; its frozen first layer takes oneDNN's
        # weight-gradient path without an input gradient.
        {"loader": "fast", "model": "cnn", "frozen": ("conv1.*",)},
    ],
    ids=["fast", "dataloader", "dropout-and-frozen-layer"],
)
def test_stop_save_and_resume_in_a_new_process_repeats_the_run(
    tmp_path, changes, warm_python
):
    cfg = TrainConfig(
        dataset="digits", model="small-cnn", epochs=2, batch_size=64, log_every=1
    ).replace(**changes)
    config = tmp_path / "run.json"
    save_config(cfg, config)

    # The straight run and the stopped one are independent: run them side by
    # side, their OpenMP helpers sleeping between ops instead of spinning (the
    # resume, alone, shares their setting and so their warm parent).
    env = {**os.environ, **SIDE_BY_SIDE}
    train = ["-m", "workbench", "train", "--quiet", "--metrics-json"]
    straight = tmp_path / "straight.json"
    straight_process = warm_python.popen(
        [*train, str(straight), "--config", str(config)], env=env
    )
    checkpoint = tmp_path / "stopped.pt"
    stop = ["-c", _STOP_AND_SAVE, str(config), str(checkpoint), str(STOP_AT)]
    where = _output(warm_python.popen(stop, env=env))
    _output(straight_process)
    assert where.split() == [str(STOP_AT), "1", str(STOP_AT - 23)]  # mid-epoch

    resumed = tmp_path / "resumed.json"
    resume = [*train, str(resumed), "--resume", str(checkpoint)]
    _output(warm_python.popen(resume, env=env))

    expected = _losses(straight)
    assert len(expected) == 46
    assert _losses(resumed) == expected
