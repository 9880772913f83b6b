"""Before and after fixes: each class's accuracy of two runs on the same images.

A run trained with a dataset's fixes validates on the validation split as
fixed (excluded images gone, relabelled ones under their new class), the run
before them on the split as it was: their recorded scores are of other images
as soon as a fix touches a validation image. So both runs' final weights
predict the same images here, the validation split with the fixes, and each
class's accuracy is of those. The run before is the newest finished run of
the same settings without fixes. No Qt: it could live with the core's data
issues, and runs in a task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from workbench.core.checkpoints.io import eval_model, info_of, load_checkpoint
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.fixes import classes_of
from workbench.core.data.loaders import FastLoader
from workbench.core.data_issues.images import named_images
from workbench.core.runs.folder import RunFolder
from workbench.core.runs.listing import RunSummary, list_runs

# What two runs may differ in and still be "the same settings": how a run is
# kept, fed or where it runs, and the fixes themselves.
NOT_SETTINGS = (
    "schema_version",
    "autosave_every",
    "log_every",
    "workers",
    "pin_memory",
    "device",
    "download",
    "fixes",
    "fixes_name",
)
BATCH = 512  # images predicted at once


def _settings(cfg: TrainConfig) -> dict[str, Any]:
    return {k: v for k, v in cfg.to_dict().items() if k not in NOT_SETTINGS}


def run_before(
    cfg: TrainConfig, runs: list[RunSummary] | None = None
) -> RunSummary | None:
    """The newest finished run of ``cfg``'s settings without fixes (not a fold run).

    ``runs``: the ledger, newest first (None: read it).
    """
    wanted = _settings(cfg)
    for run in list_runs() if runs is None else runs:
        if run.status != "finished" or not run.folder.checkpoint_path.is_file():
            continue
        try:
            other = TrainConfig.from_dict(run.config)
        except ConfigError:
            continue  # a damaged run is no comparison
        if not other.fixes and other.folds <= 1 and _settings(other) == wanted:
            return run
    return None


def class_accuracy(matrix: np.ndarray) -> np.ndarray:
    """Each class's share of its images predicted as it (NaN: no image)."""
    support = matrix.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(support > 0, np.diag(matrix) / support, np.nan)


def overall_accuracy(matrix: np.ndarray) -> float:
    """The share of all images predicted as labelled (NaN: none)."""
    total = matrix.sum()
    return float(np.trace(matrix) / total) if total else float("nan")


@dataclass(frozen=True)
class BeforeAfter:
    """Two runs' confusion matrices (rows: the label as fixed) on the same images.

    ``before`` is None when no run of these settings without fixes finished.
    """

    class_names: tuple[str, ...]
    before: np.ndarray | None
    after: np.ndarray
    images: int  # the validation images both runs were measured on
    excluded: int  # validation images the fixes leave out
    relabelled: int  # validation images the fixes give another class

    @property
    def support(self) -> np.ndarray:
        """Each class's images (as fixed)."""
        return self.after.sum(axis=1)


@torch.no_grad()
def confusion_of(
    folder: RunFolder, images: torch.Tensor, labels: torch.Tensor, classes: int
) -> np.ndarray:
    """The run's final weights on ``images``: rows ``labels``, columns predicted."""
    payload = load_checkpoint(folder.checkpoint_path)
    info = info_of(payload)
    model = eval_model(payload)
    loader = FastLoader(
        images,
        labels,
        batch_size=BATCH,
        shuffle=False,
        seed=0,
        device="cpu",
        mean=info.mean,
        std=info.std,
    )
    predicted = torch.cat([model(x).argmax(dim=1) for x, _y in loader])
    matrix = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(matrix, (labels.numpy(), predicted.numpy()), 1)
    return matrix


def score_before_after(
    cfg: TrainConfig,
    before: RunFolder | None,
    after: RunFolder,
    cancel: Callable[[], bool] = lambda: False,
) -> BeforeAfter | None:
    """Both runs on ``cfg``'s validation images with its fixes (None: cancelled)."""
    fixed = named_images(cfg)
    if cancel():
        return None
    # The split as it was: which validation images the fixes took out or changed.
    given = named_images(cfg.replace(fixes=(), fixes_name=""))
    labels = fixed.arrays.test_labels
    was = dict(zip(given.val_names, given.arrays.test_labels.tolist(), strict=True))
    relabelled = sum(
        was[name] != label
        for name, label in zip(fixed.val_names, labels.tolist(), strict=True)
    )
    names = classes_of(cfg)
    matrices = []
    for folder in (before, after):
        if cancel():
            return None
        matrices.append(
            None
            if folder is None
            else confusion_of(folder, fixed.arrays.test_images, labels, len(names))
        )
    assert matrices[1] is not None
    return BeforeAfter(
        class_names=tuple(names),
        before=matrices[0],
        after=matrices[1],
        images=len(labels),
        excluded=len(given.val_names) - len(fixed.val_names),
        relabelled=relabelled,
    )
