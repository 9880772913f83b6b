"""Run folders: the ledger of every run, and its latest checkpoint.

Each run, from the window or the command line, gets a folder in a per-user runs
directory holding:

``run.json``
    What the run is (config, versions), which process trains it, how far it got,
    its best validation accuracy and how it ended (rewritten atomically).
``metrics.jsonl``
    One JSON line per logged step, layer-health sample, epoch (with its
    confusion matrix) and weight histogram, appended and flushed as they
    happen, so a crash loses nothing already logged.
``events.jsonl``
    What the user did: start, pause, resume, stop, freeze-mask changes,
    settings changed on resume.
``checkpoint.pt``
    Rewritten atomically every ``autosave_every`` epochs and when the run ends.
``best.pt``
    The checkpoint of the best epoch so far (by the config's ``best_metric``),
    rewritten when an epoch beats it; ``run.json``'s ``best_epoch`` says which.

A run whose ``run.json`` still says ``running`` while its process is gone was
interrupted (a crash, a kill, a power cut): the window offers to resume it.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import platform
import secrets
import shutil
import socket
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import platformdirs
import torch

import workbench
from workbench.core.atomic_files import write_atomically
from workbench.core.checkpoints.io import save_checkpoint
from workbench.core.config import TrainConfig
from workbench.core.distributed.env import world_size
from workbench.core.host.process_tree import process_alive
from workbench.core.models.catalog import model_slug
from workbench.core.runs.run_file import DamagedRunFile, read_run_file
from workbench.core.training_run import TrainingRun

log = logging.getLogger(__name__)

RUNS_ENV = "PTCORE_RUNS_DIR"
RUN_FILE = "run.json"
CHECKPOINT_FILE = "checkpoint.pt"
BEST_FILE = "best.pt"
METRICS_FILE = "metrics.jsonl"
EVENTS_FILE = "events.jsonl"
TENSORBOARD_DIR = "tensorboard"
# How a run ended; "running" on disk with a dead process means interrupted.
STATUSES = ("running", "finished", "stopped", "closed", "failed", "dismissed")
RESUMABLE = ("running", "closed")


def runs_dir() -> Path:
    """``$PTCORE_RUNS_DIR``, else ``<user data>/ptcore-workbench/runs``."""
    override = os.environ.get(RUNS_ENV)
    if override:
        return Path(override).expanduser()
    return platformdirs.user_data_path("ptcore-workbench") / "runs"


def now_stamp() -> str:
    """The current UTC time as ISO 8601 text, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def _torchvision_version() -> str:
    """torchvision's ``__version__`` (with its build, e.g. ``+cu130``), unimported.

    Importing torchvision costs seconds; its generated ``version.py`` says it.
    """
    spec = importlib.util.find_spec("torchvision")
    if spec is not None and spec.origin is not None:
        version_file = Path(spec.origin).with_name("version.py")
        with contextlib.suppress(OSError, SyntaxError):
            for node in ast.parse(version_file.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__version__"
                    for t in node.targets
                ):
                    return str(ast.literal_eval(node.value))
    return importlib.metadata.version("torchvision")


def versions() -> dict[str, str]:
    """The software a run was trained with."""
    return {
        "workbench": workbench.__version__,
        "torch": str(torch.__version__),
        "torchvision": _torchvision_version(),
        "python": platform.python_version(),
        "cuda": str(torch.version.cuda or "none"),
    }


