"""The guards of a run on several processes, pinned without launching torchrun.

A rank reads who it is from torchrun's environment (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``), set here with ``monkeypatch.setenv``. Where the code needs a
process group (``ddp.attach`` wraps the model in DDP), the tests join PyTorch's
*fake* one: a single process plays rank r of N, and every collective returns
this rank's own numbers. Where a collective's sum matters, a second rank's share
is added by a stand-in for ``all_reduce_sum``. Each test pins a promise the slow
torchrun tests (``test_distributed*.py``) only cover as a whole: what each rank
writes, what is refused and switched off, how batches, rows, threads and random
numbers are shared.
"""

from __future__ import annotations

import os
import signal
import sys
from types import SimpleNamespace

import pytest
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.api import SignalException
from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
from torch.nn.parallel import DistributedDataParallel

# Registers the "fake" backend: one process stands for any rank of any size.
from torch.testing._internal.distributed.fake_pg import FakeStore

from workbench.cli import distributed as cli_distributed
from workbench.cli import interrupts
from workbench.cli import train as cli_train
from workbench.cli.commands import main
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.loaders import shard_rows
from workbench.core.distributed import ddp
from workbench.core.distributed import env as distributed
from workbench.core.distributed.reshard import saved_world_size
from workbench.core.distributed.sync_bn import BATCHNORM_NOTICE
from workbench.core.models.builtins import build_model
from workbench.core.session import Session
from workbench.core.train.engine import prepare_run
from workbench.core.train.feature_cache import FeatureFeed
from workbench.core.train.freezing import all_but_head


def _keep_local_gradients(state, bucket):
    done = torch.futures.Future()
    done.set_result(bucket.buffer())
    return done


def _ddp_over_the_fake_group(module, **kwargs):
    # The fake group's all-reduce hands DDP no tensor back; this hook keeps the
    # rank's own gradients, as an all-reduce over one rank would.
    wrapped = DistributedDataParallel(module, **kwargs)
    wrapped.register_comm_hook(None, _keep_local_gradients)
    return wrapped


@pytest.fixture
def join_ranks(monkeypatch):
    """``join(rank, world)``: this process becomes rank ``rank`` of ``world``."""
    monkeypatch.setattr(ddp, "DistributedDataParallel", _ddp_over_the_fake_group)

    def join(rank: int, world: int) -> None:
        for name, value in (
            ("RANK", rank),
            ("LOCAL_RANK", rank),
            ("WORLD_SIZE", world),
        ):
            monkeypatch.setenv(name, str(value))
        dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world)

    yield join
    if dist.is_initialized():
        dist.destroy_process_group()


def _as_rank(monkeypatch, rank: int, world: int) -> None:
    """torchrun's environment for ``rank`` of ``world``, without a process group."""
    monkeypatch.setenv("RANK", str(rank))
    monkeypatch.setenv("WORLD_SIZE", str(world))


# ------------------------------------------------------------------ refusals


def test_a_batch_is_refused_only_when_it_cannot_split_over_the_processes():
    # One process takes anything; a last batch of as many samples as processes,
    # or none, still gives every rank a sample.
    for batch, world, samples in [(63, 1, 64), (64, 2, 128), (64, 2, 130), (6, 3, 9)]:
        ddp.check_batch(batch, world, samples)
    with pytest.raises(ConfigError) as uneven:
        ddp.check_batch(63, 2)
    assert str(uneven.value) == (
        "batch size 63 does not split evenly over 2 processes: give a multiple "
        "of 2 (--batch-size is the global batch)"
    )
    with pytest.raises(ConfigError) as short:
        ddp.check_batch(6, 3, 8)
    assert str(short.value) == (
        "the last batch of an epoch has 2 sample(s), fewer than the 3 processes: "
        "choose another batch size"
    )


def test_a_last_batch_smaller_than_the_processes_is_refused_before_training(
    join_ranks, tiny_arrays
):
    """Only ``attach`` knows the training set's size: 256 images in batches of
    51 leave one image for three processes, and no run is built."""
    join_ranks(2, 3)
    with pytest.raises(ConfigError, match="has 1 sample\\(s\\), fewer than the 3 "):
        prepare_run(TrainConfig(model="mlp", batch_size=51), arrays=tiny_arrays)


