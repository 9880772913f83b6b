"""Cross-validation groups in the Runs tab: each group's record, in words.

A fold run names its group (``RunSummary.fold_group``); the group's
``group.json`` (:mod:`workbench.core.crossval.group`) holds K and each finished
fold's scores. :func:`read_groups` reads the groups of the listed runs once per
refresh (never per paint); :func:`entry_text` is a group's "Show:" entry and
:class:`FoldGroupSummary` the line that gives its scores across folds while it
is chosen.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from workbench.core.crossval.group import GROUP_FILE, SCORES, FoldGroup, groups_dir
from workbench.core.crossval.report import estimate_text, value_text
from workbench.core.crossval.stats import Estimate
from workbench.core.runs.listing import RunSummary

SUMMARY_TIP = (
    "Each score's mean over the finished folds (each fold model scored on the "
    "fold it never trained on) and its 95% confidence interval (Student's t)"
)


@dataclass(frozen=True, slots=True)
class GroupRecord:
    """What the Runs tab shows of one cross-validation group.

    ``folds`` is None when its ``group.json`` is missing or unreadable (the
    fold runs are still listed).
    """

    id: str
    path: Path
    runs: int  # its fold runs among the listed runs
    folds: int | None
    finished: int  # folds whose scores group.json holds
    estimates: dict[str, Estimate]
    running: bool  # group.json may change: a fold may still finish

    @property
    def complete(self) -> bool:
        return self.folds is not None and self.finished >= self.folds


def read_group(group_id: str, runs: int, root: Path | None = None) -> GroupRecord:
    """The record of group ``group_id`` under the runs folder ``root``."""
    group = FoldGroup(groups_dir(root) / group_id)
    info = group.info()
    folds = info.get("folds")
    scores = info.get("scores")
    finished = (
        sum(isinstance(s, dict) for s in scores.values())
        if isinstance(scores, dict)
        else 0
    )
    known = isinstance(folds, int) and not isinstance(folds, bool)
    return GroupRecord(
        id=group_id,
        path=group.path,
        runs=runs,
        folds=folds if known else None,
        finished=finished,
        estimates=group.estimates() if finished else {},
        running=info.get("status") != "finished",
    )


def read_groups(
    runs: Iterable[RunSummary], root: Path | None = None
) -> dict[str, GroupRecord]:
    """The records of the groups the fold runs among ``runs`` belong to, by id."""
    counts: dict[str, int] = {}
    for run in runs:
        if run.fold_group:
            counts[run.fold_group] = counts.get(run.fold_group, 0) + 1
    return {gid: read_group(gid, count, root) for gid, count in counts.items()}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _mean_and_spread(name: str, value: Estimate | None) -> str:
    """``"99.23% ± 0.99"`` (percentage points); the mean alone for one fold."""
    if value is None:
        return "—"
    mean = value_text(name, value.mean)
    if value.half_width is None:
        return mean
    scale, digits = (1.0, 4) if name == "val_loss" else (100.0, 2)
    return f"{mean} ± {scale * value.half_width:.{digits}f}"


def entry_text(record: GroupRecord) -> str:
    """``"Cross-validation ID: 5 folds, accuracy 99.23% ± 0.99"``.

    While folds are missing: ``"3 of 5 folds"``, over the finished ones.
    """
    head = f"Cross-validation {record.id}"
    if record.folds is None:
        return f"{head}: {_plural(record.runs, 'fold run')}, no group record"
    if record.complete:
        count = _plural(record.folds, "fold")
    else:
        count = f"{record.finished} of {_plural(record.folds, 'fold')}"
    accuracy = _mean_and_spread("val_accuracy", record.estimates.get("val_accuracy"))
    return f"{head}: {count}, accuracy {accuracy}"


def summary_text(record: GroupRecord) -> str:
    """How many folds finished, then each score's mean and 95% interval, a line each.

    The group's id is left to the "Show:" entry above it.
    """
    if record.folds is None:
        return (
            f"{record.path / GROUP_FILE} is missing or unreadable: no scores "
            f"across folds for its {_plural(record.runs, 'fold run')}."
        )
    if record.complete:
        done = f"All {_plural(record.folds, 'fold')} finished"
    else:
        done = f"{record.finished} of {_plural(record.folds, 'fold')} finished"
    lines = [
        estimate_text(name, record.estimates[name])
        for name in SCORES
        if name in record.estimates
    ]
    if not lines:
        return f"{done}: no scores yet."
    return f"{done}; each score's mean and 95% CI over them:\n" + "\n".join(lines)


class FoldGroupSummary(QLabel):
    """The chosen group's scores across folds (hidden while no group is chosen)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("foldGroupSummary")
        self.setToolTip(SUMMARY_TIP)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setVisible(False)

    def show_group(self, record: GroupRecord | None) -> None:
        """Show ``record``'s summary; None hides the line."""
        self.setText("" if record is None else summary_text(record))
        self.setVisible(record is not None)
        where = "" if record is None else f"\nThe group's folder: {record.path}"
        self.setToolTip(SUMMARY_TIP + where)
