"""A sweep started from the window: ``ptcore-workbench sweep`` as a child process.

The sweep runs exactly as on the command line (its workers, its study, its
run folders), in a session of its own so a terminal's Ctrl+C is not its. The
window follows it by reading the study (:mod:`workbench.core.tuning.progress`)
and hears of its end from a timer on the GUI thread: no thread, no widget
touched elsewhere. Stop is SIGINT to the sweep, which passes it to its
workers: each stops after its batch and keeps its run; finished trials stay.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot

POLL_MS = 500
STOPPED_EXIT_CODE = 130


class SweepJob(QObject):
    """One ``sweep`` command; ``ended`` carries its exit code and last line."""

    ended = Signal(int, str)

    def __init__(self, arguments: list[str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.command = [sys.executable, "-m", "workbench", "sweep", *arguments]
        self._process: subprocess.Popen[bytes] | None = None
        self._output = Path(tempfile.mkstemp(prefix="sweep-", suffix=".log")[1])
        self._timer = QTimer(self, interval=POLL_MS)
        self._timer.timeout.connect(self._on_timer_timeout)

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        with open(self._output, "wb") as out:
            self._process = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        self._timer.start()

    def stop(self) -> None:
        """Ask the sweep to stop after every worker's batch."""
        if self.running:
            assert self._process is not None
            self._process.send_signal(signal.SIGINT)

    def wait(self, seconds: float) -> None:
        """Block up to ``seconds`` for the end (the window is closing)."""
        if self._process is not None:
            try:
                self._process.wait(seconds)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._on_timer_timeout()

    def last_line(self) -> str:
        try:
            lines = self._output.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1] if lines else ""

    @Slot()
    def _on_timer_timeout(self) -> None:
        if self._process is None or self._process.poll() is None:
            return
        self._timer.stop()
        code, line = self._process.returncode, self.last_line()
        self._process = None
        self._output.unlink(missing_ok=True)
        self.ended.emit(code, line)
