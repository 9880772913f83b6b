"""Every value a checkpoint's schema checks: refused with the field and what is wrong.

Issue 33: a negative epoch or step, a float sample order, a number of the wrong
kind or a value of the wrong type must not load (then open, resume or be
inspected); the message names the field and says what it must be. The bulk
goes through :func:`migrate` (what every reader calls, no file); a few through
the file readers and the command line.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch

from workbench.cli.commands import main
from workbench.core.checkpoints.io import (
    CheckpointError,
    checkpoint_dict,
    load_checkpoint,
    migrate,
    write_checkpoint,
)
from workbench.core.config import TrainConfig
from workbench.core.session import Session
from workbench.core.train.engine import fit, prepare_run

_DROP = object()


@pytest.fixture(scope="module")
def payload(tiny_arrays) -> dict[str, Any]:
    cfg = TrainConfig(model="mlp", epochs=1, max_steps=2, batch_size=64, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)
    fit(run)
    return checkpoint_dict(run)


def _with(payload: dict[str, Any], field: str, value: object) -> dict[str, Any]:
    """A copy of ``payload`` whose dotted ``field`` is ``value`` (or dropped)."""
    changed = copy.copy(payload)
    *parents, last = field.split(".")
    holder = changed
    for key in parents:
        holder[key] = copy.copy(holder[key])
        holder = holder[key]
    if value is _DROP:
        del holder[last]
    else:
        holder[last] = value
    return changed


def _refused(payload: dict[str, Any]) -> str:
    """What the checkpoint's check says, without "run.pt cannot be used: ..."."""
    with pytest.raises(CheckpointError) as refused:
        migrate(payload, "run.pt")
    text = str(refused.value)
    prefix = "run.pt cannot be used: the checkpoint's "
    assert text.startswith(prefix)
    return text.removeprefix(prefix)


# Each count the schema checks: epochs, steps, positions in a random state.
COUNTS = (
    "epoch",
    "global_step",
    "batch_in_epoch",
    "data_order.epoch",
    "rng.numpy.pos",
    "rng.numpy.has_gauss",
)


@pytest.mark.parametrize("field", COUNTS)
@pytest.mark.parametrize(
    ("value", "wrong"),
    [
        (-3, "must be 0 or more, not -3"),
        (-1, "must be 0 or more, not -1"),
        (2.0, "is a number, not a whole number"),
        (-0.5, "is a number, not a whole number"),
        (True, "is true/false, not a whole number"),
        ("4", "is a string, not a whole number"),
        (None, "is None, not a whole number"),
        (torch.tensor(4), "is a tensor, not a whole number"),
    ],
    ids=[
        "minus-3",
        "minus-1",
        "float",
        "negative-float",
        "bool",
        "text",
        "none",
        "tensor",
    ],
)
def test_a_count_that_is_negative_or_not_whole_is_refused(payload, field, value, wrong):
    assert _refused(_with(payload, field, value)) == f"{field} {wrong}"


@pytest.mark.parametrize("field", COUNTS)
def test_zero_is_a_count_like_any_other(payload, field):
    loaded: Any = migrate(_with(payload, field, 0), "run.pt")
    for key in field.split("."):
        loaded = loaded[key]
    assert loaded == 0


@pytest.mark.parametrize(
    "field",
    ["epoch", "global_step", "data_order.epoch", "data_order.order", "rng.numpy.pos"],
)
def test_a_missing_value_is_named(payload, field):
    assert _refused(_with(payload, field, _DROP)) == f"{field} is missing"


_ORDER = "not a list of sample numbers (a 1-D tensor)"


