"""One run on two processes (torchrun, gloo on CPU) repeats the same run on one.

The global batch stays ``--batch-size``; each rank trains its contiguous half of
every batch and DDP averages the gradients, so the logged loss of every step must
match one process's to float rounding. digits has 1,437 training images: at
batch 64 every epoch ends with a batch of 29 (15 + 14 on two ranks), so the
100 steps also pin the scaling of an uneven last batch (steps 23, 46, 69, 92).
"""

from __future__ import annotations

import json
import os
import sys

import pytest
import torch

from tests import prefetch
from workbench.cli.distributed import without_nproc
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.loaders import shard_batches, split_batches
from workbench.core.distributed.ddp import check_batch
from workbench.core.distributed.sync_bn import BATCHNORM_NOTICE
from workbench.core.models.builtins import build_model
from workbench.core.session import Session

STEPS = 100
RUN = [
    "train",
    "--quiet",
    "--model",
    "mlp",
    "--dataset",
    "digits",
    "--batch-size",
    "64",
    "--max-steps",
    str(STEPS),
    "--device",
    "cpu",
    # fp32: the equivalence limits are fp32 rounding (precision auto may be bf16).
    "--precision",
    "fp32",
]
MODULE = [sys.executable, "-m", "workbench"]
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
DIRECT = [*TORCHRUN, "--nproc-per-node", "2", "-m", "workbench"]


def _env(runs_dir):
    # One thread each: two processes on this machine's two cores.
    return {**os.environ, "OMP_NUM_THREADS": "1", "PTCORE_RUNS_DIR": str(runs_dir)}


def _train(tmp, name, launcher, *flags, processes=1):
    """``train`` with its metrics in ``tmp``; :func:`_trained` reads them."""
    command = [*launcher, *RUN, *flags, "--metrics-json", str(tmp / f"{name}.json")]
    return prefetch.Command(command, _env(tmp / f"{name}-runs"), processes)


def _trained(tmp, name, done):
    """The run's metrics document, its output and its runs folder."""
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((tmp / f"{name}.json").read_text()), done, tmp / f"{name}-runs"


@prefetch.plan("runs")
def runs_plan(tmp):
    """One process, two through torchrun, two through ``--nproc`` (DataLoader)."""
    done = yield {
        "one": _train(tmp, "one", MODULE),
        "two": _train(tmp, "two", DIRECT, processes=3),
        "two-dataloader": _train(
            tmp,
            "two-dataloader",
            MODULE,
            "--nproc",
            "2",
            "--loader",
            "dataloader",
            processes=3,
        ),
    }
    return {name: _trained(tmp, name, result) for name, result in done.items()}


@pytest.fixture(scope="module")
def runs(prefetched):
    return prefetched.result(runs_plan)


# Frozen weights and bf16 on one and on two processes (see the test below).
FROZEN = ("--precision", "bf16", "--freeze", "hidden.1.*", "--max-steps", "40")
FROZEN += ("--feature-cache", "off")  # the full model on both sides


@prefetch.plan("second_wave")
def second_wave_plan(tmp):
    """A BatchNorm model on two processes, a batch that does not split (refused
    before training), and the frozen bf16 run on one process and on two."""
    batchnorm = [*RUN, "--model", "small-cnn", "--max-steps", "2", "--nproc", "2"]
    uneven = [*RUN, "--nproc", "2", "--batch-size", "63"]
    frozen = {
        name: _train(
            tmp, name, MODULE, *FROZEN, *more, "--save", str(tmp / name), processes=n
        )
        for name, more, n in (("one", (), 1), ("two", ("--nproc", "2"), 3))
    }
    done = yield {
        "batchnorm": prefetch.Command(
            [*MODULE, *batchnorm], _env(tmp / "batchnorm-runs"), processes=3
        ),
        "uneven": prefetch.Command([*MODULE, *uneven], _env(tmp / "uneven-runs")),
        **{f"frozen-{name}": command for name, command in frozen.items()},
    }
    return {
        "batchnorm": done["batchnorm"],
        "uneven": (done["uneven"], tmp / "uneven-runs"),
        "frozen": {
            name: (_trained(tmp, name, done[f"frozen-{name}"])[0], tmp / name)
            for name in frozen
        },
    }


@pytest.fixture(scope="module")
def second_wave(prefetched):
    return prefetched.result(second_wave_plan)


def _losses(doc):
    return [s["loss"] for s in doc["steps"]]


