"""A real, small file system for full-disk tests: a tmpfs the test can fill.

Faking ``OSError(ENOSPC)`` misses what a real full disk does: torch's
``save`` raises ``RuntimeError`` from C++, a half-written file stays, a
buffered write fails at ``close``. Mounting needs root (CI runs as root);
elsewhere the tests that need it are skipped, saying why, unless
``PTCORE_REQUIRE_SMALL_DISK=1`` makes that a failure.
"""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

_FILLER = ".filler"


class SmallDisk:
    """A mounted tmpfs at ``path``; :meth:`fill` leaves it (nearly) no room."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fill(self, leave: int = 0) -> None:
        """Take every free byte but ``leave`` (rounded to the file system's pages)."""
        stats = os.statvfs(self.path)
        room = stats.f_bavail * stats.f_frsize - leave
        with open(self.path / _FILLER, "ab") as handle:
            chunk = b"\0" * 65536
            while room > 0:
                try:
                    room -= handle.write(chunk[: min(room, len(chunk))])
                    handle.flush()
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break

    def free(self) -> None:
        """Room again, as after the user deleted something."""
        (self.path / _FILLER).unlink(missing_ok=True)

    def free_bytes(self) -> int:
        stats = os.statvfs(self.path)
        return stats.f_bavail * stats.f_frsize


def mount(path: Path, size: str) -> SmallDisk:
    """Mount a tmpfs of ``size`` (``"1m"``) at ``path``, or skip/fail saying why."""
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        why = f"a small tmpfs cannot be mounted here ({done.stderr.strip()})"
        if os.environ.get("PTCORE_REQUIRE_SMALL_DISK") == "1":
            pytest.fail(why)
        pytest.skip(why)
    return SmallDisk(path)


def unmount(disk: SmallDisk) -> None:
    subprocess.run(["umount", "-l", str(disk.path)], check=False)
