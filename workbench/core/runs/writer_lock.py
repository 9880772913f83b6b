"""One run folder, one writer: a lock held by the process that trains the run.

Two ``--resume`` of one checkpoint at once wrote into one folder, and its
ledger interleaved (13 epoch records for a 9-epoch run, two starts, two
finishes). The lock is an advisory ``flock`` on ``.writer.lock`` in the
folder, released when its file closes or its process ends (``kill -9`` too),
so it never goes stale. Where ``fcntl`` is missing (Windows) there is none.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from workbench.core.config import ConfigError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".writer.lock"


class FolderBusy(ConfigError):
    """Another process is writing the run folder."""


class WriterLock:
    """The lock on ``folder``, held from construction until :meth:`release`.

    Raises
    ------
    FolderBusy
        Another process (or another session of this one) holds it.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._fd: int | None = None
        if fcntl is None:
            return
        fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            who = f"process {holder}" if holder.isdigit() else "another process"
            raise FolderBusy(
                f"{folder} is being written by {who}: one run folder has one "
                "writer. Wait for that run to end, or give --init-from to start "
                "a new run from this checkpoint's weights"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        self._fd = fd

    def release(self) -> None:
        """Let another process write the folder (also done at exit)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)  # closing the file drops the flock

    def __del__(self) -> None:
        self.release()
