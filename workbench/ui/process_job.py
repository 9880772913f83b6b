"""A run on several processes: ``train --nproc N`` as a child of the window.

:class:`ProcessJob` starts ``python -m workbench train --config CFG --nproc N``
in a session of its own (the terminal's Ctrl+C is not its), finds the run
folder in the line rank 0 prints, and follows it with a :class:`JobFollower`,
all on the GUI thread from a timer: no thread, no widget touched elsewhere.
Stop is SIGINT to the launcher alone, which passes it to every rank; they stop
after their batch and rank 0 saves (exit code 130).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.distributed.job import RUN_FOLDER_LINE, train_command
from workbench.core.host.process_tree import processes_with, signal_all
from workbench.core.runs.tail import AppendedLines
from workbench.ui.job_follower import JobFollower

log = logging.getLogger(__name__)

POLL_MS = 250
# Closing the window: how long the ranks get to stop after their batch.
STOP_WAIT_S = 5.0
STOPPED_EXIT_CODE = 130  # the launcher's code for "stopped by SIGINT"
# Lines of rank 0 the window shows as notes under the controls.
_NOTE_PREFIXES = ("warning: ", "note: ")


@dataclass(frozen=True, slots=True)
class JobEnded:
    """How a job ended: its exit code, run folder and, if it failed, why."""

    exit_code: int
    folder: Path | None
    message: str = ""  # the last line of its error output, when it failed

    @property
    def outcome(self) -> str:
        """``finished``, ``stopped`` or ``failed``."""
        if self.exit_code == 0:
            return "finished"
        return "stopped" if self.exit_code == STOPPED_EXIT_CODE else "failed"


class ProcessJob(QObject):
    """One ``train --nproc`` child process and the run folder it writes."""

    folder_found = Signal(object)  # Path: rank 0 said where the run is
    event = Signal(object)  # a ledger event, or a Notice rank 0 printed
    ended = Signal(object)  # JobEnded; emitted once

    def __init__(
        self, cfg: TrainConfig, nproc: int, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.config = cfg
        self.nproc = nproc
        self.folder: Path | None = None
        self.stop_requested = False
        self._process: subprocess.Popen[bytes] | None = None
        self._scratch = Path(tempfile.mkdtemp(prefix="ptcore-job-"))
        # On the command line of the launcher and of every rank it starts.
        self.marker = str(self._scratch / "config.json")
        self._stdout = AppendedLines(self._scratch / "stdout.txt")
        self._follower: JobFollower | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._on_timer_timeout)

    @property
    def pid(self) -> int | None:
        """The launcher's process id (None before :meth:`start`)."""
        return None if self._process is None else self._process.pid

    @property
    def running(self) -> bool:
        """The launcher has not exited yet."""
        return self._process is not None and self._process.poll() is None

    def command(self) -> list[str]:
        """The command line the job runs (its config in a file of its own)."""
        config = Path(self.marker)
        config.write_text(json.dumps(self.config.to_dict()), encoding="utf-8")
        return train_command(self.marker, self.nproc)

    def start(self) -> None:
        """Start the launcher (raises OSError when it cannot be started)."""
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # rank 0's lines at once
        with (
            (self._scratch / "stdout.txt").open("wb") as out,
            (self._scratch / "stderr.txt").open("wb") as err,
        ):
            # Files, not pipes: a chatty child never blocks on a full pipe.
            self._process = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=env,
                start_new_session=True,
            )
        self._timer.start()

    def stop(self) -> None:
        """Ask every rank to stop after its batch (SIGINT to the launcher alone)."""
        if self.running and not self.stop_requested:
            self.stop_requested = True
            self._signal(signal.SIGINT)

    def processes(self) -> list[int]:
        """The job's live processes: the launcher and every rank."""
        return processes_with(self.marker)

    def shutdown(self, wait_s: float = STOP_WAIT_S) -> None:
        """Stop and wait; after ``wait_s`` end every process of the job."""
        process = self._process
        self._timer.stop()
        if process is None:
            self._clean_up()
            return
        self.stop()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                process.wait(wait_s)
                break
            except subprocess.TimeoutExpired:
                log.warning("the training job did not stop; sending %s", sig.name)
                signal_all(self.processes(), sig)
                wait_s = 2.0
        else:
            # SIGKILL was sent: the launcher is gone in moments. Reaped here,
            # so a last poll() sees the end (SIGTERM is a graceful stop now).
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(wait_s)
        self._end_leftovers()
        self._clean_up()

    def _signal(self, sig: signal.Signals) -> None:
        if self._process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._process.pid, sig)

    @Slot()
    def _on_timer_timeout(self) -> None:
        self.poll()

    def poll(self) -> None:
        """Read what the job printed and wrote since the last poll; notice its end."""
        process = self._process
        if process is None:
            return
        code = process.poll()  # before reading: nothing written after is missed
        for line in self._stdout.read():
            self._on_output_line(line)
        if self._follower is not None:
            self._follower.poll()
        if code is not None:
            self._timer.stop()
            self._end_leftovers()
            message = "" if code in (0, STOPPED_EXIT_CODE) else self._failure(code)
            self._clean_up()
            self.ended.emit(JobEnded(code, self.folder, message))

    def _on_output_line(self, line: str) -> None:
        match = RUN_FOLDER_LINE.match(line)
        if match and self.folder is None:
            self.folder = Path(match.group(1))
            self._follower = JobFollower(self.folder, self)
            self._follower.event.connect(self.event)
            self.folder_found.emit(self.folder)
        elif line.startswith(_NOTE_PREFIXES):
            self.event.emit(E.Notice(line.partition(": ")[2]))

    def _failure(self, code: int) -> str:
        """The last line that says something in the job's error output."""
        try:
            text = (self._scratch / "stderr.txt").read_text(errors="replace")
        except OSError:
            text = ""
        lines = [s.strip() for s in text.splitlines() if re.search(r"\w", s)]
        if lines:
            return lines[-1]
        if code < 0:
            return f"the training job was ended by signal {-code}"
        return f"the training job failed (exit code {code})"

    def _end_leftovers(self) -> None:
        # A rank whose launcher is gone would train on unseen: none may stay.
        leftovers = self.processes()
        if leftovers:
            log.warning("ending %d leftover processes of the job", len(leftovers))
            signal_all(leftovers, signal.SIGKILL)

    def _clean_up(self) -> None:
        shutil.rmtree(self._scratch, ignore_errors=True)
