"""Run folders: every run keeps its latest checkpoint where a crash cannot lose it.

Each run gets a folder in a per-user runs directory holding ``run.json`` (what
the run is, which process trains it, how far it got, how it ended) and
``checkpoint.pt``, rewritten atomically after every ``autosave_every`` epochs
and when the run ends. A run whose ``run.json`` still says ``running`` while
its process is gone was interrupted (a crash, a kill, a power cut): the window
offers to resume it on the next start.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import secrets
import socket
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import platformdirs
import torch

import workbench
from workbench.core.checkpoints import CheckpointError, save_checkpoint
from workbench.core.config import TrainConfig
from workbench.core.engine import TrainingRun
from workbench.core.events import EpochMetrics, TrainEvent, TrainResult
from workbench.core.files import write_atomically

log = logging.getLogger(__name__)

RUNS_ENV = "PTCORE_RUNS_DIR"
RUN_FILE = "run.json"
CHECKPOINT_FILE = "checkpoint.pt"
# How a run ended; "running" on disk with a dead process means interrupted.
STATUSES = ("running", "finished", "stopped", "closed", "failed", "dismissed")
RESUMABLE = ("running", "closed")


def runs_dir() -> Path:
    """``$PTCORE_RUNS_DIR``, else ``<user data>/ptcore-workbench/runs``."""
    override = os.environ.get(RUNS_ENV)
    if override:
        return Path(override).expanduser()
    return platformdirs.user_data_path("ptcore-workbench") / "runs"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def versions() -> dict[str, str]:
    """The software a run was trained with."""
    import torchvision

    return {
        "workbench": workbench.__version__,
        "torch": str(torch.__version__),
        "torchvision": str(torchvision.__version__),
        "python": platform.python_version(),
        "cuda": str(torch.version.cuda or "none"),
    }


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


@dataclass
class RunFolder:
    """One run's folder: ``run.json`` and its latest ``checkpoint.pt``."""

    path: Path

    @classmethod
    def create(
        cls, cfg: TrainConfig, *, origin: str, root: Path | None = None
    ) -> RunFolder:
        """A new folder named by time, dataset and model; ``run.json`` written."""
        root = root or runs_dir()
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        name = f"{stamp}-{cfg.dataset}-{cfg.model}-{secrets.token_hex(2)}"
        folder = cls(root / name)
        folder._write(
            {
                "id": name,
                "created": _now(),
                "origin": origin,
                "status": "running",
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "argv": sys.argv[1:] if origin == "command line" else [],
                "config": cfg.to_dict(),
                "versions": versions(),
                "device": None,
                "epoch": 0,
                "global_step": 0,
                "total_steps": None,
                "checkpoint": None,
                "updated": _now(),
            }
        )
        return folder

    @property
    def id(self) -> str:
        """The folder's name."""
        return self.path.name

    @property
    def checkpoint_path(self) -> Path:
        """Where the latest checkpoint lives."""
        return self.path / CHECKPOINT_FILE

    def info(self) -> dict[str, Any]:
        """The contents of ``run.json`` (empty when missing or unreadable)."""
        try:
            data = json.loads((self.path / RUN_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def update(self, **fields: Any) -> None:
        """Change fields of ``run.json`` (atomically)."""
        data = self.info()
        data.update(fields, updated=_now())
        self._write(data)

    def claim(self) -> None:
        """Mark the run as trained by this process (a resumed run)."""
        self.update(status="running", pid=os.getpid(), host=socket.gethostname())

    def save(self, run: TrainingRun) -> Path:
        """Write the run's checkpoint and record how far it got."""
        written = save_checkpoint(self.checkpoint_path, run)
        self.update(
            checkpoint=CHECKPOINT_FILE,
            epoch=run.epoch,
            global_step=run.global_step,
            total_steps=run.total_steps,
            device=str(run.device),
        )
        return written

    def _write(self, data: dict[str, Any]) -> None:
        text = json.dumps(data, indent=1) + "\n"
        write_atomically(self.path / RUN_FILE, lambda f: f.write(text.encode()))


def folder_of(checkpoint: Path) -> RunFolder | None:
    """The run folder a checkpoint path belongs to, if it is one's."""
    checkpoint = Path(checkpoint).expanduser().resolve()
    if checkpoint.name == CHECKPOINT_FILE and (checkpoint.parent / RUN_FILE).is_file():
        return RunFolder(checkpoint.parent)
    return None


def interrupted_runs(root: Path | None = None) -> list[RunFolder]:
    """Runs that can be resumed: interrupted or closed mid-run, newest first.

    Interrupted: ``run.json`` says ``running`` but its process (on this host)
    is gone. Closed: the window was closed while the run trained.
    """
    root = root or runs_dir()
    try:
        folders = [RunFolder(p) for p in root.iterdir() if p.is_dir()]
    except OSError:
        return []
    found = []
    for folder in folders:
        info = folder.info()
        if info.get("status") not in RESUMABLE or not folder.checkpoint_path.is_file():
            continue
        if info.get("status") == "running":
            same_host = info.get("host") == socket.gethostname()
            pid = info.get("pid")
            if same_host and isinstance(pid, int) and _process_alive(pid):
                continue  # still training somewhere
        found.append(folder)
    return sorted(found, key=lambda f: f.info().get("updated", ""), reverse=True)


class Autosaver:
    """Saves a run into its folder every ``every`` epochs and when it ends.

    Call :meth:`on_event` with each engine event, in the thread that iterates
    the engine (the model is between steps then). A failed save (full disk)
    never stops the run: it is returned as a message for the user.
    """

    def __init__(self, folder: RunFolder, every: int) -> None:
        self.folder = folder
        self.every = every
        self.last_error: str | None = None

    def on_event(self, event: TrainEvent, run: TrainingRun) -> str | None:
        """Save when due; returns a message if the save failed."""
        if isinstance(event, EpochMetrics):
            completed = run.batch_in_epoch == 0  # the epoch ran to its end
            if self.every and completed and run.epoch % self.every == 0:
                return self._save(run)
        elif isinstance(event, TrainResult):
            message = self._save(run) if self.every else None
            return self.mark("stopped" if event.stopped else "finished") or message
        return None

    def mark(self, status: str) -> str | None:
        """Record how the run ended (also failed, window closed); message if not."""
        try:
            self.folder.update(status=status)
        except OSError as exc:
            self.last_error = f"cannot update {self.folder.path}: {exc}"
            log.warning("%s", self.last_error)
            return self.last_error
        return None

    def _save(self, run: TrainingRun) -> str | None:
        try:
            self.folder.save(run)
        except (CheckpointError, OSError) as exc:
            self.last_error = f"autosave to {self.folder.path} failed: {exc}"
            log.warning("%s", self.last_error)
            return self.last_error
        return None
