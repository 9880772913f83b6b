"""A checkpoint field of the wrong type is one message naming the field."""

from __future__ import annotations

import pytest
import torch

from workbench.core.checkpoints.io import (
    CheckpointError,
    checkpoint_dict,
    load_checkpoint,
    restore_run,
    write_checkpoint,
)
from workbench.core.config import TrainConfig
from workbench.core.train.engine import fit, prepare_run


@pytest.fixture(scope="module")
def payload(tiny_arrays):
    cfg = TrainConfig(model="mlp", epochs=1, max_steps=2, batch_size=64, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)
    fit(run)
    return checkpoint_dict(run)


def _saved(tmp_path, payload, **fields):
    return write_checkpoint(tmp_path / "run.pt", {**payload, **fields})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"global_step": [1, 2]}, "global_step is a list, not a whole number"),
        ({"epoch": "x"}, "epoch is a string, not a whole number"),
        ({"config": None}, "config is None, not a dict of settings"),
        ({"model_state": torch.zeros(2)}, "model_state is a tensor, not names"),
        ({"history": {"steps": 3}}, "history.steps is a whole number, not a list"),
        ({"rng": {"python": None}}, "rng.python is None, not Python's random state"),
        ({"data_order": {"epoch": 0}}, "data_order.order is missing"),
        ({"frozen": 0.5}, "frozen is a number, not a list of names"),
    ],
)
def test_a_field_of_the_wrong_type_is_named(tmp_path, payload, fields, message):
    path = _saved(tmp_path, payload, **fields)
    with pytest.raises(CheckpointError, match="cannot be used") as caught:
        load_checkpoint(path)
    assert f"the checkpoint's {message}" in str(caught.value)


def test_optional_fields_of_older_checkpoints_may_be_absent(tmp_path, payload):
    old = {k: v for k, v in payload.items() if k not in ("rng", "history")}
    for key in ("world_size", "rank_rng", "dataset_info", "data_order"):
        old.pop(key)
    old["format_version"] = 1
    loaded = load_checkpoint(write_checkpoint(tmp_path / "old.pt", old))
    assert loaded["data_order"] is None


def test_an_optimizer_state_of_another_shape_is_refused(tiny_arrays, payload):
    optimizer = {**payload["optimizer_state"]}
    state = {k: dict(v) for k, v in optimizer["state"].items()}
    state[0]["exp_avg"] = state[0]["exp_avg"].reshape(-1)[:3].clone()
    optimizer["state"] = state
    damaged = {**payload, "optimizer_state": optimizer}
    with pytest.raises(CheckpointError, match="its exp_avg has shape \\(3,\\)"):
        restore_run(damaged, arrays=tiny_arrays)


def test_a_scheduler_value_of_another_kind_is_refused(tiny_arrays, payload):
    scheduler = {**payload["scheduler_state"], "total_steps": torch.zeros(2)}
    damaged = {**payload, "scheduler_state": scheduler}
    with pytest.raises(
        CheckpointError, match=r"scheduler_state\.total_steps is a tensor, not a whole"
    ):
        restore_run(damaged, arrays=tiny_arrays)


def test_an_optimizer_setting_of_another_kind_is_refused(tiny_arrays, payload):
    optimizer = {**payload["optimizer_state"]}
    optimizer["param_groups"] = [{**optimizer["param_groups"][0], "lr": "fast"}]
    damaged = {**payload, "optimizer_state": optimizer}
    with pytest.raises(CheckpointError, match=r"param_groups\[0\].lr is a string"):
        restore_run(damaged, arrays=tiny_arrays)
