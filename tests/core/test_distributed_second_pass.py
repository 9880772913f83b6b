"""More promises of a run on several processes, pinned without launching torchrun.

As in ``test_distributed_guards.py``: a rank reads who it is from torchrun's
environment (set with ``monkeypatch.setenv``), and where a collective matters a
stand-in gives the other rank's share. Each test pins a promise the slow
torchrun tests only cover as a whole, or not at all on a machine without GPUs:
whose random numbers a checkpoint keeps, which GPU a rank uses, what
``--sync-bn`` reaches, which process writes, how long a collective may wait,
and how a failed rank is named.
"""

from __future__ import annotations

import datetime
import json
import sys
from types import SimpleNamespace

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

from workbench.cli import distributed as cli_distributed
from workbench.cli.commands import main
from workbench.core.config import TrainConfig
from workbench.core.distributed import ddp
from workbench.core.distributed import env as distributed
from workbench.core.distributed.reshard import resize_notice
from workbench.core.distributed.sync_bn import BATCHNORM_NOTICE
from workbench.core.session import Session


def _as_rank(monkeypatch, rank: int, world: int, local: int | None = None) -> None:
    """torchrun's environment for ``rank`` of ``world`` (``local`` on its machine)."""
    monkeypatch.setenv("RANK", str(rank))
    monkeypatch.setenv("WORLD_SIZE", str(world))
    monkeypatch.setenv("LOCAL_RANK", str(rank if local is None else local))


def _rng_state(seed: int) -> torch.Tensor:
    return torch.Generator().manual_seed(seed).get_state()


# ------------------------------------------------------------ random numbers


def test_a_checkpoint_keeps_each_ranks_own_random_numbers_in_rank_order(
    monkeypatch,
):
    """``gather_rng`` on rank 0 of 2: the states every rank sent, rank by rank."""
    _as_rank(monkeypatch, 0, 2)
    monkeypatch.setattr(distributed, "active", lambda: True)
    theirs = _rng_state(1)

    def all_gather(values):
        return [values.clone(), theirs.clone()]

    monkeypatch.setattr(distributed, "all_gather", all_gather)
    run = SimpleNamespace(device=torch.device("cpu"), rank_rng=None)
    ddp.gather_rng(run)
    assert [sorted(state) for state in run.rank_rng] == [["torch"], ["torch"]]
    assert torch.equal(run.rank_rng[0]["torch"], torch.get_rng_state())
    assert torch.equal(run.rank_rng[1]["torch"], theirs)


def test_a_resumed_rank_sets_its_cuda_random_numbers_on_its_own_gpu(monkeypatch):
    # The second machine's second process: rank 3 overall, GPU 1 on its machine.
    _as_rank(monkeypatch, 3, 4, local=1)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    set_on: list[tuple[torch.Tensor, torch.device]] = []
    monkeypatch.setattr(
        torch.cuda,
        "set_rng_state",
        lambda state, device: set_on.append((state, device)),
    )
    states = [
        {"torch": _rng_state(r), "cuda": torch.full((4,), r, dtype=torch.uint8)}
        for r in range(4)
    ]
    with torch.random.fork_rng():
        assert ddp.restore_rank_rng(states) is True
        assert torch.equal(torch.get_rng_state(), states[3]["torch"])
    ((state, device),) = set_on
    assert torch.equal(state, states[3]["cuda"])
    assert device == torch.device("cuda", 1)


# ------------------------------------------------------- DDP around the model


def _bn_model() -> nn.Module:
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten())


def _cuda_run(sync_bn: bool) -> SimpleNamespace:
    """What ``attach`` reads of a run on ``cuda:1`` (no GPU is touched)."""
    train = SimpleNamespace(batch_size=64, num_samples=256, shard=None)
    return SimpleNamespace(
        loaders=SimpleNamespace(train=train),
        device=torch.device("cuda", 1),
        model=_bn_model(),
        config=SimpleNamespace(sync_bn=sync_bn),
        notices=[],
        ddp=None,
    )


@pytest.mark.parametrize("sync_bn", [True, False])
def test_ddp_wraps_each_ranks_model_on_its_gpu_with_the_batchnorm_asked_for(
    monkeypatch, sync_bn
):
    _as_rank(monkeypatch, 1, 2)
    monkeypatch.setattr(distributed, "active", lambda: True)
    wrapped: list[tuple[nn.Module, object]] = []

    def record(module, device_ids=None):
        wrapped.append((module, device_ids))
        return "ddp"

    monkeypatch.setattr(ddp, "DistributedDataParallel", record)
    run = _cuda_run(sync_bn)
    ddp.attach(run)
    ((module, device_ids),) = wrapped
    assert device_ids == [1]  # cuda:1, not the machine's first GPU
    assert run.ddp == "ddp"
    assert run.loaders.train.shard == (1, 2)
    kinds = {type(m) for m in module.modules()}
    if sync_bn:  # --sync-bn on CUDA: statistics shared, nothing to say
        assert nn.SyncBatchNorm in kinds
        assert nn.BatchNorm2d not in kinds
        assert run.notices == []
    else:
        assert nn.SyncBatchNorm not in kinds
        assert run.notices == [BATCHNORM_NOTICE]


# --------------------------------------------------- who writes, how long one waits


