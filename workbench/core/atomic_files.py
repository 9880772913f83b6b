"""Writing files so that a crash or a full disk never leaves a broken one.

Whole files are replaced atomically; JSON-lines logs are appended and flushed
line by line, and read back without the torn last line a crash may leave.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO


def new_file_mode() -> int:
    """The mode ``open()`` gives a new file: 0666 less the process's umask."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # elsewhere: read it by setting it (and put it back)
    os.umask(mask)
    return 0o666 & ~mask


def mode_for(path: Path) -> int:
    """The mode a file written to ``path`` should have: the old file's, or new."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return new_file_mode()


def write_atomically(path: str | Path, write: Callable[[BinaryIO], None]) -> Path:
    """Call ``write`` on a temp file beside ``path``, sync it, rename it in place.

    Readers see the old file or the new one, never a half-written one; on any
    failure the temp file is removed and the exception (``OSError`` for disk
    problems) propagates with the old file intact. The folder is synced after
    the rename, so the new name itself survives a power loss.
    """

    def fill(fd: int, _name: str) -> None:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())

    return _replace_atomically(path, fill)


def write_atomically_by_name(path: str | Path, write: Callable[[str], None]) -> Path:
    """:func:`write_atomically` for a writer that takes a file name, not a file.

    ``write(name)`` writes the whole temp file by its name (a library's own
    exporter); it is then synced and renamed in place the same way.
    """

    def fill(fd: int, name: str) -> None:
        os.close(fd)
        write(name)
        with open(name, "rb") as handle:
            os.fsync(handle.fileno())

    return _replace_atomically(path, fill)


def _replace_atomically(path: str | Path, fill: Callable[[int, str], None]) -> Path:
    """A temp file beside ``path`` filled by ``fill(fd, name)``, then renamed."""
    path = Path(path).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
    )
    try:
        # mkstemp makes it private (0600); the file gets the mode any other
        # file the user saves gets, or keeps the mode of the one it replaces.
        os.fchmod(fd, mode_for(path))
        fill(fd, tmp_name)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    sync_folder(path.parent)
    return path


def sync_folder(folder: Path) -> None:
    """Flush ``folder``'s entries (a rename) to disk; a no-op where unsupported.

    A rename lives in the folder, not in the file: until the folder is synced,
    a power loss can bring back the old name. Windows cannot open a folder for
    syncing (and its renames go through the journal), so it is skipped there.
    """
    if os.name == "nt":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# A temp file this old belongs to a save that was killed, not to one under way.
STALE_AFTER_S = 600


def remove_stale_temps(path: Path, older_than_s: float = STALE_AFTER_S) -> int:
    """Delete temp files a killed save of ``path`` left behind; returns how many."""
    removed = 0
    cutoff = time.time() - older_than_s
    for leftover in path.parent.glob(f".{path.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()
                removed += 1
    return removed


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append ``record`` as one JSON line and flush it (NaN allowed).

    A killed process leaves every line written so far; a line a full disk
    refused leaves nothing, and a torn last line is never continued.
    """
    line = (json.dumps(record, allow_nan=True) + "\n").encode("utf-8")
    # Unbuffered, so nothing waits in a buffer to be written after an error.
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            # A torn last line (a kill mid-write): this record starts its own.
            line = b"\n" + line
        try:
            written = 0
            while written < len(line):
                written += os.write(fd, line[written:])
        except OSError:
            # A full disk may have taken part of the line: take it back, so the
            # next record, once there is room, is not glued to a fragment.
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file; a torn last line (a crash), lines that
    are not JSON objects (junk, another encoding) are skipped."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    records = []
    for line in data.splitlines():  # bytes: junk spoils its own line only
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


class _WriteErrors:
    """A file handle that remembers the ``OSError`` its writes raised."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.error: OSError | None = None

    def write(self, data: bytes) -> int:
        try:
            return self.handle.write(data)
        except OSError as exc:
            self.error = exc
            raise

    def flush(self) -> None:
        self.handle.flush()


def torch_save(payload: dict[str, Any], handle: BinaryIO) -> None:
    """``torch.save``, a failed write raised as the ``OSError`` it was (a full disk).

    torch's zip writer turns it into ``RuntimeError: [enforce fail at
    inline_container.cc] unexpected pos``, which says nothing of a full disk.
    """
    import torch  # here: the ledger's readers use this module without torch

    recording = _WriteErrors(handle)
    try:
        torch.save(payload, recording)
    except RuntimeError:
        if recording.error is not None:
            raise recording.error from None
        raise