_WRONG = [
    # The sample order the interrupted epoch resumes with.
    ("data_order.order", torch.arange(6.0), f"is a tensor, {_ORDER}"),
    ("data_order.order", torch.arange(6.0).double(), f"is a tensor, {_ORDER}"),
    ("data_order.order", torch.arange(6).reshape(2, 3), f"is a tensor, {_ORDER}"),
    ("data_order.order", torch.tensor(3), f"is a tensor, {_ORDER}"),
    ("data_order.order", [0, 1, 2], f"is a list, {_ORDER}"),
    ("data_order", 3, "is a whole number, not an epoch and a sample order"),
    # The random states a resume restores.
    ("rng", None, "is None, not random states"),
    ("rng.python", (3, 5, None), "is a list, not Python's random state"),
    ("rng.python", [3, [1, 2]], "is a list, not Python's random state"),
    ("rng.numpy", "MT19937", "is a string, not NumPy's random state"),
    ("rng.numpy.kind", 7, "is a whole number, not a string"),
    ("rng.numpy.keys", [1, 2], "is a list, not a tensor"),
    ("rng.numpy.gauss", "0.5", "is a string, not a number"),
    ("rng.numpy.gauss", False, "is true/false, not a number"),
    (
        "rng.torch",
        torch.zeros(8),
        "is a tensor, not torch's random state (a uint8 tensor)",
    ),
    ("rng.torch", [0] * 8, "is a list, not torch's random state (a uint8 tensor)"),
    ("rank_rng", [1, 2], "is a list, not a list of random states or None"),
    # What the model, optimizer and scheduler restore from.
    ("model_state", [torch.zeros(2)], "is a list, not names mapped to tensors"),
    ("config", ["mlp"], "is a list, not a dict of settings"),
    ("optimizer_state", "adam", "is a string, not an optimizer's state_dict"),
    ("optimizer_state.state", [], "is a list, not a dict"),
    (
        "optimizer_state.param_groups",
        [],
        "is a list, not a list of parameter groups",
    ),
    (
        "optimizer_state.param_groups",
        {},
        "is a dict, not a list of parameter groups",
    ),
    ("scheduler_state", [0.1], "is a list, not a dict or None"),
    ("dataset_info", "digits", "is a string, not a dict or None"),
    ("frozen", ["head.weight", 3], "is a list, not a list of names"),
    ("frozen", "head.weight", "is a string, not a list of names"),
    # The curves the window draws again.
    ("history", [], "is a list, not steps and epochs of metrics"),
    ("history.steps", [[1]], "is a list, not a list of (step, loss) pairs"),
    ("history.epochs", [3], "is a list, not a list of epoch metrics"),
    ("history.speeds", [[1]], "is a list, not a list of (step, images/s) pairs"),
]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    _WRONG,
    ids=[f"{field}-{n}" for n, (field, _, _) in enumerate(_WRONG)],
)
def test_a_value_of_the_wrong_kind_is_refused_with_its_field(
    payload, field, value, message
):
    assert _refused(_with(payload, field, value)) == f"{field} {message}"


def test_the_fields_inside_a_value_are_named_too(payload):
    state = {**payload["model_state"], "extra": [1.0]}
    assert _refused(_with(payload, "model_state", state)) == (
        "model_state['extra'] is a list, not a tensor"
    )
    state = {**payload["model_state"], 3: torch.zeros(1)}
    assert _refused(_with(payload, "model_state", state)) == (
        "model_state is a whole number, not names mapped to tensors"
    )
    groups = [{**payload["optimizer_state"]["param_groups"][0], "params": 0}]
    assert _refused(_with(payload, "optimizer_state.param_groups", groups)) == (
        "optimizer_state.param_groups[0].params is a whole number, not a list"
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("optimizer_state", None),
        ("scheduler_state", None),
        ("dataset_info", None),
        ("data_order", None),
        ("rank_rng", None),
        ("data_order.order", torch.arange(6, dtype=torch.int64)),
        ("rng.numpy.gauss", 0),
        ("batch_in_epoch", _DROP),
        ("history", _DROP),
        ("rng", _DROP),
    ],
)
def test_what_a_checkpoint_may_hold_loads(payload, field, value):
    assert isinstance(migrate(_with(payload, field, value), "run.pt"), dict)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("global_step", -3, "global_step must be 0 or more, not -3"),
        ("epoch", -1, "epoch must be 0 or more, not -1"),
        ("global_step", 2.5, "global_step is a number, not a whole number"),
        (
            "data_order.order",
            torch.arange(6.0),
            "data_order.order is a tensor, not a list of sample numbers (a 1-D tensor)",
        ),
    ],
    ids=["negative-step", "negative-epoch", "float-step", "float-order"],
)
def test_such_a_file_is_not_loaded_opened_resumed_or_inspected(
    tmp_path, capsys, payload, field, value, message
):
    path = write_checkpoint(tmp_path / "run.pt", _with(payload, field, value))
    said = f"{path} cannot be used: the checkpoint's {message}"
    with pytest.raises(CheckpointError) as loaded:
        load_checkpoint(path)
    assert str(loaded.value) == said
    with pytest.raises(CheckpointError) as opened:
        Session(origin="test").open(path, evaluate=False)
    assert str(opened.value) == said
    for command in (["inspect", str(path)], ["train", "--resume", str(path)]):
        capsys.readouterr()
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err == f"ptcore-workbench {command[0]}: error: {said}\n"
    good = write_checkpoint(tmp_path / "good.pt", payload)
    assert load_checkpoint(good)["global_step"] == payload["global_step"]
