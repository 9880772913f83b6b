"""Resuming a run on the same, or another, number of processes.

A two-process run of cnn (dropout: each rank its own random numbers) stopped
by ``--max-steps`` mid-epoch and resumed on two processes must repeat the
uninterrupted two-process run bit for bit: losses and final weights. Resumed
on one process (or a one-process checkpoint on two), the batches are the same
but the gradients are summed in another order: the run says so once and its
losses stay close. That MLP has no BatchNorm and no dropout, and the schedule
is constant, so the stop changes nothing else.
"""

from __future__ import annotations

import json
import os
import sys

import pytest
import torch

from tests import prefetch
from workbench.core.checkpoints.io import (
    checkpoint_dict,
    load_checkpoint,
    save_checkpoint,
)
from workbench.core.config import TrainConfig
from workbench.core.distributed.reshard import resize_notice, saved_world_size
from workbench.core.session import Session
from workbench.core.train.engine import prepare_run

STOP, STEPS = 30, 40  # digits at batch 64: 23 steps an epoch, so mid-epoch 2
RUN = [
    "train",
    "--quiet",
    "--model",
    "mlp",
    "--dataset",
    "digits",
    "--batch-size",
    "64",
    "--schedule",
    "constant",
    "--device",
    "cpu",
    # fp32: the equivalence limits are fp32 rounding (precision auto may be bf16).
    "--precision",
    "fp32",
]
ONE = [sys.executable, "-m", "workbench"]
TWO = [
    *(sys.executable, "-m", "torch.distributed.run", "--standalone"),
    *("--nproc-per-node", "2", "-m", "workbench"),
]
# A model with dropout (--model cnn), up to --max-steps N.
CNN = ("--model", "cnn", "--max-steps")
# The words that start the notice (its counts follow).
NOTICE = "note: this checkpoint was saved by "


def _train(tmp, name, launcher, *flags):
    """``train`` saving to ``tmp``; :func:`_trained` reads what it wrote."""
    # One thread a process: the runs of a wave share this machine's cores.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PTCORE_RUNS_DIR": str(tmp / name)}
    command = [*launcher, *RUN, *flags, "--save", str(tmp / f"{name}.pt")]
    command += ["--metrics-json", str(tmp / f"{name}.json")]
    return prefetch.Command(command, env, processes=3 if launcher is TWO else 1)


def _trained(tmp, name, done):
    """The run's metrics document, its output and its checkpoint."""
    assert done.returncode == 0, done.stderr[-3000:]
    return (
        json.loads((tmp / f"{name}.json").read_text()),
        done.stdout,
        tmp / f"{name}.pt",
    )


def _losses(doc):
    return [s["loss"] for s in doc["steps"]]


def _max_relative(a, b):
    return max(abs(x - y) / abs(x) for x, y in zip(a, b, strict=True))


@prefetch.plan("runs")
def runs_plan(tmp):
    """Uninterrupted on two; stopped at STOP on two and one; each resumed."""
    first = {
        "straight": _train(tmp, "straight", TWO, "--max-steps", str(STEPS)),
        "stopped-2": _train(tmp, "stopped-2", TWO, "--max-steps", str(STOP)),
        "stopped-1": _train(tmp, "stopped-1", ONE, "--max-steps", str(STOP)),
        # cnn has dropout: each rank draws its own masks from its own RNG.
        "straight-cnn": _train(tmp, "straight-cnn", TWO, *CNN, str(STEPS)),
        "stopped-cnn": _train(tmp, "stopped-cnn", TWO, *CNN, str(STOP)),
    }
    done = yield first
    done = {name: _trained(tmp, name, result) for name, result in done.items()}
    second = {
        name: _train(
            tmp,
            name,
            launcher,
            "--resume",
            str(done[start][2]),
            *(CNN[:2] if "cnn" in name else ()),
            "--max-steps",
            str(STEPS),
        )
        for name, launcher, start in (
            ("2-on-1", ONE, "stopped-2"),
            ("1-on-2", TWO, "stopped-1"),
            ("cnn-2-on-2", TWO, "stopped-cnn"),
        )
    }
    resumed = yield second
    return done | {
        name: _trained(tmp, name, result) for name, result in resumed.items()
    }


