"""Seeded damage for checkpoints: every kind of bad file issue 17 names.

Each :class:`Variant` writes one damaged copy of a real checkpoint. Payload
damage is saved with ``torch.save`` of tensors and builtins only, so every
variant stays loadable with ``weights_only=True`` up to its damage.
"""

from __future__ import annotations

import copy
import io
import random
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from tests.fuzz_values import WRONG as JSON_WRONG

SEED = 17

# One value of each wrong type; a field never gets the type it already has.
WRONG: dict[str, Any] = {
    **{kind: value for kind, value in JSON_WRONG.items() if kind != "bool"},
    "tensor": torch.zeros(2),
}

# Nested fields (paths into the payload) that get every wrong type too.
NESTED = (
    ("data_order", "epoch"),
    ("data_order", "order"),
    ("rng", "python"),
    ("rng", "numpy"),
    ("rng", "torch"),
    ("rng", "numpy", "keys"),
    ("rng", "numpy", "pos"),
    ("history", "steps"),
    ("history", "epochs"),
    ("scheduler_state", "total_steps"),
    ("scheduler_state", "last_epoch"),
    ("scheduler_state", "base_lrs"),
    ("optimizer_state", "state"),
    ("optimizer_state", "param_groups"),
    ("dataset_info", "class_names"),
    ("dataset_info", "image_shape"),
    ("dataset_info", "mean"),
)


@dataclass(frozen=True)
class Variant:
    """One damaged file: ``kind`` is its class of damage."""

    name: str
    kind: str
    write: Callable[[Path], None]


def _kind_of(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return "tensor"
    if isinstance(value, list | tuple):
        return "list"
    return {bool: "int", type(None): "None"}.get(type(value), type(value).__name__)


def _get(payload: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        payload = payload[key]
    return payload


def _edited(
    original: dict[str, Any], path: tuple[Any, ...], value: Any, *, drop: bool = False
) -> Callable[[Path], None]:
    def write(target: Path) -> None:
        payload = copy.deepcopy(original)
        parent = _get(payload, path[:-1])
        if drop:
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(value)
        torch.save(payload, target)

    return write


def _raw(data: bytes) -> Callable[[Path], None]:
    return lambda target: target.write_bytes(data)


def _without_member(data: bytes, member: str) -> bytes:
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst,
    ):
        for info in src.infolist():
            if info.filename != member:
                dst.writestr(info, src.read(info.filename))
    return out.getvalue()


def variants(path: Path) -> Iterator[Variant]:
    """Every damaged variant of the checkpoint at ``path``, in a fixed order."""
    rng = random.Random(SEED)
    data = path.read_bytes()
    payload = torch.load(path, map_location="cpu", weights_only=True)
    for _ in range(30):
        at = rng.randrange(len(data))
        flipped = bytearray(data)
        flipped[at] ^= 1 << rng.randrange(8)
        yield Variant(f"flip@{at}", "bytes flipped", _raw(bytes(flipped)))
    for _ in range(20):
        size = rng.randrange(len(data))
        yield Variant(f"truncate@{size}", "truncated", _raw(data[:size]))
    for member in zipfile.ZipFile(io.BytesIO(data)).namelist():
        yield Variant(
            f"no-member:{member}",
            "zip entry removed",
            _raw(_without_member(data, member)),
        )
    yield from _tensor_damage(payload)
    for key in payload:
        yield Variant(
            f"missing:{key}", "key missing", _edited(payload, (key,), None, drop=True)
        )
    for key in ("model_state", "config", "dataset_info", "history", "data_order"):
        for sub in list(payload[key] or {})[:3]:
            yield Variant(
                f"missing:{key}.{sub}",
                "key missing",
                _edited(payload, (key, sub), None, drop=True),
            )
    fields = [(key,) for key in payload] + [p for p in NESTED if _has(payload, p)]
    fields += [("model_state", key) for key in list(payload["model_state"])[:2]]
    for field in fields:
        yield from _wrong_types(payload, field, rng, 3)
    for key in payload["config"]:
        yield from _wrong_types(payload, ("config", key), rng, 1)


def _wrong_types(
    payload: dict[str, Any], field: tuple[Any, ...], rng: random.Random, count: int
) -> Iterator[Variant]:
    """``count`` seeded wrong types for ``field`` (every kind but its own)."""
    have = _kind_of(_get(payload, field))
    kinds = [kind for kind in WRONG if kind != have]
    for kind in rng.sample(kinds, count):
        yield Variant(
            f"{'.'.join(map(str, field))}={kind}",
            "wrong type",
            _edited(payload, field, WRONG[kind]),
        )


def _has(payload: Any, path: tuple[Any, ...]) -> bool:
    try:
        _get(payload, path)
    except (KeyError, TypeError, IndexError):
        return False
    return True


def _tensor_damage(payload: dict[str, Any]) -> Iterator[Variant]:
    """Tensors of the wrong shape or dtype in the model and optimizer states."""
    for name, tensor in payload["model_state"].items():
        path = ("model_state", name)
        yield Variant(
            f"shape:{name}", "wrong shape", _edited(payload, path, tensor[..., :1])
        )
        yield Variant(
            f"dtype:{name}",
            "wrong dtype",
            _edited(payload, path, tensor.to(torch.int64)),
        )
    for index, state in payload["optimizer_state"]["state"].items():
        for key, tensor in state.items():
            path = ("optimizer_state", "state", index, key)
            if tensor.dim() > 0:
                yield Variant(
                    f"shape:optimizer.{index}.{key}",
                    "wrong shape",
                    _edited(payload, path, tensor.reshape(-1)[:3].clone()),
                )
            yield Variant(
                f"dtype:optimizer.{index}.{key}",
                "wrong dtype",
                _edited(payload, path, tensor.to(torch.int64)),
            )
