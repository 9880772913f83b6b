"""The run's ledger written event by event, and its checkpoint autosaved."""

from __future__ import annotations

import logging
import math
from typing import Any

from workbench.core.atomic_files import append_jsonl
from workbench.core.checkpoints.io import CheckpointError
from workbench.core.events import (
    EpochMetrics,
    LayerHealth,
    StepMetrics,
    TrainEvent,
    TrainResult,
    WeightHistograms,
)
from workbench.core.runs.folder import (
    EVENTS_FILE,
    METRICS_FILE,
    TENSORBOARD_DIR,
    RunFolder,
    now_stamp,
)
from workbench.core.runs.run_file import forget_after
from workbench.core.train.best_epoch import run_best
from workbench.core.train.class_scores import run_file_scores
from workbench.core.train.step_clock import PHASES
from workbench.core.training_run import TrainingRun

log = logging.getLogger(__name__)


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
        self._said: set[str] = set()  # failures said, until a write succeeds
        self._tensorboard = tensorboard
        self._writer: Any = None
        info = folder.info()
        self._seconds_before = float(info.get("seconds") or 0.0)
        self._preparing_before = float(info.get("prepare_seconds") or 0.0)

    # ------------------------------------------------------------------ engine side

    def prepared(self, seconds: float) -> str | None:
        """The run took ``seconds`` from Start to its first step (data, model,
        feature cache): kept apart from the training time, added up over
        continues."""
        try:
            self.folder.update(prepare_seconds=self._preparing_before + seconds)
        except OSError as exc:
            return self._failed(f"cannot write the run folder {self.folder.path}", exc)
        return None

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
            message = self._record(event, run)
        except OSError as exc:
            return self._failed(f"cannot write the run folder {self.folder.path}", exc)
        if message is None:
            self._said.clear()  # writing again: a new failure is news again
        return message

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
            scores = None
            if event.confusion:  # each class's precision, recall and F1
                names = run.loaders.info.class_names
                scores = run_file_scores(event.confusion, event.epoch, names)
            self.folder.update(
                best_val_accuracy=best,
                epoch=run.epoch,
                global_step=run.global_step,
                **({} if scores is None else {"class_scores": scores}),
            )
            completed = run.batch_in_epoch == 0  # the epoch ran to its end
            said = self._save_best(run) if self.every and completed else None
            if self.every and completed and run.epoch % self.every == 0:
                return self._save(run) or said
            return said
        elif isinstance(event, TrainResult):
            message = self._save(run) if self.every else None
            self.folder.update(
                seconds=self._seconds_before + event.seconds,
                final_val_accuracy=event.val_accuracy,
                global_step=event.global_step,
            )
            if event.phases:  # where the mean step's time went
                self.folder.update(
                    step_time=dict(zip(PHASES, event.phases, strict=True))
                )
            if event.early_stop:
                early = {"epoch": event.epochs_completed, "why": event.early_stop}
                self.folder.update(early_stop=early)
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
                self.folder.path / EVENTS_FILE,
                {"time": now_stamp(), "kind": kind, **data},
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

    def _save_best(self, run: TrainingRun) -> str | None:
        """``best.pt`` when the epoch just completed is the best so far."""
        best = run_best(run)
        if best is None or best.epoch != run.epoch - 1:
            return None
        try:
            self.folder.save_best(run, run.config.best_metric, best.value)
        except (CheckpointError, OSError) as exc:
            return self._failed(f"saving the best epoch to {self.folder.path}", exc)
        return None

    def _failed(self, what: str, exc: Exception) -> str | None:
        """The message for a failed write; None when it was said and still holds.

        A full disk fails every write of every step: said once, not 42 times.
        """
        self.last_error = f"{what}: {exc}"
        if what in self._said:
            return None
        self._said.add(what)
        log.warning("%s", self.last_error)
        return self.last_error

    def _open_tensorboard(self) -> str | None:
        if not self._tensorboard or self._writer is not None:
            return None
        try:
            # tensorboard is optional, and only runs that log to it import it.
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
