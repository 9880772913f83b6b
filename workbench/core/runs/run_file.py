"""Reading a run's ``run.json`` and saying what is wrong with a damaged one.

``run.json`` is rewritten atomically, so damage comes from outside: a hand
edit, a disk fault, a copy cut short, another program. A damaged file is
reported (the Runs tab marks the run) and never rewritten: nothing the user
may still want is lost.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.core.atomic_files import write_atomically

__all__ = ["DamagedRunFile", "forget_after", "read_run_file"]

# Whole numbers past torch's int64 are damage, not a step count.
_MAX_WHOLE = 2**63 - 1


class DamagedRunFile(OSError):
    """``run.json`` cannot be read or holds a field of the wrong type.

    An ``OSError``: callers that write a run folder already handle a folder
    they cannot write (the run goes on without autosave).
    """


def _text(value: object) -> bool:
    return isinstance(value, str)


def _whole(value: object) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and 0 <= value <= _MAX_WHOLE
    )


def _number(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def _seconds_table(value: object) -> bool:
    return isinstance(value, dict) and all(_number(v) for v in value.values())


def _texts(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


# What each field the program reads must be; None is allowed for every one
# (older runs lack some fields, and "not yet" is null).
_FIELDS: dict[str, tuple[Callable[[object], bool], str]] = {
    "id": (_text, "a string"),
    "name": (_text, "a string"),
    "created": (_text, "a string"),
    "updated": (_text, "a string"),
    "status": (_text, "a string"),
    "origin": (_text, "a string"),
    "host": (_text, "a string"),
    "started_from": (_text, "a string"),
    "checkpoint": (_text, "a string"),
    "config": (lambda v: isinstance(v, dict), "a table of settings"),
    "versions": (lambda v: isinstance(v, dict), "a table"),
    "tags": (_texts, "a list of strings"),
    "changed_on_resume": (_texts, "a list of strings"),
    "mask_changes": (lambda v: isinstance(v, list), "a list"),
    "epoch": (_whole, "a whole number"),
    "global_step": (_whole, "a whole number"),
    "total_steps": (_whole, "a whole number"),
    "world_size": (lambda v: _whole(v) and v >= 1, "a whole number >= 1"),
    "pid": (_whole, "a whole number"),
    "seconds": (_number, "a finite number >= 0"),
    "best_val_accuracy": (lambda v: _number(v) and v <= 1, "a number 0-1"),
    "step_time": (_seconds_table, "a table of seconds"),
}


def _shown(value: object) -> str:
    text = json.dumps(value, allow_nan=True)
    return text if len(text) <= 40 else text[:37] + "..."


def field_problem(data: dict[str, Any]) -> str | None:
    """The first field of ``data`` of the wrong type, in words; None if none."""
    for key, (ok, wanted) in _FIELDS.items():
        value = data.get(key)
        if value is not None and not ok(value):
            return f"{key} is {_shown(value)}, not {wanted}"
    return None


def read_run_file(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """``(data, problem)`` of the ``run.json`` at ``path``.

    ``(None, None)``: there is no such file (not a run folder). A problem is
    one line naming what is wrong; ``data`` is then ``{}`` when nothing could
    be read, else the fields as read (not to be trusted).
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return {}, f"{path.name} cannot be read: {exc.strerror or exc}"
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return {}, f"{path.name} is not UTF-8 text (byte {exc.start})"
    except ValueError as exc:
        return {}, f"{path.name} is not valid JSON: {exc}"
    except RecursionError:
        return {}, f"{path.name} is nested too deeply to be a run's record"
    if not isinstance(data, dict):
        return {}, f"{path.name} holds {_shown(data)}, not a table of fields"
    problem = field_problem(data)
    return data, None if problem is None else f"{path.name}: {problem}"


def forget_after(path: Path, global_step: int) -> None:
    """Drop the lines logged past ``global_step``, and a torn last line.

    A crash may have logged steps after the last checkpoint; the run resumes
    from that checkpoint and logs those steps again. Lines that cannot be read
    stay as they are (readers skip them): only the steps to log again go.
    """
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n") and _line_step(lines[-1]) is None:
        lines.pop()  # a write cut short by the crash
    kept = [line for line in lines if (_line_step(line) or 0) <= global_step]
    if kept and not kept[-1].endswith(b"\n"):
        kept[-1] += b"\n"
    text = b"".join(kept)
    if text != data:
        write_atomically(path, lambda f: f.write(text))


def _line_step(line: bytes) -> float | None:
    """A ledger line's global step; None when it holds none that can be read."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    step = record.get("global_step", 0)
    ok = isinstance(step, int | float) and not isinstance(step, bool)
    return step if ok and step == step else None
