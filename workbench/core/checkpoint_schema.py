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
    """A field of the wrong type; the text names it (no "the checkpoint's")."""


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


def _tensor_map(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in value.items()
    )


def _optimizer(value: object) -> bool:
    if value is None:
        return True
    if not isinstance(value, dict):
        return False
    state, groups = value.get("state"), value.get("param_groups")
    return (
        isinstance(state, dict)
        and all(isinstance(s, dict) for s in state.values())
        and isinstance(groups, list)
        and bool(groups)
        and all(
            isinstance(g, dict) and isinstance(g.get("params"), list) for g in groups
        )
    )


def _data_order(value: object) -> bool:
    if value is None:
        return True
    if not isinstance(value, dict):
        return False
    order = value.get("order")
    return (
        _whole(value.get("epoch"))
        and isinstance(order, torch.Tensor)
        and order.dim() == 1
        and not order.is_floating_point()
    )


def _rng(value: object) -> bool:
    if not isinstance(value, dict):
        return False
    python, numpy = value.get("python"), value.get("numpy")
    return (
        isinstance(python, list | tuple)
        and len(python) == 3
        and isinstance(python[1], list | tuple)
        and isinstance(numpy, dict)
        and isinstance(numpy.get("kind"), str)
        and isinstance(numpy.get("keys"), torch.Tensor)
        and all(_whole(numpy.get(k)) for k in ("pos", "has_gauss"))
        and _number(numpy.get("gauss"))
        and isinstance(value.get("torch"), torch.Tensor)
        and value["torch"].dtype == torch.uint8
    )


def _history(value: object) -> bool:
    if not isinstance(value, dict):
        return False
    steps, epochs = value.get("steps", []), value.get("epochs", [])
    if not isinstance(steps, list) or not isinstance(epochs, list):
        return False
    if not all(isinstance(s, list | tuple) and len(s) == 2 for s in steps):
        return False
    if not all(isinstance(e, dict) for e in epochs):
        return False
    try:
        MetricHistory.from_dict(value)
    except (TypeError, ValueError, KeyError):
        return False
    return True


# Field, what it must be (in words), the check; "optional" fields may be absent.
_Check = tuple[str, str, Callable[[object], bool], bool]
_FIELDS: tuple[_Check, ...] = (
    ("model_state", "names mapped to tensors", _tensor_map, False),
    ("config", "a dict of settings", lambda v: isinstance(v, dict), False),
    ("epoch", "a whole number", _whole, False),
    ("global_step", "a whole number", _whole, False),
    ("batch_in_epoch", "a whole number", _whole, True),
    ("optimizer_state", "an optimizer's state_dict", _optimizer, True),
    (
        "scheduler_state",
        "a dict or None",
        lambda v: v is None or isinstance(v, dict),
        True,
    ),
    (
        "dataset_info",
        "a dict or None",
        lambda v: v is None or isinstance(v, dict),
        True,
    ),
    (
        "frozen",
        "a list of names",
        lambda v: isinstance(v, list | tuple) and all(isinstance(n, str) for n in v),
        True,
    ),
    ("history", "steps and epochs of metrics", _history, True),
    ("data_order", "an epoch and a sample order", _data_order, True),
    ("rng", "random states", _rng, True),
    (
        "rank_rng",
        "a list of random states or None",
        lambda v: (
            v is None or (isinstance(v, list) and all(isinstance(s, dict) for s in v))
        ),
        True,
    ),
)


def check_payload(payload: dict[str, Any]) -> None:
    """Raise :class:`SchemaError` for the first field of the wrong type."""
    for name, wanted, check, optional in _FIELDS:
        if name not in payload:
            if optional:
                continue
            raise SchemaError(f"{name} is missing")
        value = payload[name]
        if not check(value):
            raise SchemaError(f"{name} is {kind_of(value)}, not {wanted}")


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
