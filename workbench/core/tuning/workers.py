"""Several workers of one sweep on this machine (``sweep --parallel N``).

Each worker is a process of its own, ``ptcore-workbench sweep --join STUDY``,
sharing the study through its storage and an equal share of the cores. Each
leads a session of its own, so a terminal's Ctrl+C reaches only the process
that started them, which passes it on: every worker then stops its trial
after the current batch and keeps what finished.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


def threads_per_worker(count: int) -> int:
    """An equal share of this machine's cores, at least one."""
    return max(1, (os.cpu_count() or 1) // max(1, count))


def worker_command(study: str, storage: str | None, worker: int) -> list[str]:
    """The command line of local worker ``worker`` of ``study``."""
    command = [sys.executable, "-m", "workbench", "sweep", "--join", study]
    if storage is not None:
        command += ["--storage", storage]
    return [*command, "--worker", str(worker)]


class LocalWorkers:
    """``count`` worker processes of ``study``, started at once."""

    def __init__(self, study: str, storage: str | None, count: int) -> None:
        env = {**os.environ, "OMP_NUM_THREADS": str(threads_per_worker(count))}
        self.processes = [
            subprocess.Popen(
                worker_command(study, storage, worker),
                env=env,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            for worker in range(count)
        ]

    def running(self) -> int:
        """How many are still at work (reaping those that ended)."""
        return sum(1 for p in self.processes if p.poll() is None)

    def interrupt(self) -> None:
        """Pass a stop request on: the first stops each worker after its batch.

        A second one aborts them, as a second Ctrl+C does a single run.
        """
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)

    def wait(self, poll_s: float = 0.2) -> list[int]:
        """Every worker's exit code, once all have ended.

        Polled, not blocked on one: a worker that dies is reaped at once, so
        the others see its process gone and run its trial again.
        """
        while self.running():
            time.sleep(poll_s)
        return [p.returncode for p in self.processes]
