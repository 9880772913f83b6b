"""Following a file another process appends to: complete lines only.

The window follows a run trained by other processes (``train --nproc``) through
its run folder: :class:`AppendedLines` hands over each line once it is whole,
so a line being written is never parsed half; :func:`ledger_events` reads the
ledger's lines (``metrics.jsonl``) back into events.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path

from workbench.core.events import RecordedEvent, event_from_record

log = logging.getLogger(__name__)


class AppendedLines:
    """The lines appended to ``path`` since the last :meth:`read`.

    Parameters
    ----------
    path : Path
        A file that may not exist yet; it is only ever appended to.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._offset = 0  # bytes handed over: always just after a newline

    def read(self) -> list[str]:
        """The complete lines added since the last call (a partial last one waits)."""
        try:
            with self.path.open("rb") as file:
                file.seek(self._offset)
                data = file.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self._offset += end + 1
        text = data[:end].decode("utf-8", errors="replace")
        return [line for line in text.split("\n") if line.strip()]


def ledger_events(lines: Iterable[str]) -> list[RecordedEvent]:
    """The events of ledger ``lines``; unreadable lines and unknown kinds skipped."""
    out: list[RecordedEvent] = []
    for line in lines:
        try:
            event = event_from_record(json.loads(line))
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError):
            log.warning("skipped an unreadable ledger line: %.80s", line)
            continue
        if event is not None:
            out.append(event)
    return out