@pytest.fixture(scope="module")
def runs(prefetched):
    return prefetched.result(runs_plan)


@pytest.mark.slow
def test_two_processes_resumed_on_two_repeat_the_run_bit_for_bit(runs):
    """cnn has dropout: each rank's RNG is in the checkpoint, not only rank 0's."""
    straight, resumed = runs["straight-cnn"], runs["cnn-2-on-2"]
    assert len(_losses(straight[0])) == STEPS
    assert _losses(resumed[0]) == _losses(straight[0])
    weights = [load_checkpoint(run[2])["model_state"] for run in (straight, resumed)]
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
    stopped = load_checkpoint(runs["stopped-cnn"][2])
    assert stopped["world_size"] == 2
    assert len(stopped["rank_rng"]) == 2
    ranks = [state["torch"] for state in stopped["rank_rng"]]
    assert not torch.equal(ranks[0], ranks[1])
    assert NOTICE not in resumed[1]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "counts"),
    [
        ("2-on-1", "2 processes and continues on 1 process"),
        ("1-on-2", "1 process and continues on 2 processes"),
    ],
    ids=["2-on-1", "1-on-2"],
)
def test_another_process_count_says_so_once_and_stays_close(runs, name, counts):
    doc, stdout, _saved = runs[name]
    assert stdout.count(NOTICE) == 1
    assert f"{NOTICE}{counts}" in stdout
    assert "rank 1" not in stdout
    straight = _losses(runs["straight"][0])
    assert len(_losses(doc)) == STEPS
    assert _max_relative(straight, _losses(doc)) < 1e-4


def test_a_checkpoint_records_how_many_processes_trained_it(tmp_path, monkeypatch):
    cfg = TrainConfig(dataset="digits", model="mlp", batch_size=64, max_steps=1)
    run = prepare_run(cfg)
    assert checkpoint_dict(run)["world_size"] == 1
    monkeypatch.setenv("WORLD_SIZE", "3")  # as torchrun sets it, no group needed
    path = save_checkpoint(tmp_path / "three.pt", run)
    monkeypatch.delenv("WORLD_SIZE")
    payload = load_checkpoint(path)  # weights_only=True still reads it
    assert saved_world_size(payload) == 3
    del payload["world_size"]  # as written before the field existed
    assert saved_world_size(payload) == 1

    # The window (one process) opens it: one note naming both counts.
    notes = Session(origin="test").open(path, evaluate=False).notes
    assert [n for n in notes if n.startswith("this checkpoint was saved by")] == [
        resize_notice(3, 1, run.model)
    ]
    assert "saved by 3 processes and continues on 1 process" in notes[-1]
    assert "BatchNorm" not in notes[-1]  # the mlp has none


def test_the_notice_names_batchnorm_only_for_a_model_that_has_it():
    plain = torch.nn.Sequential(torch.nn.Linear(2, 2))
    batchnorm = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))
    assert resize_notice(2, 2, batchnorm) is None
    assert "BatchNorm" not in resize_notice(1, 2, plain)
    assert "BatchNorm statistics" in resize_notice(2, 1, batchnorm)
    assert "the batches and their order stay the same" in resize_notice(4, 2, plain)


def test_a_damaged_rank_rng_is_a_clear_message(tmp_path, monkeypatch):
    """Each rank sets its own RNG from the checkpoint: a state that is not one
    is refused like the other random states, not a RuntimeError."""
    from workbench.core.checkpoints.io import CheckpointError, restore_run
    from workbench.core.distributed import env as distributed

    cfg = TrainConfig(dataset="digits", model="mlp", batch_size=64, max_steps=1)
    payload = checkpoint_dict(prepare_run(cfg))
    payload["rank_rng"] = [{"torch": torch.zeros(3, dtype=torch.uint8)}] * 2
    # Rank 1 of 2, without a process group: nothing here needs one.
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setattr(distributed, "start", lambda device: None)
    with pytest.raises(CheckpointError, match="random states are not usable"):
        restore_run(payload, config=cfg)
