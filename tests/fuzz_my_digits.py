"""Seeded damage for the user's own drawings: the index and the image files.

Each :class:`Variant` damages a copy of a healthy collection (``samples.json``
and two PNGs per drawing); ``kind`` is its class of damage.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tests.fuzz_values import WRONG
from workbench.core.data.my_digits import INDEX_NAME, MyDigits

SEED = 17
JUNK = bytes(range(256)) * 2


@dataclass(frozen=True)
class Variant:
    """One damaged collection: ``apply(folder)`` damages a healthy copy."""

    name: str
    kind: str
    apply: Callable[[Path], None]


def healthy_collection(folder: Path) -> MyDigits:
    """Five drawings of three digits, saved as the Draw tab saves them."""
    store = MyDigits(folder)
    for index, label in enumerate((3, 3, 7, 1, 3)):
        strokes = np.zeros((64, 64), np.uint8)
        strokes[10 + index : 50, 28:36] = 255  # a bar: styles crop and scale it
        store.add(strokes, label)
    return store


def _index(data: bytes) -> Callable[[Path], None]:
    return lambda folder: (folder / INDEX_NAME).write_bytes(data)


def _edit(index: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> bytes:
    edited = json.loads(json.dumps(index))
    change(edited)
    return json.dumps(edited, indent=1).encode()


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = value

    return change


def _drop(entry: int, key: str) -> Callable[[dict[str, Any]], None]:
    return lambda data: data["samples"][entry].pop(key)


def variants(folder: Path) -> Iterator[Variant]:
    """Every damaged variant of the healthy collection in ``folder``."""
    rng = random.Random(SEED)
    raw = (folder / INDEX_NAME).read_bytes()
    index = json.loads(raw)
    for _ in range(6):
        size = rng.randrange(1, len(raw) - 1)
        yield Variant(f"index@{size}", "index invalid", _index(raw[:size]))
    for name, data in (
        ("empty", b""),
        ("junk", JUNK),
        ("utf16", raw.decode().encode("utf-16")),
        ("latin-1", raw.replace(b'"mnist"', '"mnist\u00e9"'.encode("latin-1"))),
        ("deep", b"[" * 100_000 + b"]" * 100_000),
    ):
        yield Variant(f"index:{name}", "index invalid", _index(data))
    for top in ([index], "x", 3, None, {}):
        yield Variant(
            f"index:top={top!r:.10}",
            "index wrong type",
            _index(json.dumps(top).encode()),
        )
    for kind, value in WRONG.items():
        yield Variant(
            f"samples={kind}",
            "index wrong type",
            _index(_edit(index, _set(("samples",), value))),
        )
    entry = index["samples"][0]
    for key in entry:
        for kind in rng.sample([k for k in WRONG if k != "str"], 3):
            yield Variant(
                f"samples[0].{key}={kind}",
                "index wrong type",
                _index(_edit(index, _set(("samples", 0, key), WRONG[kind]))),
            )
        yield Variant(
            f"missing samples[1].{key}",
            "index field missing",
            _index(_edit(index, _drop(1, key))),
        )
    for label in (10, -1, 10**100, 3.0, "3"):
        yield Variant(
            f"label={label!r:.12}",
            "index wrong type",
            _index(_edit(index, _set(("samples", 2, "label"), label))),
        )
    for bad_id in (
        "../../escape",
        "/etc/passwd",
        "",
        ".hidden",
        "a/b",
        "a\\b",
        "x" * 5000,
    ):
        yield Variant(
            f"id={bad_id!r:.14}",
            "index wrong type",
            _index(_edit(index, _set(("samples", 1, "id"), bad_id))),
        )
    first = entry["id"]
    yield Variant(
        "duplicated id",
        "duplicated id",
        _index(_edit(index, _set(("samples", 3, "id"), first))),
    )
    yield Variant(
        "duplicated entry",
        "duplicated id",
        _index(_edit(index, lambda d: d["samples"].append(d["samples"][0]))),
    )
    yield Variant(
        "missing file entry",
        "missing image",
        _index(
            _edit(
                index, lambda d: d["samples"].append({**d["samples"][0], "id": "gone"})
            )
        ),
    )
    for entry_index, sample in enumerate(index["samples"][:3]):
        for suffix in (".png", "-28x28.png"):
            name = f"{sample['id']}{suffix}"
            yield Variant(f"rm {entry_index}{suffix}", "missing image", _remove(name))
            yield Variant(
                f"junk {entry_index}{suffix}", "damaged image", _bytes(name, JUNK)
            )
            yield Variant(
                f"empty {entry_index}{suffix}", "damaged image", _bytes(name, b"")
            )
            yield Variant(
                f"cut {entry_index}{suffix}", "damaged image", _cut(name, rng)
            )
            yield Variant(f"dir {entry_index}{suffix}", "damaged image", _folder(name))
        yield Variant(
            f"big field {entry_index}",
            "damaged image",
            _image(f"{sample['id']}-28x28.png", 40),
        )
        yield Variant(
            f"blank strokes {entry_index}",
            "damaged image",
            _image(f"{sample['id']}.png", 30, 0),
        )


def _remove(name: str) -> Callable[[Path], None]:
    return lambda folder: (folder / name).unlink()


def _bytes(name: str, data: bytes) -> Callable[[Path], None]:
    return lambda folder: (folder / name).write_bytes(data)


def _cut(name: str, rng: random.Random) -> Callable[[Path], None]:
    fraction = rng.uniform(0.2, 0.9)

    def apply(folder: Path) -> None:
        data = (folder / name).read_bytes()
        (folder / name).write_bytes(data[: int(len(data) * fraction)])

    return apply


def _folder(name: str) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        (folder / name).unlink()
        (folder / name).mkdir()

    return apply


def _image(name: str, side: int, value: int = 255) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        from PIL import Image

        Image.fromarray(np.full((side, side), value, np.uint8)).save(folder / name)

    return apply


def copy_of(healthy: Path, target: Path) -> Path:
    """A fresh copy of the healthy collection to damage."""
    shutil.copytree(healthy, target)
    return target
