"""The types a checkpoint's fields must have, checked once where it is read.

``torch.load(weights_only=True)`` guarantees builtins and tensors, not which
ones: a damaged or hand-edited file may hold a list where a number belongs.
Checking here names the field, instead of an AttributeError deep in a restore.
Fields older versions lack (world_size, rank_rng, dataset_info, data_order,
history, rng, ...) stay optional.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from workbench.core.training_run import MetricHistory

__all__ = ["SchemaError", "check_like", "check_payload", "kind_of"]


class SchemaError(ValueError):
    """A field of the wrong type or value, named (no "the checkpoint's")."""


def kind_of(value: object) -> str:
    """ "a list", "a whole number", "None", ... for messages."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, torch.Tensor):
        return "a tensor"
    names = {int: "a whole number", float: "a number", str: "a string"}
    names |= {list: "a list", tuple: "a list", dict: "a dict"}
    return next(
        (name for kind, name in names.items() if isinstance(value, kind)),
        f"a {type(value).__name__}",
    )


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_MISSING = object()


def _field(value: object, key: str) -> object:
    return value.get(key, _MISSING) if isinstance(value, dict) else _MISSING


def _need(ok: bool, name: str, value: object, wanted: str) -> None:
    if ok:
        return
    if value is _MISSING:
        raise SchemaError(f"{name} is missing")
    negative = isinstance(value, int) and not isinstance(value, bool) and value < 0
    if negative and wanted == "a whole number":  # a count: the type was right
        raise SchemaError(f"{name} must be 0 or more, not {value}")
    raise SchemaError(f"{name} is {kind_of(value)}, not {wanted}")


def _tensor_map(name: str, value: object) -> None:
    _need(isinstance(value, dict), name, value, "names mapped to tensors")
    assert isinstance(value, dict)
    for key, tensor in value.items():
        _need(isinstance(key, str), name, key, "names mapped to tensors")
        _need(isinstance(tensor, torch.Tensor), f"{name}[{key!r}]", tensor, "a tensor")


def _optimizer(name: str, value: object) -> None:
    if value is None:
        return
    _need(isinstance(value, dict), name, value, "an optimizer's state_dict")
    state, groups = _field(value, "state"), _field(value, "param_groups")
    _need(isinstance(state, dict), f"{name}.state", state, "a dict")
    assert isinstance(state, dict)
    for index, entry in state.items():
        _need(isinstance(entry, dict), f"{name}.state[{index!r}]", entry, "a dict")
    wanted = "a list of parameter groups"
    _need(
        isinstance(groups, list) and bool(groups),
        f"{name}.param_groups",
        groups,
        wanted,
    )
    assert isinstance(groups, list)
    for index, group in enumerate(groups):
        where = f"{name}.param_groups[{index}]"
        _need(isinstance(group, dict), where, group, "a dict")
        params = _field(group, "params")
        _need(isinstance(params, list), f"{where}.params", params, "a list")


def _data_order(name: str, value: object) -> None:
    if value is None:
        return
    _need(isinstance(value, dict), name, value, "an epoch and a sample order")
    epoch, order = _field(value, "epoch"), _field(value, "order")
    _need(_whole(epoch), f"{name}.epoch", epoch, "a whole number")
    ok = (
        isinstance(order, torch.Tensor)
        and order.dim() == 1
        and not order.is_floating_point()
    )
    _need(ok, f"{name}.order", order, "a list of sample numbers (a 1-D tensor)")