def test_only_the_first_process_of_all_writes_not_each_machines_first(
    monkeypatch, runs_root
):
    """Two machines of two processes: the second machine's first is rank 2."""
    _as_rank(monkeypatch, 2, 4, local=0)
    assert not distributed.is_main()
    session = Session(origin="test")
    assert session.begin(session.plan(TrainConfig(batch_size=64))) == []
    assert session.folder is None
    assert not any(runs_root.iterdir())
    _as_rank(monkeypatch, 0, 4, local=0)
    assert distributed.is_main()


def test_a_collective_waits_60_seconds_at_most(monkeypatch):
    joined = []
    monkeypatch.setattr(
        dist, "init_process_group", lambda backend, **kw: joined.append(kw)
    )
    _as_rank(monkeypatch, 1, 2)
    assert distributed.start(torch.device("cpu")) is not None
    assert joined == [{"timeout": datetime.timedelta(seconds=60)}]


def test_the_resize_notice_compares_with_the_count_that_saved_the_run():
    plain = nn.Sequential(nn.Linear(2, 2))
    said = resize_notice(2, 1, plain)
    assert said.startswith(
        "this checkpoint was saved by 2 processes and continues on 1 process:"
    )
    assert said.endswith("not bit for bit, the run it would have been on 2 processes")


# ------------------------------------------------------------- a failed rank


@pytest.fixture
def relaunched(monkeypatch):
    """``train --nproc 2`` with torchrun replaced by ``raise error``."""
    monkeypatch.setenv("OMP_NUM_THREADS", "")  # relaunch sets it: undone after
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.setattr(cli_distributed, "_quiet_agent_logs", lambda: None)

    def launch(error: BaseException) -> int:
        def run(_launch):
            raise error

        monkeypatch.setattr(cli_distributed, "run", run)
        return main(["train", "--model", "mlp", "--batch-size", "24", "--nproc", "2"])

    return launch


def _failure(exitcode, own=None):
    return SimpleNamespace(
        exitcode=exitcode,
        error_file_data={"ptcore_workbench": own} if own else {},
        signal_name=lambda: "SIGTERM",
    )


@pytest.mark.parametrize("rank_0_code", [130, 2])
def test_a_ranks_error_is_named_even_when_rank_0_stopped_or_refused(
    relaunched, capsys, rank_0_code
):
    error = ChildFailedError.__new__(ChildFailedError)
    error.failures = {
        0: _failure(rank_0_code),
        1: _failure(1, {"error": "MemoryError: out of memory", "time": 5.0}),
    }
    assert relaunched(error) == 1
    assert capsys.readouterr().err == (
        "ptcore-workbench train: error: rank 1 failed: MemoryError: out of memory; "
        "the other processes were ended\n"
    )


@pytest.mark.parametrize("rank_0_code", [130, 2])
def test_a_rank_that_only_lost_rank_0_leaves_its_ending_to_rank_0(
    relaunched, capsys, rank_0_code
):
    """Rank 0 refused (a user error it printed) or stopped while rank 1 was in
    a collective: rank 1 lost its peer, which names no failure of its own."""
    error = ChildFailedError.__new__(ChildFailedError)
    lost = {"error": "RuntimeError: Connection closed by peer", "time": 5.0}
    error.failures = {
        0: _failure(rank_0_code),
        1: _failure(1, {**lost, "peer_lost": True}),
    }
    assert relaunched(error) == rank_0_code
    assert capsys.readouterr().err == ""


def _run_rank(monkeypatch, error: BaseException):
    """``run_rank`` of a train that raises ``error``; what it returned or raised."""
    monkeypatch.setattr(distributed, "stop", lambda: None)
    monkeypatch.setattr(sys, "stdout", sys.stdout)
    before = sys.stdout

    def train(_args):
        raise error

    args = SimpleNamespace(quiet=False, save=None, metrics_json=None)
    try:
        return cli_distributed.run_rank(train, args)
    except Exception as exc:  # what came out is what the test looks at
        return exc
    finally:
        if sys.stdout is not before:
            sys.stdout.close()
            sys.stdout = before


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("[../third_party/x.cc:72] Connection reset by peer"),
        RuntimeError("Connection closed by peer [127.0.0.1]:43520"),
        dist.DistNetworkError("failed to recv, got 0 bytes"),
    ],
    ids=["reset", "closed", "dist-error"],
)
def test_a_rank_that_only_lost_its_peer_exits_quietly_and_says_so(
    monkeypatch, tmp_path, error
):
    path = tmp_path / "error.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(path))
    _as_rank(monkeypatch, 1, 2)
    assert _run_rank(monkeypatch, error) == 1  # no traceback: not the cause
    assert json.loads(path.read_text())["ptcore_workbench"]["peer_lost"] is True


def test_a_rank_that_fails_writes_its_error_for_the_agent(monkeypatch, tmp_path):
    path = tmp_path / "error.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(path))
    _as_rank(monkeypatch, 1, 2)
    error = ValueError("bad")
    assert _run_rank(monkeypatch, error) is error
    own = json.loads(path.read_text())["ptcore_workbench"]
    assert (own["error"], own["peer_lost"]) == ("ValueError: bad", False)


def test_one_process_shows_a_connection_error_like_any_other(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    error = RuntimeError("Connection reset by peer while downloading")
    assert _run_rank(monkeypatch, error) is error  # raised: its traceback shows
