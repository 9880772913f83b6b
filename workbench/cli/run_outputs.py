"""Files ``train`` writes as it goes: ``--metrics-json`` and ``--save``.

Rewritten after every epoch and at the end (see README, "Metrics JSON"). Such
a file is a by-product of the run: a folder given by mistake is refused
before training, and a write that fails mid-run (a full disk) is said once
while the run goes on; only the final write failing makes the command's exit
code 1.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.core import config as C
from workbench.core.atomic_files import write_atomically
from workbench.core.checkpoints.io import CheckpointError
from workbench.core.train.step_clock import PHASES


def metrics_document(
    cfg: C.TrainConfig, history: Any, final: Any | None
) -> dict[str, Any]:
    """The ``--metrics-json`` document (see README, "Metrics JSON")."""
    # Epochs count from 1 for people; the engine's events count from 0.
    epochs = [{**e.to_dict(), "epoch": e.epoch + 1} for e in history.epochs]
    doc: dict[str, Any] = {
        "config": cfg.to_dict(),
        "epochs": epochs,
        "steps": [{"step": s, "loss": loss} for s, loss in history.steps],
        "final": None,
    }
    if final is not None:
        doc["final"] = {
            "val_accuracy": final.val_accuracy,
            "val_loss": final.val_loss,
            "images_per_s": final.images_per_s,
            "seconds": final.seconds,
            "compile_seconds": final.compile_seconds,
            "step_seconds": final.step_seconds,
            # Where the mean step's time went; {} when it was not measured.
            "step_time": dict(zip(PHASES, final.phases or (), strict=False)),
            "global_step": final.global_step,
            "stopped": final.stopped,
        }
    return doc


class OutputFile:
    """A file a run writes after every epoch and at the end (``--save``, ...).

    A write that fails during the run is said once and the run goes on; only
    the final write failing is an error. ``write(path, value)`` raises
    ``OSError`` (or ``CheckpointError``, whose text says why) when it fails.
    """

    def __init__(
        self, flag: str, path: str | Path, write: Callable[[Path, Any], object]
    ) -> None:
        self.flag = flag
        self.path = Path(path).expanduser()
        if self.path.is_dir():
            raise C.ConfigError(
                f"{flag} {self.path} is a folder: give a file name, "
                f"such as {self.path / self.example_name}"
            )
        self._write = write
        self._warned = False

    example_name = "run.pt"

    def write_during_run(self, value: Any) -> str | None:
        """Write after an epoch; a warning the first time it fails, else None."""
        try:
            self._write(self.path, value)
        except (OSError, CheckpointError) as exc:
            if self._warned:
                return None
            self._warned = True
            return (
                f"cannot write {self.flag} {self.path} ({reason(exc)}); the run "
                "goes on and it is written again at the end"
            )
        return None

    def write_at_end(self, value: Any) -> str | None:
        """Write at the end; the error line when it fails, else None."""
        try:
            self._write(self.path, value)
        except (OSError, CheckpointError) as exc:
            return f"cannot write {self.flag} {self.path}: {reason(exc)}"
        return None


class MetricsJson(OutputFile):
    """Where ``--metrics-json`` writes its document."""

    example_name = "metrics.json"

    def __init__(self, path: str | Path) -> None:
        super().__init__("--metrics-json", path, _write_document)


def _write_document(path: Path, document: dict[str, Any]) -> None:
    """Replace the file with ``document`` (whole or not at all); OSError."""
    text = json.dumps(document, indent=2, allow_nan=True) + "\n"
    write_atomically(path, lambda handle: handle.write(text.encode("utf-8")))


def reason(exc: Exception) -> str:
    """Why a write failed, in words: ``No space left on device``, not ``[Errno 28]``."""
    if isinstance(exc, CheckpointError) and isinstance(exc.__cause__, OSError):
        exc = exc.__cause__  # the disk's own words, not the whole sentence again
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)