def _rng(name: str, value: object) -> None:
    _need(isinstance(value, dict), name, value, "random states")
    python = _field(value, "python")
    ok = (
        isinstance(python, list | tuple)
        and len(python) == 3
        and isinstance(python[1], list | tuple)
    )
    _need(ok, f"{name}.python", python, "Python's random state")
    numpy = _field(value, "numpy")
    _need(isinstance(numpy, dict), f"{name}.numpy", numpy, "NumPy's random state")
    kind, keys = _field(numpy, "kind"), _field(numpy, "keys")
    _need(isinstance(kind, str), f"{name}.numpy.kind", kind, "a string")
    _need(isinstance(keys, torch.Tensor), f"{name}.numpy.keys", keys, "a tensor")
    for key in ("pos", "has_gauss"):
        count = _field(numpy, key)
        _need(_whole(count), f"{name}.numpy.{key}", count, "a whole number")
    gauss = _field(numpy, "gauss")
    _need(_number(gauss), f"{name}.numpy.gauss", gauss, "a number")
    state = _field(value, "torch")
    ok = isinstance(state, torch.Tensor) and state.dtype == torch.uint8
    _need(ok, f"{name}.torch", state, "torch's random state (a uint8 tensor)")


def _history(name: str, value: object) -> None:
    _need(isinstance(value, dict), name, value, "steps and epochs of metrics")
    assert isinstance(value, dict)
    steps, epochs = value.get("steps", []), value.get("epochs", [])
    pairs = isinstance(steps, list) and all(
        isinstance(s, list | tuple) and len(s) == 2 for s in steps
    )
    _need(pairs, f"{name}.steps", steps, "a list of (step, loss) pairs")
    speeds = value.get("speeds", [])
    pairs = isinstance(speeds, list) and all(
        isinstance(s, list | tuple) and len(s) == 2 for s in speeds
    )
    _need(pairs, f"{name}.speeds", speeds, "a list of (step, images/s) pairs")
    records = isinstance(epochs, list) and all(isinstance(e, dict) for e in epochs)
    _need(records, f"{name}.epochs", epochs, "a list of epoch metrics")
    try:
        MetricHistory.from_dict(value)
    except (TypeError, ValueError, KeyError) as exc:
        raise SchemaError(f"{name} is not readable ({exc})") from exc


_Check = Callable[[str, object], None]


def _simple(wanted: str, check: Callable[[object], bool]) -> _Check:
    return lambda name, value: _need(check(value), name, value, wanted)


_DICT_OR_NONE = _simple("a dict or None", lambda v: v is None or isinstance(v, dict))
_NAMES = _simple(
    "a list of names",
    lambda v: isinstance(v, list | tuple) and all(isinstance(n, str) for n in v),
)
_STATES = _simple(
    "a list of random states or None",
    lambda v: (
        v is None or (isinstance(v, list) and all(isinstance(s, dict) for s in v))
    ),
)
# Field, its check, and whether it may be absent (older versions lack it).
_FIELDS: tuple[tuple[str, _Check, bool], ...] = (
    ("model_state", _tensor_map, False),
    ("config", _simple("a dict of settings", lambda v: isinstance(v, dict)), False),
    ("epoch", _simple("a whole number", _whole), False),
    ("global_step", _simple("a whole number", _whole), False),
    ("batch_in_epoch", _simple("a whole number", _whole), True),
    ("optimizer_state", _optimizer, True),
    ("scheduler_state", _DICT_OR_NONE, True),
    ("dataset_info", _DICT_OR_NONE, True),
    ("frozen", _NAMES, True),
    ("history", _history, True),
    ("data_order", _data_order, True),
    ("rng", _rng, True),
    ("rank_rng", _STATES, True),
)


def check_payload(payload: dict[str, Any]) -> None:
    """Raise :class:`SchemaError` for the first field of the wrong type."""
    for name, check, optional in _FIELDS:
        if name in payload or not optional:
            check(name, payload.get(name, _MISSING))


def check_like(saved: dict[str, Any], fresh: dict[str, Any], where: str) -> None:
    """Each value ``saved`` shares with ``fresh`` is of the same kind.

    ``fresh`` is what this program builds (a new scheduler's state_dict): a
    saved value of another kind would only fail later, mid-training.
    """
    for key, expected in fresh.items():
        if key not in saved or expected is None:
            continue
        value = saved[key]
        same = (
            (_number(expected) and _number(value))
            or (isinstance(expected, list | tuple) and isinstance(value, list | tuple))
            or type(value) is type(expected)
        )
        if not same:
            raise SchemaError(
                f"{where}.{key} is {kind_of(value)}, not {kind_of(expected)}"
            )
