"""A run's best or latest weights: which checkpoint file, and words saying which.

A run folder keeps its latest state in ``checkpoint.pt`` and its best epoch's in
``best.pt``. Commands that read weights (``predict``, ``export``) take either a
checkpoint file or a run folder, and ``--best`` for the best epoch's; they say
which weights they read, since the two can differ by many epochs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.core.config import ConfigError
from workbench.core.runs.folder import BEST_FILE, CHECKPOINT_FILE, RUN_FILE, RunFolder
from workbench.core.train.best_epoch import METRIC_NAMES, value_text


def run_folder_of(path: Path) -> RunFolder | None:
    """The run folder ``path`` is, or holds the checkpoint of; None otherwise."""
    if path.is_dir():
        return RunFolder(path) if (path / RUN_FILE).is_file() else None
    kept = path.name in (CHECKPOINT_FILE, BEST_FILE)
    if kept and (path.parent / RUN_FILE).is_file():
        return RunFolder(path.parent)
    return None


def pick_checkpoint(path: str | Path, best: bool = False) -> Path:
    """The checkpoint to read: ``path`` itself, or a run folder's latest or best.

    Raises
    ------
    ConfigError
        A folder that is not a run's; ``best`` where there is no ``best.pt``.
    """
    path = Path(path).expanduser()
    folder = run_folder_of(path)
    if path.is_dir() and folder is None:
        raise ConfigError(f"{path} is a folder but not a run folder (no {RUN_FILE})")
    if not best:
        return folder.checkpoint_path if path.is_dir() and folder else path
    if folder is None:
        raise ConfigError(
            f"--best: {path} is not in a run folder ({BEST_FILE} is kept beside a "
            f"run's {CHECKPOINT_FILE})"
        )
    if not folder.best_path.is_file():
        raise ConfigError(
            f"--best: {folder.path} has no {BEST_FILE} (runs from before it was "
            "kept, and runs without autosave, have only their latest weights)"
        )
    return folder.best_path


def which_weights(
    checkpoint: Path, epoch: int | None, info: dict[str, Any] | None = None
) -> str:
    """``"the best epoch, 8 of 10 (validation accuracy 99.72%)"`` and the like.

    ``epoch``: the epochs the checkpoint completed; ``info``: its run's
    ``run.json`` when the caller has read it already.
    """
    folder = run_folder_of(checkpoint)
    if info is None:
        info = folder.info() if folder is not None else {}
    done = info.get("epoch")
    of = f" of {done}" if isinstance(done, int) else ""
    if checkpoint.name == BEST_FILE and folder is not None:
        best = info.get("best_epoch") or {}
        metric = best.get("metric")
        value = best.get("value")
        said = ""
        if metric in METRIC_NAMES and isinstance(value, int | float):
            said = f" ({METRIC_NAMES[metric]} {value_text(metric, value)})"
        return f"the best epoch, {epoch}{of}{said}"
    if folder is not None and (folder.path / BEST_FILE).is_file():
        best = (info.get("best_epoch") or {}).get("epoch")
        also = f"; the best was epoch {best} (best.pt)" if best != epoch else ""
        return f"the latest epoch, {epoch}{also}"
    return f"epoch {epoch}" if isinstance(epoch, int) else "its weights"
