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

A run whose ``run.json`` still says ``running`` while its process is gone was
interrupted (a crash, a kill, a power cut): the window offers to resume it.
"""

from __future__ import annotations

import json
import logging
import math
import os
import platform
import secrets
import socket
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

import platformdirs
import torch

import workbench
from workbench.core.checkpoints import CheckpointError, save_checkpoint
from workbench.core.config import TrainConfig
from workbench.core.distributed import world_size
from workbench.core.events import (
    EpochMetrics,
    LayerHealth,
    StepMetrics,
    TrainEvent,
    TrainResult,
    WeightHistograms,
    event_from_record,
)
from workbench.core.files import append_jsonl, read_jsonl, write_atomically
from workbench.core.model_catalog import model_slug
from workbench.core.run_file import DamagedRunFile, forget_after, read_run_file
from workbench.core.training_run import TrainingRun

log = logging.getLogger(__name__)

RUNS_ENV = "PTCORE_RUNS_DIR"
RUN_FILE = "run.json"
CHECKPOINT_FILE = "checkpoint.pt"
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
        name = f"{stamp}-{cfg.dataset}-{model_slug(cfg.model)}-{secrets.token_hex(2)}"
        folder = cls(root / name)
        folder._write(
            {
                "id": name,
                "created": _now(),
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
        data.update(fields, updated=_now())
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
            old = info.get("config") or {}
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
    return sorted(found, key=lambda f: f.info().get("updated") or "", reverse=True)


class RunRecorder:
    """Writes a run's ledger and autosaves its checkpoint, event by event.

    Call :meth:`on_event` with each engine event in the thread that iterates
    the engine (the model is between two steps then), and :meth:`log_event`
    from the GUI for what the user did. A failed write (full disk) never stops
    the run: it is returned as a message for the user.

    Parameters
    ----------
    folder : RunFolder
        Where to write.
    autosave_every : int
        Save the checkpoint every this many completed epochs (0: never).
    tensorboard : bool
        Also write TensorBoard event files under ``tensorboard/`` (needs the
        optional ``tensorboard`` package).
    """

    def __init__(
        self, folder: RunFolder, autosave_every: int, *, tensorboard: bool = False
    ) -> None:
        self.folder = folder
        self.every = autosave_every
        self.last_error: str | None = None
        self._tensorboard = tensorboard
        self._writer: Any = None
        self._seconds_before = float(folder.info().get("seconds") or 0.0)

    # ------------------------------------------------------------------ engine side

    def start(self, run: TrainingRun) -> str | None:
        """Before the first event: seed the metrics with the run's history."""
        path = self.folder.path / METRICS_FILE
        try:
            if not path.exists() or path.stat().st_size == 0:
                # A checkpoint keeps only (step, loss) of the steps it logged:
                # StepMetrics.from_record reads such a short line.
                for step, loss in run.history.steps:
                    append_jsonl(
                        path,
                        {"kind": StepMetrics.KIND, "global_step": step, "loss": loss},
                    )
                for epoch in run.history.epochs:
                    append_jsonl(path, epoch.to_record())
            else:
                forget_after(path, run.global_step)
        except OSError as exc:
            return self._failed(f"cannot write {path}", exc)
        return self._open_tensorboard()

    def on_event(self, event: TrainEvent, run: TrainingRun) -> str | None:
        """Record ``event``; save the checkpoint when due. A message if it failed."""
        try:
            return self._record(event, run)
        except OSError as exc:
            return self._failed(f"cannot write the run folder {self.folder.path}", exc)

    def _record(self, event: TrainEvent, run: TrainingRun) -> str | None:
        if isinstance(event, StepMetrics):
            self._metric(event.to_record())
            self._scalars(event.global_step, loss=event.loss, lr=event.lr)
        elif isinstance(event, LayerHealth):
            self._metric(event.to_record())
            for name, grad, weight in zip(
                event.layers, event.grad_norms, event.weight_norms, strict=True
            ):
                self._scalars(
                    event.global_step,
                    **{f"grad_norm/{name}": grad, f"weight_norm/{name}": weight},
                )
        elif isinstance(event, WeightHistograms):
            self._metric(event.to_record())
        elif isinstance(event, EpochMetrics):
            self._metric(event.to_record())
            self._scalars(
                event.global_step,
                val_accuracy=event.val_accuracy,
                val_loss=event.val_loss,
                train_accuracy=event.train_accuracy,
            )
            best = max(
                (
                    e.val_accuracy
                    for e in run.history.epochs
                    if not math.isnan(e.val_accuracy)
                ),
                default=None,
            )
            self.folder.update(
                best_val_accuracy=best, epoch=run.epoch, global_step=run.global_step
            )
            completed = run.batch_in_epoch == 0  # the epoch ran to its end
            if self.every and completed and run.epoch % self.every == 0:
                return self._save(run)
        elif isinstance(event, TrainResult):
            message = self._save(run) if self.every else None
            self.folder.update(
                seconds=self._seconds_before + event.seconds,
                final_val_accuracy=event.val_accuracy,
                global_step=event.global_step,
            )
            self.log_event(
                "stop" if event.stopped else "finish", step=event.global_step
            )
            self._close_tensorboard()
            return self.mark("stopped" if event.stopped else "finished") or message
        return None

    # ------------------------------------------------------------------ GUI side

    def log_event(self, kind: str, **data: Any) -> None:
        """Append what the user did (pause, freeze change, ...) to ``events.jsonl``."""
        try:
            append_jsonl(
                self.folder.path / EVENTS_FILE, {"time": _now(), "kind": kind, **data}
            )
        except OSError as exc:
            self._failed("cannot write the run's events", exc)

    def mark(self, status: str) -> str | None:
        """Record how the run ended (also failed, window closed); message if not."""
        self._close_tensorboard()
        try:
            self.folder.update(status=status)
        except OSError as exc:
            return self._failed(f"cannot update {self.folder.path}", exc)
        return None

    # ------------------------------------------------------------------ helpers

    def _metric(self, record: dict[str, Any]) -> None:
        append_jsonl(self.folder.path / METRICS_FILE, record)

    def _save(self, run: TrainingRun) -> str | None:
        try:
            self.folder.save(run)
        except (CheckpointError, OSError) as exc:
            return self._failed(f"autosave to {self.folder.path} failed", exc)
        return None

    def _failed(self, what: str, exc: Exception) -> str:
        self.last_error = f"{what}: {exc}"
        log.warning("%s", self.last_error)
        return self.last_error

    def _open_tensorboard(self) -> str | None:
        if not self._tensorboard or self._writer is not None:
            return None
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            self._tensorboard = False
            return (
                "TensorBoard files are off: the optional tensorboard package is not "
                "installed (pip install tensorboard)"
            )
        self._writer = SummaryWriter(str(self.folder.path / TENSORBOARD_DIR))
        return None

    def _scalars(self, step: int, **values: float) -> None:
        if self._writer is not None:
            for tag, value in values.items():
                self._writer.add_scalar(tag, value, step)

    def _close_tensorboard(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One line of the runs list."""

    folder: RunFolder
    id: str
    name: str
    tags: tuple[str, ...]
    created: str
    dataset: str
    model: str
    status: str
    best_val_accuracy: float | None
    seconds: float
    global_step: int
    config: dict[str, Any]
    started_from: str | None = None  # not the seed's weights (a fine-tune)
    changed: tuple[str, ...] = ()  # settings changed after it began
    world_size: int = 1  # processes that trained it (older runs: 1)
    problem: str | None = None  # why its run.json is damaged (then all defaults)

    @property
    def title(self) -> str:
        """The name the user gave, else the id."""
        return self.name or self.id


def summarize(folder: RunFolder) -> RunSummary | None:
    """The runs-list line of ``folder``; None without a ``run.json``.

    A damaged ``run.json`` gives a line with status "damaged" and its
    ``problem``: the run stays in the list, marked, and its file untouched.
    """
    data, problem = read_run_file(folder.path / RUN_FILE)
    if data is None:
        return None
    info = {} if problem else data
    cfg = info.get("config") or {}
    return RunSummary(
        folder=folder,
        id=info.get("id") or folder.path.name,
        name=info.get("name") or "",
        tags=tuple(info.get("tags") or ()),
        created=info.get("created") or "",
        dataset=str(cfg.get("dataset", "?")),
        model=str(cfg.get("model", "?")),
        status="damaged" if problem else info.get("status") or "?",
        best_val_accuracy=info.get("best_val_accuracy"),
        seconds=float(info.get("seconds") or 0.0),
        global_step=info.get("global_step") or 0,
        config=cfg,
        started_from=info.get("started_from") or None,
        changed=tuple(info.get("changed_on_resume") or ()),
        world_size=info.get("world_size") or 1,
        problem=problem,
    )


def list_runs(root: Path | None = None) -> list[RunSummary]:
    """Every run folder with a readable ``run.json``, newest first."""
    root = root or runs_dir()
    try:
        paths = sorted((p for p in root.iterdir() if p.is_dir()), reverse=True)
    except OSError:
        return []
    return [s for s in map(summarize, map(RunFolder, paths)) if s is not None]


def find_run(key: str, root: Path | None = None) -> RunFolder:
    """The run whose id (or a unique prefix of it, or name) is ``key``.

    Raises
    ------
    KeyError
        With a message listing what matched (none or several).
    """
    runs = list_runs(root)
    exact = [r for r in runs if key in (r.id, r.name)]
    matches = exact or [r for r in runs if r.id.startswith(key)]
    if len(matches) == 1:
        return matches[0].folder
    if not matches:
        raise KeyError(f"no run {key!r} in {root or runs_dir()}")
    ids = ", ".join(r.id for r in matches[:5])
    raise KeyError(f"{key!r} matches {len(matches)} runs ({ids}): give more of the id")


class RunMetrics(TypedDict):
    """A run's logged events by kind (the ``kind`` of their ledger lines)."""

    step: list[StepMetrics]
    epoch: list[EpochMetrics]
    health: list[LayerHealth]
    histograms: list[WeightHistograms]


def read_metrics(folder: RunFolder) -> RunMetrics:
    """A run's logged events, typed, by kind, in the order they were logged.

    Each line is read by its event's ``from_record``, so ledgers written by
    earlier versions load too. A torn last line (a crash), a line of a kind
    this version does not know and a line it cannot read are skipped.
    """
    out = RunMetrics(step=[], epoch=[], health=[], histograms=[])
    unreadable = 0
    for record in read_jsonl(folder.path / METRICS_FILE):
        try:
            event = event_from_record(record)
        except (KeyError, TypeError, ValueError):
            unreadable += 1
            continue
        if isinstance(event, StepMetrics):
            out["step"].append(event)
        elif isinstance(event, EpochMetrics):
            out["epoch"].append(event)
        elif isinstance(event, LayerHealth):
            out["health"].append(event)
        elif isinstance(event, WeightHistograms):
            out["histograms"].append(event)
    if unreadable:
        log.warning("skipped %d unreadable lines of %s", unreadable, folder.path)
    return out


def read_events(folder: RunFolder) -> list[dict[str, Any]]:
    """What the user did during the run, oldest first."""
    return read_jsonl(folder.path / EVENTS_FILE)


def rename_run(folder: RunFolder, name: str) -> None:
    """Give the run a name (shown instead of its id)."""
    folder.update(name=name.strip())


def tag_run(folder: RunFolder, tags: list[str] | tuple[str, ...]) -> None:
    """Replace the run's tags."""
    folder.update(tags=sorted({t.strip() for t in tags if t.strip()}))


def delete_run(folder: RunFolder) -> None:
    """Delete the run's folder and everything in it."""
    import shutil

    if not (folder.path / RUN_FILE).is_file():
        raise FileNotFoundError(f"{folder.path} is not a run folder")
    shutil.rmtree(folder.path)
