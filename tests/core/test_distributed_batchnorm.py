"""BatchNorm on several processes: ``--sync-bn``, its notices, and the accuracy.

No GPU here: the conversion to SyncBatchNorm is tested as a decision on a CUDA
device object (nothing runs forward), and the two-process run on the CPU shows
the one notice and reaches one process's accuracy with per-process statistics.
"""

from __future__ import annotations

import json
import os
import sys

import pytest
import torch
from torch import nn

from tests import prefetch
from workbench.cli.commands import build_parser
from workbench.cli.train_flags import config_from_args
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.distributed.sync_bn import (
    BATCHNORM_NOTICE,
    SYNC_BN_CPU_NOTICE,
    batchnorm_setup,
)
from workbench.core.models.builtins import build_model
from workbench.core.train.freezing import set_frozen, train_mode, trainable_parameters

CPU, CUDA = torch.device("cpu"), torch.device("cuda", 0)


def _small_cnn() -> nn.Module:
    return build_model("small-cnn", 10, seed=0, input_shape=(1, 28, 28))


def _batchnorms(model: nn.Module) -> list[type]:
    return [type(m) for m in model.modules() if "BatchNorm" in type(m).__name__]


def test_sync_bn_converts_the_batchnorm_layers_on_cuda_in_place():
    model = _small_cnn()
    set_frozen(model, ["block1.*"])  # a frozen BatchNorm must stay in eval
    keys, params = list(model.state_dict()), list(model.parameters())
    wrapped, notice = batchnorm_setup(model, CUDA, sync_bn=True, world=2)
    assert notice is None
    # The same module: run.model, the optimizer's parameters and the
    # checkpoint's keys all stay valid.
    assert wrapped is model
    assert set(_batchnorms(model)) == {nn.SyncBatchNorm}
    assert list(model.state_dict()) == keys
    assert all(a is b for a, b in zip(model.parameters(), params, strict=True))
    train_mode(model)
    assert not model.block1[2].training
    assert model.block2[1].training
    assert trainable_parameters(model)[0] is model.block2[0].weight


@pytest.mark.parametrize(
    ("device", "sync_bn", "world", "notice"),
    [
        (CUDA, False, 2, BATCHNORM_NOTICE),
        (CPU, False, 2, BATCHNORM_NOTICE),
        (CPU, True, 2, SYNC_BN_CPU_NOTICE),  # SyncBatchNorm is CUDA-only
        (CUDA, True, 1, None),  # one process: nothing to share, nothing said
        (CPU, False, 1, None),
    ],
)
def test_where_batchnorm_stays_per_process_one_notice_says_so(
    device, sync_bn, world, notice
):
    model = _small_cnn()
    wrapped, said = batchnorm_setup(model, device, sync_bn=sync_bn, world=world)
    assert wrapped is model
    assert set(_batchnorms(model)) == {nn.BatchNorm2d}
    assert said == notice


def test_a_model_without_batchnorm_is_left_alone_in_silence():
    model = nn.Sequential(nn.Flatten(), nn.Linear(4, 2))
    assert batchnorm_setup(model, CUDA, sync_bn=True, world=2) == (model, None)


def test_sync_bn_is_a_config_field_and_a_train_flag():
    assert TrainConfig().sync_bn is False
    cfg = TrainConfig(sync_bn=True)
    assert TrainConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ConfigError, match="sync_bn: must be true or false"):
        TrainConfig(sync_bn="yes")
    parser = build_parser()
    for argv, value in ((["train"], False), (["train", "--sync-bn"], True)):
        assert config_from_args(parser.parse_args(argv), TrainConfig()).sync_bn is value


def _train(tmp, name, *launch, processes=1):
    """``train`` of the default model, its metrics in ``tmp``."""
    # One thread each: two processes on this machine's two cores.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PTCORE_RUNS_DIR": str(tmp / name)}
    # The default model (small-cnn, BatchNorm) at its default batch (256).
    flags = ["--quiet", "--dataset", "digits", "--epochs", "5", "--device", "cpu"]
    command = [sys.executable, "-m", "workbench", "train", *flags, *launch]
    command += ["--metrics-json", str(tmp / f"{name}.json")]
    return prefetch.Command(command, env, processes)


@prefetch.plan("trained")
def trained_plan(tmp):
    """One process, and two with ``--sync-bn`` (which the CPU cannot do)."""
    done = yield {
        "one": _train(tmp, "one"),
        "two": _train(tmp, "two", "--nproc", "2", "--sync-bn", processes=3),
    }
    prefetch.succeeded(done)
    return {
        name: (json.loads((tmp / f"{name}.json").read_text()), result.stdout)
        for name, result in done.items()
    }


@pytest.fixture(scope="module")
def trained(prefetched):
    return prefetched.result(trained_plan)


@pytest.mark.slow
def test_two_processes_with_per_process_batchnorm_reach_one_process_accuracy(
    trained,
):
    assert TrainConfig().model == "small-cnn"
    (one, _), (two, stdout) = trained["one"], trained["two"]
    one, two = (doc["final"]["val_accuracy"] for doc in (one, two))
    # On the CPU --sync-bn changes nothing but the notice: per-process statistics.
    assert stdout.count(SYNC_BN_CPU_NOTICE) == 1
    assert BATCHNORM_NOTICE not in stdout
    assert one > 0.9
    assert abs(one - two) <= 0.005, (one, two)  # half a point