def test_a_batch_that_cannot_split_opens_no_run_folder_even_on_rank_0(
    monkeypatch, runs_root
):
    _as_rank(monkeypatch, 0, 2)
    session = Session(origin="test")
    with pytest.raises(ConfigError, match="does not split evenly over 2 processes"):
        session.begin(session.plan(TrainConfig(batch_size=63)))
    assert session.folder is None
    assert not any(runs_root.iterdir())


# ------------------------------------------------------- what each rank writes


def _train_as_rank(join_ranks, rank, tmp_path, capsys, monkeypatch):
    """``train`` as rank ``rank`` of 2 with --save and --metrics-json; its output."""
    join_ranks(rank, 2)
    monkeypatch.setattr(sys, "stdout", sys.stdout)  # a rank > 0 swaps it for devnull
    before = sys.stdout
    ctrl_c = signal.getsignal(signal.SIGINT)  # train installs its own handler
    try:
        code = main(
            [
                "train",
                *("--model", "mlp", "--batch-size", "64", "--max-steps", "2"),
                *("--device", "cpu", "--precision", "fp32"),
                *("--save", str(tmp_path / "run.pt")),
                *("--metrics-json", str(tmp_path / "metrics.json")),
            ]
        )
    finally:
        signal.signal(signal.SIGINT, ctrl_c)
        if sys.stdout is not before:
            sys.stdout.close()
            sys.stdout = before
    assert code == 0
    assert not dist.is_initialized()  # every rank leaves the group at the end
    return capsys.readouterr()


def test_rank_0_prints_and_writes_the_run_folder_save_and_metrics(
    join_ranks, tmp_path, runs_root, capsys, monkeypatch
):
    out = _train_as_rank(join_ranks, 0, tmp_path, capsys, monkeypatch).out
    assert "done: step 2/2" in out
    assert (tmp_path / "run.pt").is_file()
    assert (tmp_path / "metrics.json").is_file()
    (folder,) = runs_root.iterdir()
    assert (folder / "run.json").is_file()


def test_another_rank_prints_nothing_and_writes_no_file(
    join_ranks, tmp_path, runs_root, capsys, monkeypatch
):
    said = _train_as_rank(join_ranks, 1, tmp_path, capsys, monkeypatch)
    assert said.out == ""
    assert not (tmp_path / "run.pt").exists()
    assert not (tmp_path / "metrics.json").exists()
    assert not any(runs_root.iterdir())


def _recording_train(code=0, error=None):
    seen = {}

    def train(args):
        seen.update(vars(args), stdout=sys.stdout)
        if error is not None:
            raise error
        return code

    return train, seen


def _run_rank(train, monkeypatch, rank):
    """``run_rank`` as ``rank`` of 2 (no group: ``train`` is a stand-in)."""
    _as_rank(monkeypatch, rank, 2)
    left = []
    monkeypatch.setattr(distributed, "stop", lambda: left.append(True))
    monkeypatch.setattr(sys, "stdout", sys.stdout)
    before = sys.stdout
    args = SimpleNamespace(quiet=False, save="run.pt", metrics_json="m.json")
    try:
        return cli_distributed.run_rank(train, args)
    finally:
        if sys.stdout is not before:
            sys.stdout.close()
            sys.stdout = before
        assert left == [True]  # the group is left however the rank ended


def test_another_rank_runs_quietly_and_its_ending_is_rank_0s_to_report(monkeypatch):
    train, seen = _recording_train(code=130)
    # A stopped run: rank 0 says 130; another rank's 130 would read as a
    # failure to torchrun's agent, which would end rank 0 while it saves.
    assert _run_rank(train, monkeypatch, 1) == 0
    assert (seen["quiet"], seen["save"], seen["metrics_json"]) == (True, None, None)
    assert seen["stdout"].name == os.devnull
    assert _run_rank(train, monkeypatch, 0) == 130
    assert (seen["quiet"], seen["save"], seen["metrics_json"]) == (
        False,
        "run.pt",
        "m.json",
    )

    # A user error: rank 0 says it (the command's one line), the others exit 2.
    bad = ConfigError("batch size 63 does not split")
    assert _run_rank(_recording_train(error=bad)[0], monkeypatch, 1) == 2
    with pytest.raises(ConfigError, match="batch size 63"):
        _run_rank(_recording_train(error=bad)[0], monkeypatch, 0)


