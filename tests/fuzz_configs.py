"""Seeded damage for run configs (JSON and TOML): every kind issue 17 names.

Each :class:`Variant` is the bytes of one damaged config file and the suffix
it is saved under; ``kind`` is its class of damage. Field damage starts from a
valid config, so each variant is wrong in one way only.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.fuzz_values import WRONG
from workbench.core.config import TrainConfig

SEED = 17

# Numbers no field can hold (JSON text, so 1e400 stays as written).
HUGE = ("1e400", "-1e400", str(10**100), str(-(10**100)), "-1", "-0.5")
NOT_FINITE = ("NaN", "Infinity", "-Infinity")


@dataclass(frozen=True)
class Variant:
    """One damaged config: its bytes, the suffix it is saved under, its kind."""

    name: str
    kind: str
    suffix: str
    data: bytes


def base_config() -> dict[str, Any]:
    """A valid config's fields (the starting point of every field edit)."""
    return TrainConfig(model="mlp", max_steps=3).to_dict()


def _kind_of(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "list"
    return {type(None): "None"}.get(type(value), type(value).__name__)


def _json(data: Any) -> bytes:
    return (json.dumps(data, indent=1) + "\n").encode()


def _toml_value(value: Any) -> str:
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return (
            "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
        )
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value)


def _toml(data: dict[str, Any]) -> bytes:
    return "".join(f"{k} = {_toml_value(v)}\n" for k, v in data.items()).encode()


def _with_raw(data: dict[str, Any], key: str, raw: str) -> bytes:
    """JSON of ``data`` with ``key``'s value written as ``raw`` text."""
    text = json.dumps({**data, key: "__RAW__"}, indent=1)
    return (text.replace('"__RAW__"', raw) + "\n").encode()


def variants() -> Iterator[Variant]:
    """Every damaged config, in a fixed order."""
    rng = random.Random(SEED)
    good = base_config()
    fields = [k for k in good if k != "schema_version"]
    for key in [*fields, "schema_version"]:
        have = _kind_of(good[key])
        for kind, value in WRONG.items():
            if kind == have or (have == "NoneType" and kind == "None"):
                continue
            suffix = rng.choice((".json", ".toml"))
            edited = {**good, key: value}
            if suffix == ".toml" and value is None:
                suffix = ".json"  # TOML has no null ("" means unset)
            data = _json(edited) if suffix == ".json" else _toml(edited)
            yield Variant(f"{key}={kind}{suffix}", "wrong type", suffix, data)
    for key in rng.sample(fields, 8):
        missing = {k: v for k, v in good.items() if k != key}
        yield Variant(f"missing:{key}", "field missing", ".json", _json(missing))
    yield Variant("empty-dict", "field missing", ".json", b"{}\n")
    for name, value in (("bogus", 1), ("lr_typo", 0.1), ("nested", {"x": [1]})):
        yield Variant(
            f"unknown:{name}", "unknown field", ".json", _json({**good, name: value})
        )
    yield Variant(
        "unknown-toml", "unknown field", ".toml", _toml({**good, "colour": "blue"})
    )
    number_fields = [k for k in fields if _kind_of(good[k]) in ("int", "float")]
    number_fields += ["epochs", "image_size", "max_steps"]
    for key in number_fields:
        for raw in HUGE:
            yield Variant(
                f"{key}={raw}", "huge number", ".json", _with_raw(good, key, raw)
            )
        for raw in NOT_FINITE:
            yield Variant(
                f"{key}={raw}", "not finite", ".json", _with_raw(good, key, raw)
            )
    yield Variant(
        "lr=inf.toml",
        "not finite",
        ".toml",
        _toml(good).replace(b"lr = 0.006", b"lr = inf"),
    )
    yield Variant(
        "lr=nan.toml",
        "not finite",
        ".toml",
        _toml(good).replace(b"lr = 0.006", b"lr = nan"),
    )
    yield from _encodings(good)
    yield from _syntax(good, rng)


