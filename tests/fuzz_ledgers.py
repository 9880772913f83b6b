"""Seeded damage for run ledgers: ``run.json``, ``metrics.jsonl``, ``events.jsonl``.

Each :class:`Variant` is the new bytes of one file of a healthy run folder;
``kind`` is its class of damage. :func:`healthy_run` trains a tiny run and
records it as the window and the command line do.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fuzz_values import WRONG
from workbench.core.config import TrainConfig
from workbench.core.runs.folder import EVENTS_FILE, METRICS_FILE, RUN_FILE, RunFolder
from workbench.core.runs.recorder import RunRecorder
from workbench.core.train.engine import iter_fit, prepare_run

SEED = 17

# JSON text of numbers no field holds (1e400 reads as inf, NaN as nan).
HUGE = ("1e400", "-1e400", str(10**100), "-1", "NaN", "Infinity")
# Fields that hold numbers, in run.json and in each kind of metrics line.
RUN_NUMBERS = (
    "epoch",
    "global_step",
    "total_steps",
    "seconds",
    "best_val_accuracy",
    "world_size",
)
JUNK = bytes(range(256)) + b"\x00\xff\xfe" * 10


@dataclass(frozen=True)
class Variant:
    """One damaged file of a run folder: which file, its new bytes, its kind."""

    name: str
    kind: str
    file: str
    data: bytes


def healthy_run(root: Path) -> RunFolder:
    """A finished tiny run with every ledger file, as a recorder writes it."""
    cfg = TrainConfig(model="mlp", epochs=1, max_steps=3, batch_size=64, log_every=1)
    run = prepare_run(cfg)
    recorder = RunRecorder(RunFolder.create(cfg, origin="test", root=root), 1)
    recorder.start(run)
    recorder.log_event("start", step=0, plan="new", changed=[], frozen=[])
    for event in iter_fit(run):
        recorder.on_event(event, run)
    return recorder.folder


def _kind_of(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "list"
    return {type(None): "None"}.get(type(value), type(value).__name__)


def _json(data: Any) -> bytes:
    return (json.dumps(data, indent=1) + "\n").encode()


def _raw(data: dict[str, Any], key: str, raw: str) -> bytes:
    text = json.dumps({**data, key: "__RAW__"})
    return text.replace('"__RAW__"', raw).encode()


def variants(folder: RunFolder) -> Iterator[Variant]:
    """Every damaged variant of ``folder``'s ledger files, in a fixed order."""
    rng = random.Random(SEED)
    yield from _run_json(folder, rng)
    for name in (METRICS_FILE, EVENTS_FILE):
        yield from _jsonl(name, (folder.path / name).read_bytes(), rng)


def _run_json(folder: RunFolder, rng: random.Random) -> Iterator[Variant]:
    data = (folder.path / RUN_FILE).read_bytes()
    info = json.loads(data)
    for _ in range(8):
        size = rng.randrange(1, len(data) - 1)
        yield Variant(f"run.json@{size}", "run.json invalid", RUN_FILE, data[:size])
    for name, raw in (
        ("empty", b""),
        ("junk", JUNK),
        ("utf16", data.decode().encode("utf-16")),
        ("latin-1", data.replace(b'"test"', '"t\u00e9st"'.encode("latin-1"))),
        ("deep", b"[" * 100_000 + b"]" * 100_000),
        ("two-documents", data + data),
    ):
        yield Variant(f"run.json:{name}", "run.json invalid", RUN_FILE, raw)
    for top in ([info], "run", 3, None):
        yield Variant(
            f"run.json:top={_kind_of(top)}", "run.json not a dict", RUN_FILE, _json(top)
        )
    for key in info:
        have = _kind_of(info[key])
        kinds = [k for k in WRONG if k != have]
        for kind in rng.sample(kinds, 3):
            yield Variant(
                f"run.json:{key}={kind}",
                "run.json wrong type",
                RUN_FILE,
                _json({**info, key: WRONG[kind]}),
            )
    for key in info:
        missing = {k: v for k, v in info.items() if k != key}
        yield Variant(
            f"run.json:missing {key}",
            "run.json field missing",
            RUN_FILE,
            _json(missing),
        )
    for key in RUN_NUMBERS:
        for raw in HUGE:
            yield Variant(
                f"run.json:{key}={raw}",
                "run.json huge number",
                RUN_FILE,
                _raw(info, key, raw),
            )


def _jsonl(name: str, data: bytes, rng: random.Random) -> Iterator[Variant]:
    lines = data.splitlines(keepends=True)
    records = [json.loads(line) for line in lines]
    for _ in range(4):
        cut = rng.randrange(1, len(lines[-1]) - 1)
        yield Variant(
            f"{name}:torn@{cut}",
            f"{name} truncated",
            name,
            b"".join(lines[:-1]) + lines[-1][:cut],
        )
    yield Variant(f"{name}:empty", f"{name} truncated", name, b"")
    garbage = (
        b"not json\n",
        b"[1, 2, 3]\n",
        b"null\n",
        b'"a string"\n',
        b"{\n",
        b"[" * 50_000 + b"\n",
        b"{}\n",
        b"\n\n",
    )
    for index, junk in enumerate(garbage):
        at = rng.randrange(len(lines) + 1)
        damaged = b"".join([*lines[:at], junk, *lines[at:]])
        yield Variant(
            f"{name}:garbage{index}@{at}", f"{name} garbage line", name, damaged
        )
    for index in range(3):
        at = rng.randrange(len(lines) + 1)
        damaged = b"".join([*lines[:at], JUNK[index * 80 :] + b"\n", *lines[at:]])
        yield Variant(f"{name}:junk{index}@{at}", f"{name} binary junk", name, damaged)
    yield Variant(f"{name}:all-junk", f"{name} binary junk", name, JUNK)
    yield Variant(
        f"{name}:utf16", f"{name} binary junk", name, data.decode().encode("utf-16")
    )
    kinds_seen: set[str] = set()
    for index, record in enumerate(records):
        kind = str(record.get("kind"))
        if kind in kinds_seen:
            continue
        kinds_seen.add(kind)
        for key in record:
            have = _kind_of(record[key])
            for wrong in rng.sample([k for k in WRONG if k != have], 2):
                edited = {**record, key: WRONG[wrong]}
                yield Variant(
                    f"{name}:{kind}.{key}={wrong}",
                    f"{name} wrong type",
                    name,
                    _replace_line(lines, index, json.dumps(edited).encode()),
                )
            if isinstance(record[key], int | float) and not isinstance(
                record[key], bool
            ):
                for raw in HUGE:
                    yield Variant(
                        f"{name}:{kind}.{key}={raw}",
                        f"{name} huge number",
                        name,
                        _replace_line(lines, index, _raw(record, key, raw)),
                    )
        if isinstance(record.get("confusion"), list):
            ragged = [row[:-1] for row in record["confusion"]]
            yield Variant(
                f"{name}:{kind}.confusion=ragged",
                f"{name} wrong type",
                name,
                _replace_line(
                    lines, index, json.dumps({**record, "confusion": ragged}).encode()
                ),
            )
        for key in ("layers", "grad_norms", "edges", "counts"):
            if isinstance(record.get(key), list) and record[key]:
                short = {**record, key: record[key][:-1]}
                yield Variant(
                    f"{name}:{kind}.{key}=short",
                    f"{name} wrong type",
                    name,
                    _replace_line(lines, index, json.dumps(short).encode()),
                )


def _replace_line(lines: list[bytes], index: int, line: bytes) -> bytes:
    return b"".join([*lines[:index], line + b"\n", *lines[index + 1 :]])
