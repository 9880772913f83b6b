"""Exact resume across processes: stop, save, resume in a new process, compare.

For each setting, three fresh interpreters: one trains N steps straight; one
trains, is stopped after K steps (mid-epoch, as the Stop button or Ctrl+C does)
and saves; one resumes that checkpoint with ``ptcore-workbench train --resume``
and runs to N. The resumed run's loss sequence (the K saved steps plus the rest)
must equal the straight one element for element.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from workbench.core.config import TrainConfig, save_config

pytestmark = pytest.mark.slow

STOP_AT = 30  # digits at batch 64: 23 steps an epoch, so mid-way through epoch 2

_STOP_AND_SAVE = textwrap.dedent(
    """
    import sys
    from workbench.core import events as E
    from workbench.core.checkpoints import save_checkpoint
    from workbench.core.config import load_config
    from workbench.core.engine import TrainControl, iter_fit, prepare_run

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


def _python(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _losses(path) -> list[float]:
    return [s["loss"] for s in json.loads(path.read_text())["steps"]]


@pytest.mark.parametrize(
    "changes",
    [
        {"loader": "fast"},
        {"loader": "dataloader", "workers": 0},
        {"loader": "fast", "frozen": ("block1.*",)},
        # Dropout draws random numbers at every step: the RNG state must resume.
        {"loader": "fast", "model": "cnn"},
    ],
    ids=["fast", "dataloader", "frozen-layer", "dropout"],
)
def test_stop_save_and_resume_in_a_new_process_repeats_the_run(tmp_path, changes):
    cfg = TrainConfig(
        dataset="digits", model="small-cnn", epochs=2, batch_size=64, log_every=1
    ).replace(**changes)
    config = tmp_path / "run.json"
    save_config(cfg, config)

    straight = tmp_path / "straight.json"
    _python(
        "-m",
        "workbench",
        "train",
        "--quiet",
        "--config",
        str(config),
        "--metrics-json",
        str(straight),
    )

    checkpoint = tmp_path / "stopped.pt"
    where = _python("-c", _STOP_AND_SAVE, str(config), str(checkpoint), str(STOP_AT))
    assert where.split() == [str(STOP_AT), "1", str(STOP_AT - 23)]  # mid-epoch

    resumed = tmp_path / "resumed.json"
    _python(
        "-m",
        "workbench",
        "train",
        "--quiet",
        "--resume",
        str(checkpoint),
        "--metrics-json",
        str(resumed),
    )

    expected = _losses(straight)
    assert len(expected) == 46
    assert _losses(resumed) == expected