# ---------------------------------------------------- what several processes share


@pytest.mark.parametrize("loader", ["fast", "dataloader"])
def test_rank_1_trains_its_own_half_of_every_global_batch(
    join_ranks, tiny_arrays, loader
):
    """256 images in batches of 24: rank 1 trains rows 12-23 of each batch of
    the one-process order, and 8-15 of the last batch of 16."""
    cfg = TrainConfig(model="mlp", batch_size=24, loader=loader)
    single = list(prepare_run(cfg, arrays=tiny_arrays).loaders.train)
    join_ranks(1, 2)
    run = prepare_run(cfg, arrays=tiny_arrays)
    assert isinstance(run.ddp, DistributedDataParallel)
    mine = list(run.loaders.train)
    assert [len(y) for _x, y in mine] == [12] * 10 + [8]
    for (x_all, y_all), (x, y) in zip(single, mine, strict=True):
        start, stop = shard_rows(len(y_all), 1, 2)
        assert torch.equal(y, y_all[start:stop])
        assert torch.equal(x, x_all[start:stop])


def test_a_resumed_rank_continues_with_its_share_of_the_stored_order(
    join_ranks, tiny_arrays
):
    """A checkpoint saved by one process, resumed on two at batch 3: rank 1
    draws the stored order from the 4th global batch on, its half of each."""
    cfg = TrainConfig(model="mlp", batch_size=24)
    stored = torch.randperm(256, generator=torch.Generator().manual_seed(7))
    single = prepare_run(cfg, arrays=tiny_arrays).loaders.train
    single.pin_order(0, stored)
    expected = [y[slice(*shard_rows(len(y), 1, 2))] for _x, y in single.iter_from(3)]
    join_ranks(1, 2)
    train = prepare_run(cfg, arrays=tiny_arrays).loaders.train
    train.pin_order(0, stored)
    got = [y for _x, y in train.iter_from(3)]
    assert len(got) == len(expected) == 8
    for mine, theirs in zip(got, expected, strict=True):
        assert torch.equal(mine, theirs)


def test_the_feature_cache_is_off_on_several_processes_and_says_why(
    join_ranks, tiny_arrays
):
    """A frozen backbone would make the cache apply (``test_feature_cache``),
    but the head alone would train outside DDP, its gradients never averaged."""
    model = build_model("small-cnn", 10, seed=0, input_shape=(1, 28, 28))
    frozen = tuple(all_but_head(model))
    cfg = TrainConfig(model="small-cnn", frozen=frozen, batch_size=24)
    join_ranks(0, 2)
    for asked, status in [
        (
            "on",
            "feature cache: off: several processes train (asked for on; "
            "the full model trains)",
        ),
        ("auto", "feature cache: off: several processes train"),
    ]:
        run = prepare_run(cfg.replace(feature_cache=asked), arrays=tiny_arrays)
        feed = FeatureFeed.start(run)
        assert not feed.active
        assert feed.status == status
        assert run.notices.count(status) == 1
        # small-cnn has BatchNorm: said once that its statistics stay per process.
        assert run.notices.count(BATCHNORM_NOTICE) == 1


def test_each_rank_weighs_its_chunk_so_the_gradient_is_the_batchs_mean(monkeypatch):
    """157 samples in batches of 64: the last one (29) splits 15 + 14."""
    monkeypatch.setenv("WORLD_SIZE", "2")
    train = SimpleNamespace(batch_size=64, num_samples=157)
    run = SimpleNamespace(ddp=object(), loaders=SimpleNamespace(train=train))
    loss = torch.tensor(1.0)
    run.batch_in_epoch = 0
    assert ddp.backward_loss(run, loss, 32).item() == pytest.approx(1.0)
    run.batch_in_epoch = 2
    assert ddp.backward_loss(run, loss, 15).item() == pytest.approx(30 / 29)
    assert ddp.backward_loss(run, loss, 14).item() == pytest.approx(28 / 29)
    run.ddp = None  # one process: the loss as it is
    assert ddp.backward_loss(run, loss, 29) is loss


def test_the_logged_loss_is_the_whole_batchs_mean_over_the_ranks(peer):
    # 15 samples here with a mean loss of 1, 14 on the other rank with 3.
    peer["values"] = [3.0 * 14, 14.0]
    assert ddp.step_loss(torch.tensor(1.0), 15) == pytest.approx(57 / 29)