def _max_relative(a, b):
    return max(abs(x - y) / abs(x) for x, y in zip(a, b, strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("which", ["two", "two-dataloader"])
def test_two_processes_log_the_same_losses_as_one(runs, which):
    one, two = runs["one"][0], runs[which][0]
    assert len(_losses(one)) == len(_losses(two)) == STEPS
    # Equal up to the order of float sums (one batch against an all-reduce of
    # two halves): measured 1e-6 on a Xeon, 2e-5 on an AMD EPYC.
    assert _max_relative(_losses(one), _losses(two)) < 1e-4
    accuracy = one["final"]["val_accuracy"], two["final"]["val_accuracy"]
    assert abs(accuracy[0] - accuracy[1]) <= 0.001  # 0.1 points
    assert two["final"]["global_step"] == STEPS


@pytest.mark.slow
@pytest.mark.parametrize("which", ["two", "two-dataloader"])
def test_only_rank_0_prints_and_writes_the_run_folder(runs, which):
    _doc, done, folder = runs[which]
    assert len(list(folder.iterdir())) == 1
    lines = done.stdout.splitlines()
    assert sum(line.startswith("run folder: ") for line in lines) == 1
    assert sum(line.startswith("done: step 100/100") for line in lines) == 1
    assert sum("this is rank 0" in line for line in lines) == 1
    assert "rank 1" not in done.stdout


@pytest.mark.slow
def test_a_batchnorm_model_is_told_once_its_statistics_stay_per_process(
    runs, second_wave
):
    assert BATCHNORM_NOTICE not in runs["two"][1].stdout  # the mlp has none
    done = second_wave["batchnorm"]  # small-cnn, 2 steps, --nproc 2
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count(BATCHNORM_NOTICE) == 1


@pytest.mark.slow
def test_a_batch_that_does_not_split_is_one_line_and_no_run(second_wave):
    done, runs = second_wave["uneven"]  # --nproc 2 --batch-size 63
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "ptcore-workbench train: error: batch size 63 does not split evenly over "
        "2 processes: give a multiple of 2 (--batch-size is the global batch)"
    ]
    assert "Traceback" not in done.stdout + done.stderr
    assert not runs.exists() or not any(runs.iterdir())


def test_each_rank_takes_its_own_contiguous_chunk_of_every_global_batch():
    order = torch.randperm(157, generator=torch.Generator().manual_seed(0))
    batches = split_batches(order, 64)
    shards = [shard_batches(batches, rank, 2) for rank in (0, 1)]
    for k, batch in enumerate(batches):
        assert torch.equal(torch.cat([shards[0][k], shards[1][k]]), batch)
    assert [len(s[-1]) for s in shards] == [15, 14]  # 157 = 2 * 64 + 29


def test_the_batch_must_split_over_the_processes():
    check_batch(63, 1)
    check_batch(64, 2, 1437)
    with pytest.raises(ConfigError, match="multiple of 2"):
        check_batch(63, 2)
    with pytest.raises(ConfigError, match="fewer than the 2 processes"):
        check_batch(64, 2, 129)  # a last batch of one sample


def test_a_rank_other_than_0_opens_no_run_folder(monkeypatch, runs_root):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    session = Session(origin="test")
    assert session.begin(session.plan(TrainConfig(batch_size=64))) == []
    assert session.folder is None
    assert session.recorder is None
    assert not any(runs_root.iterdir())


def test_nproc_is_taken_out_of_the_relaunched_command():
    argv = ["train", "--nproc", "2", "--model", "mlp", "--nproc=3", "--quiet"]
    assert without_nproc(argv) == ["train", "--model", "mlp", "--quiet"]


def test_shard_rows_cut_as_tensor_split_does():
    from workbench.core.data.loaders import shard_rows

    for size in range(0, 12):
        for world in (1, 2, 3, 4):
            pieces = torch.tensor_split(torch.arange(size), world)
            for rank, piece in enumerate(pieces):
                start, stop = shard_rows(size, rank, world)
                assert torch.equal(torch.arange(size)[start:stop], piece)


@pytest.mark.slow
def test_a_frozen_mask_and_bf16_train_on_two_processes_as_on_one(second_wave):
    """DDP is built after freezing: frozen weights stay the seed's on every
    rank; bf16 rounds half batches a little differently, nothing more."""
    docs = {name: doc for name, (doc, _saved) in second_wave["frozen"].items()}
    saved = {name: path for name, (_doc, path) in second_wave["frozen"].items()}
    assert _max_relative(_losses(docs["one"])[:40], _losses(docs["two"])) < 1e-2
    assert docs["one"]["final"]["val_accuracy"] == docs["two"]["final"]["val_accuracy"]
    states = {
        name: torch.load(saved[name], weights_only=True)["model_state"] for name in docs
    }
    seed = build_model("mlp", seed=TrainConfig().seed).state_dict()
    for name, state in states.items():
        assert torch.equal(state["hidden.1.weight"], seed["hidden.1.weight"]), name
        assert not torch.equal(state["hidden.3.weight"], seed["hidden.3.weight"])