@dataclass
class RunFolder:
    """One run's folder: ``run.json`` and its latest ``checkpoint.pt``."""

    path: Path

    @classmethod
    def create(
        cls,
        cfg: TrainConfig,
        *,
        origin: str,
        root: Path | None = None,
        started_from: str | None = None,
    ) -> RunFolder:
        """A new folder named by time, dataset and model; ``run.json`` written.

        ``started_from`` says where the first weights came from when they were
        not the seed's initialisation (a fine-tune, loaded weights): such a run
        cannot be reproduced from its config alone.
        """
        root = root or runs_dir()
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        root.mkdir(parents=True, exist_ok=True)
        while True:
            name = (
                f"{stamp}-{cfg.dataset}-{model_slug(cfg.model)}-{secrets.token_hex(2)}"
            )
            try:
                (root / name).mkdir()
            except FileExistsError:
                # Another run began this second with the same suffix (parallel
                # sweep workers): its folder is its own, draw again.
                continue
            break
        folder = cls(root / name)
        folder._write(
            {
                "id": name,
                "created": now_stamp(),
                "origin": origin,
                "status": "running",
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "world_size": world_size(),  # processes training it (--nproc)
                "argv": sys.argv[1:] if origin == "command line" else [],
                "config": cfg.to_dict(),
                "versions": versions(),
                "device": None,
                "epoch": 0,
                "global_step": 0,
                "total_steps": None,
                "checkpoint": None,
                "name": "",
                "tags": [],
                "best_val_accuracy": None,
                "seconds": 0.0,
                "started_from": started_from,
                "changed_on_resume": [],
                "updated": now_stamp(),
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

    @property
    def best_path(self) -> Path:
        """Where the best epoch's checkpoint lives."""
        return self.path / BEST_FILE

    def info(self) -> dict[str, Any]:
        """The contents of ``run.json`` (empty when missing or damaged)."""
        data, problem = read_run_file(self.path / RUN_FILE)
        return data if data and problem is None else {}

    def update(self, **fields: Any) -> None:
        """Change fields of ``run.json`` (atomically); a damaged one is kept.

        Raises
        ------
        DamagedRunFile
            (an ``OSError``) when ``run.json`` is damaged: it is left as it is.
        """
        data = self._fields()
        data.update(fields, updated=now_stamp())
        self._write(data)

    def _fields(self) -> dict[str, Any]:
        """``run.json``'s fields, to change; :class:`DamagedRunFile` if damaged."""
        data, problem = read_run_file(self.path / RUN_FILE)
        if problem is not None:
            raise DamagedRunFile(f"{self.path}: {problem}; it was left as it is")
        return data or {}

    def claim(self, cfg: TrainConfig | None = None) -> None:
        """Mark the run as trained by this process (a resumed run).

        ``cfg``: the config it continues with; fields that differ from the
        stored one are recorded in ``changed_on_resume`` (the run is then no
        longer what its first config describes).
        """
        info = self._fields()
        if not info:
            raise FileNotFoundError(f"{self.path / RUN_FILE} is gone")
        fields: dict[str, Any] = {}
        if cfg is not None:
            new = cfg.to_dict()
            # A field newer than the run's record had its default all along.
            old = {**TrainConfig().to_dict(), **(info.get("config") or {})}
            changed = sorted(
                k for k in new if k != "schema_version" and old.get(k) != new[k]
            )
            if changed:
                fields["config"] = new
                fields["changed_on_resume"] = sorted(
                    set(info.get("changed_on_resume") or []) | set(changed)
                )
        self.update(
            status="running",
            pid=os.getpid(),
            host=socket.gethostname(),
            world_size=world_size(),
            **fields,
        )

    def record_mask_change(self, step: int, frozen: list[str]) -> None:
        """The freeze mask changed before ``step + 1``: run.json says how it trained."""
        info = self._fields()
        changes = [*(info.get("mask_changes") or []), {"step": step, "frozen": frozen}]
        changed = sorted(set(info.get("changed_on_resume") or []) | {"frozen"})
        self.update(changed_on_resume=changed, mask_changes=changes)

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

    def save_best(self, run: TrainingRun, metric: str, value: float) -> Path:
        """Write the run as it stands as the best epoch's checkpoint, and say so."""
        written = save_checkpoint(self.best_path, run)
        self.update(
            best_epoch={
                "epoch": run.epoch,  # counted from 1: the epochs completed
                "global_step": run.global_step,
                "metric": metric,
                "value": value,
                "checkpoint": BEST_FILE,
            }
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


def still_training(info: dict[str, Any]) -> bool:
    """Whether the process of a ``running`` run may still be training it.

    On this host its process must be alive; a run on another host (a shared
    folder) cannot be checked from here, and counts as training.
    """
    if info.get("host") != socket.gethostname():
        return True
    pid = info.get("pid")
    return not isinstance(pid, int) or process_alive(pid)


def mark_closed_if_stopped(folder: RunFolder) -> None:
    """A run the closing window stopped is "closed": the next start offers it."""
    if folder.info().get("status") == "stopped":
        folder.update(status="closed")


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
        if info.get("status") == "running" and still_training(info):
            continue
        found.append(folder)
    return sorted(found, key=lambda f: f.info().get("updated") or "", reverse=True)


def rename_run(folder: RunFolder, name: str) -> None:
    """Give the run a name (shown instead of its id)."""
    folder.update(name=name.strip())


def tag_run(folder: RunFolder, tags: list[str] | tuple[str, ...]) -> None:
    """Replace the run's tags."""
    folder.update(tags=sorted({t.strip() for t in tags if t.strip()}))


def delete_run(folder: RunFolder) -> None:
    """Delete the run's folder and everything in it."""
    if not (folder.path / RUN_FILE).is_file():
        raise FileNotFoundError(f"{folder.path} is not a run folder")
    shutil.rmtree(folder.path)