def test_epoch_sums_add_every_ranks_loss_correct_and_samples(peer):
    peer["values"] = [1.5, 6.0, 14.0]
    sums = SimpleNamespace(
        loss_sum=torch.tensor(2.5), correct=torch.tensor(7), samples=15
    )
    ddp.reduce_sums(sums)
    assert sums.loss_sum.item() == pytest.approx(4.0)
    assert sums.loss_sum.dtype == torch.float32
    assert (sums.correct.item(), sums.correct.dtype) == (13, torch.long)
    assert sums.samples == 29


def test_a_stop_asked_of_any_rank_stops_them_all(peer):
    peer["values"] = [1.0]  # the other rank got the Ctrl+C
    assert ddp.stop_agreed(False) is True
    peer["values"] = [0.0]
    assert ddp.stop_agreed(False) is False
    assert ddp.stop_agreed(True) is True


def test_each_rank_resumes_its_own_random_numbers(monkeypatch):
    """A checkpoint keeps every rank's RNG; rank r takes the r-th, and only
    when as many processes continue as saved it."""
    _as_rank(monkeypatch, 1, 2)
    with torch.random.fork_rng():
        states = []
        for seed in (1, 2):
            torch.manual_seed(seed)
            states.append({"torch": torch.get_rng_state()})
        torch.manual_seed(0)
        before = torch.get_rng_state()
        assert ddp.restore_rank_rng([*states, states[0]]) is False  # saved by 3
        assert ddp.restore_rank_rng(None) is False  # an older checkpoint
        assert torch.equal(torch.get_rng_state(), before)
        assert ddp.restore_rank_rng(states) is True
        assert torch.equal(torch.get_rng_state(), states[1]["torch"])
        _as_rank(monkeypatch, 0, 1)
        torch.manual_seed(0)
        assert ddp.restore_rank_rng(states[:1]) is False  # one process: its own RNG
        assert torch.equal(torch.get_rng_state(), before)


def test_an_unreadable_process_count_reads_as_one():
    assert saved_world_size({"world_size": 4}) == 4
    for stored in ({}, {"world_size": 0}, {"world_size": -2}, {"world_size": "2"}):
        assert saved_world_size(stored) == 1, stored


# ------------------------------------------------ joining, devices and threads


def test_joining_says_the_backend_the_rank_and_its_threads(monkeypatch):
    joined = []
    monkeypatch.setattr(
        dist, "init_process_group", lambda backend, **kw: joined.append((backend, kw))
    )
    monkeypatch.setattr(torch.cuda, "set_device", lambda device: joined.append(device))
    # A CUDA machine training on its CPU still needs gloo: nccl moves CUDA tensors.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 3)

    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert distributed.start(torch.device("cpu")) is None  # one process: no group
    assert joined == []

    _as_rank(monkeypatch, 1, 2)
    assert distributed.start(torch.device("cpu")) == (
        "2 processes (gloo); this is rank 1, 3 threads per process"
    )
    assert joined == [("gloo", {"timeout": distributed.TIMEOUT})]

    joined.clear()
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    assert distributed.start(torch.device("cuda", 1)) == (
        "2 processes (nccl); this is rank 1, 1 thread per process"
    )
    assert joined == [
        torch.device("cuda", 1),
        ("nccl", {"timeout": distributed.TIMEOUT}),
    ]


def test_each_rank_trains_on_the_gpu_of_its_place_on_its_machine(monkeypatch):
    # The second machine's second process: rank 3 overall, 1 on its machine.
    _as_rank(monkeypatch, 3, 4)
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert distributed.rank_device(torch.device("cuda")) == torch.device("cuda", 1)
    assert distributed.rank_device(torch.device("cpu")) == torch.device("cpu")
    _as_rank(monkeypatch, 0, 1)
    assert distributed.rank_device(torch.device("cuda")) == torch.device("cuda")


@pytest.fixture
def launches(monkeypatch):
    """``train --nproc``'s calls of torchrun, each with the OMP_NUM_THREADS it saw."""
    calls = []
    # Set, then removed: the fixture's undo deletes what relaunch sets.
    monkeypatch.setenv("OMP_NUM_THREADS", "")
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.setattr(cli_distributed, "_quiet_agent_logs", lambda: None)

    def run(launch):
        calls.append((launch, os.environ.get("OMP_NUM_THREADS")))

    monkeypatch.setattr(cli_distributed, "run", run)
    return calls


