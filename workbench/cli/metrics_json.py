"""``train --metrics-json PATH``: the run's figures as one JSON document.

Rewritten after every epoch and at the end (see README, "Metrics JSON"). The
file is a by-product: a folder given by mistake is refused before training,
and a write that fails mid-run (a full disk) is said once while the run goes
on; only the final write failing makes the command's exit code 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench.core import config as C
from workbench.core.atomic_files import write_atomically


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
            "global_step": final.global_step,
            "stopped": final.stopped,
        }
    return doc


class MetricsJson:
    """Where ``--metrics-json`` writes; checked when made (a folder is refused)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        if self.path.is_dir():
            raise C.ConfigError(
                f"--metrics-json {self.path} is a folder: give a file name, "
                f"such as {self.path / 'metrics.json'}"
            )
        self._warned = False

    def write(self, document: dict[str, Any]) -> None:
        """Replace the file with ``document`` (whole or not at all); OSError."""
        text = json.dumps(document, indent=2, allow_nan=True) + "\n"
        write_atomically(self.path, lambda handle: handle.write(text.encode("utf-8")))

    def write_during_run(self, document: dict[str, Any]) -> str | None:
        """Write an epoch's document; a warning the first time it fails, else None."""
        try:
            self.write(document)
        except OSError as exc:
            if self._warned:
                return None
            self._warned = True
            return (
                f"cannot write --metrics-json {self.path} ({reason(exc)}); the run "
                "goes on and it is written again at the end"
            )
        return None

    def write_at_end(self, document: dict[str, Any]) -> str | None:
        """Write the final document; the error line when it fails, else None."""
        try:
            self.write(document)
        except OSError as exc:
            return f"cannot write --metrics-json {self.path}: {reason(exc)}"
        return None


def reason(exc: OSError) -> str:
    """``[Errno 28] No space left on device: '/x'`` as ``No space left on device``."""
    return exc.strerror or str(exc)