def _encodings(good: dict[str, Any]) -> Iterator[Variant]:
    text = json.dumps({**good, "model": "mlp"}, indent=1)
    for suffix in (".json", ".toml"):
        body = text if suffix == ".json" else _toml(good).decode()
        yield Variant(
            f"utf16-bom{suffix}", "wrong encoding", suffix, body.encode("utf-16")
        )
        yield Variant(
            f"utf8-bom{suffix}", "wrong encoding", suffix, body.encode("utf-8-sig")
        )
        latin = body.replace('"mlp"', '"mlp\u00e9"').encode("latin-1")
        yield Variant(f"latin-1{suffix}", "wrong encoding", suffix, latin)
        yield Variant(
            f"invalid-utf8{suffix}",
            "wrong encoding",
            suffix,
            body.encode()[:20] + b"\xff\xfe\x80" + body.encode()[20:],
        )
        yield Variant(f"binary{suffix}", "wrong encoding", suffix, bytes(range(256)))


def _syntax(good: dict[str, Any], rng: random.Random) -> Iterator[Variant]:
    json_bytes, toml_bytes = _json(good), _toml(good)
    # TOML cut at a line's end (or inside a number) is a valid, shorter file:
    # it is cut just after a string's opening quote, which no TOML leaves open.
    opening = [i + 1 for i, byte in enumerate(toml_bytes) if byte == ord('"')][::2]
    for suffix, data in ((".json", json_bytes), (".toml", toml_bytes)):
        for _ in range(6):
            size = rng.randrange(1, len(data) - 1)
            if suffix == ".toml":
                size = opening[size % len(opening)]
            yield Variant(f"truncate@{size}{suffix}", "truncated", suffix, data[:size])
        yield Variant(f"empty{suffix}", "empty file", suffix, b"")
        yield Variant(f"blank{suffix}", "empty file", suffix, b"  \n\n")
    for top in ([good], [], "digits", 3, None, True):
        yield Variant(f"top-level:{_kind_of(top)}", "not a table", ".json", _json(top))
    yield Variant(
        "deep-json", "deeply nested", ".json", b"[" * 100_000 + b"]" * 100_000
    )
    yield Variant(
        "deep-json-value",
        "deeply nested",
        ".json",
        _with_raw(good, "model", "[" * 50_000 + "]" * 50_000),
    )
    yield Variant(
        "deep-toml", "deeply nested", ".toml", b"a = " + b"[" * 50_000 + b"]" * 50_000
    )
    broken_toml = (
        b"model = mlp\n",  # a bare word
        b"lr = 0.006\nlr = 0.1\n",  # a key twice
        b"[model\nname = 1\n",  # an unclosed table header
        b"max_steps = 3 3\n",
        b'dataset = "digits\n',
        b"= 3\n",
    )
    for index, data in enumerate(broken_toml):
        yield Variant(f"toml-syntax-{index}", "wrong syntax", ".toml", data)
    yield Variant("json-as-toml", "wrong syntax", ".toml", json_bytes)
    yield Variant("toml-as-json", "wrong syntax", ".json", toml_bytes)
    yield Variant("json-trailing-comma", "wrong syntax", ".json", b'{"lr": 0.1,}')
    nested = _toml({k: v for k, v in good.items() if k != "model"})
    yield Variant(
        "toml-table-model",
        "nested table",
        ".toml",
        nested + b'[model]\nname = "mlp"\n',
    )
    yield Variant(
        "toml-table-extra", "nested table", ".toml", toml_bytes + b"[extra]\nx = 1\n"
    )
    yield Variant(
        "toml-array-of-tables",
        "nested table",
        ".toml",
        nested + b'[[model]]\nname = "mlp"\n',
    )
    yield Variant(
        "json-nested-config",
        "nested table",
        ".json",
        _json({"config": good}),
    )