def _nproc(n):
    return main(["train", "--model", "mlp", "--batch-size", "24", "--nproc", str(n)])


@pytest.mark.parametrize(
    ("cores", "nproc", "threads"), [(8, 2, "4"), (8, 3, "2"), (2, 4, "1")]
)
def test_each_process_gets_an_equal_share_of_the_cores(
    launches, monkeypatch, cores, nproc, threads
):
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert _nproc(nproc) == 0
    ((launch, seen),) = launches
    assert seen == threads
    assert launch.standalone
    assert launch.module
    assert launch.nproc_per_node == str(nproc)
    assert launch.training_script == "workbench"
    assert launch.training_script_args == [
        "train",
        "--model",
        "mlp",
        "--batch-size",
        "24",
    ]


def test_a_thread_count_the_user_set_is_kept(launches, monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert _nproc(2) == 0
    assert [seen for _launch, seen in launches] == ["3"]


def test_nproc_refuses_what_would_fail_in_every_process(launches, monkeypatch, capsys):
    # Said once by the launching command, not once by each process it would start.
    assert main(["train", "--batch-size", "24", "--nproc", "5"]) == 2
    assert capsys.readouterr().err == (
        "ptcore-workbench train: error: batch size 24 does not split evenly over 5 "
        "processes: give a multiple of 5 (--batch-size is the global batch)\n"
    )
    _as_rank(monkeypatch, 0, 2)  # already one of torchrun's processes
    assert _nproc(2) == 2
    assert capsys.readouterr().err == (
        "ptcore-workbench train: error: --nproc starts torchrun: do not give it "
        "under torchrun\n"
    )
    assert launches == []


def _failure(exitcode, own=None):
    return SimpleNamespace(
        exitcode=exitcode,
        error_file_data={"ptcore_workbench": own} if own else {},
        signal_name=lambda: "SIGTERM",
    )


def _failed(failures):
    error = ChildFailedError.__new__(ChildFailedError)
    error.failures = failures
    return error


@pytest.mark.parametrize(
    ("raised", "code", "said"),
    [
        # Rank 0 printed a user error; the other was ended while leaving.
        (_failed({0: _failure(2), 1: _failure(-15)}), 2, ""),
        (_failed({0: _failure(130)}), 130, ""),
        (
            _failed(
                {
                    0: _failure(-15),
                    1: _failure(1, {"error": "ValueError: bad", "time": 10.0}),
                }
            ),
            1,
            "ptcore-workbench train: error: rank 1 failed: ValueError: bad; "
            "the other processes were ended\n",
        ),
        (KeyboardInterrupt(), 130, ""),
        (SignalException("SIGINT", signal.SIGINT), 130, ""),
    ],
    ids=["user-error", "stopped", "a-rank-failed", "ctrl-c", "sigint"],
)
def test_how_the_processes_ended_is_the_commands_exit_code(
    launches, monkeypatch, capsys, raised, code, said
):
    def run(launch):
        raise raised

    monkeypatch.setattr(cli_distributed, "run", run)
    assert _nproc(2) == code
    assert capsys.readouterr().err == said


def test_a_rank_keeps_an_early_ctrl_c_and_stops_before_its_first_step(
    monkeypatch, capsys
):
    """Ranks hold a request during set-up; one process raises it at once."""
    raised = []
    monkeypatch.setattr(interrupts, "release", lambda: raised.append(1))
    monkeypatch.setattr(cli_train, "cmd_train", lambda args: 0)
    _as_rank(monkeypatch, 0, 2)  # rank 0 too: the agent signals every rank
    assert main(["train"]) == 0
    assert raised == []
    monkeypatch.delenv("WORLD_SIZE")
    assert main(["train"]) == 0
    assert raised == [1]

    monkeypatch.undo()
    previous = interrupts.hold()
    try:
        os.kill(os.getpid(), signal.SIGINT)  # arrives while torch still imports
        stops = []
        interrupts.stop_on_first_interrupt(
            SimpleNamespace(request_stop=lambda: stops.append(1))
        )
        assert stops == [1]
    finally:
        interrupts.restore(previous)
    assert "stopping after this batch" in capsys.readouterr().out
