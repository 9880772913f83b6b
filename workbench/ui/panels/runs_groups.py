"""The Runs tab's "Show:" choice: every run, the runs outside sweeps, or one sweep.

A 200-trial sweep floods the runs list; :class:`SweepGroupCombo` lets the user
see one sweep's trials on their own (or everything but sweeps). Its entries come
from :func:`group_entries` over the listed runs and :func:`filter_runs` keeps
the runs of a choice. A choice is ``None`` (all runs), :data:`OUTSIDE` (runs no
sweep trained) or a study's name.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtWidgets import QComboBox, QWidget

from workbench.core.runs.listing import RunSummary

ALL_RUNS: str | None = None
OUTSIDE = ""  # a run outside sweeps has no sweep label: "" stands for them
GROUP_TIP = (
    "Show every run, only the runs outside sweeps, or one sweep's trials "
    "(in trial order); each sweep says how many trials it has and its best "
    "validation accuracy"
)


def study_of(run: RunSummary) -> str:
    """The study ``run`` is a trial of ("" outside sweeps): ``"s #7"`` gives ``"s"``."""
    return run.sweep.rpartition(" #")[0]


def is_study(choice: str | None) -> bool:
    """Whether ``choice`` is one sweep (its trials sort in trial order)."""
    return choice is not ALL_RUNS and choice != OUTSIDE


def _sweep_text(study: str, trials: list[RunSummary]) -> str:
    """``"Sweep s: 12 trials, best 97.31%"``; "—" when no trial has an accuracy."""
    found = [r.best_val_accuracy for r in trials if r.best_val_accuracy is not None]
    best = f"{100 * max(found):.2f}%" if found else "—"
    count = f"{len(trials)} trial" + ("" if len(trials) == 1 else "s")
    return f"Sweep {study}: {count}, best {best}"


def group_entries(runs: Iterable[RunSummary]) -> list[tuple[str, str | None]]:
    """The combo's (text, choice) entries: all, outside sweeps, each sweep by name.

    A run whose sweep label has no study name (a hand-edited run.json) gets no
    entry of its own: it would read as "outside sweeps".
    """
    studies: dict[str, list[RunSummary]] = {}
    for run in runs:
        if study_of(run):
            studies.setdefault(study_of(run), []).append(run)
    return [("All runs", ALL_RUNS), ("Runs outside sweeps", OUTSIDE)] + [
        (_sweep_text(study, studies[study]), study) for study in sorted(studies)
    ]


def filter_runs(runs: Iterable[RunSummary], choice: str | None) -> list[RunSummary]:
    """The runs ``choice`` shows, in the order given."""
    if choice is ALL_RUNS:
        return list(runs)
    if choice == OUTSIDE:
        return [r for r in runs if not r.sweep]
    return [r for r in runs if r.sweep and study_of(r) == choice]


class SweepGroupCombo(QComboBox):
    """Which runs the table lists; refilled quietly, keeping the choice by name."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runsGroupCombo")
        self.setToolTip(GROUP_TIP)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._entries: list[tuple[str, str | None]] = []
        self.set_runs([])

    def choice(self) -> str | None:
        """The chosen group: None (all runs), :data:`OUTSIDE` or a study's name."""
        index = self.currentIndex()
        return self._entries[index][1] if 0 <= index < len(self._entries) else None

    def set_runs(self, runs: list[RunSummary]) -> None:
        """Entries for ``runs``, without a change signal; a vanished sweep: all runs.

        Hidden while no run belongs to a sweep (the choice could change nothing).
        """
        entries = group_entries(runs)
        choices = [choice for _, choice in entries]
        if choices == [choice for _, choice in self._entries]:
            # Only counts or accuracies changed (a trial's epoch): an open
            # popup stays as it is.
            for index, (text, _) in enumerate(entries):
                self.setItemText(index, text)
        else:
            kept = self.choice()
            self.blockSignals(True)  # the list changed, not the user's choice
            try:
                self.clear()
                for text, choice in entries:
                    self.addItem(text, choice)
                self.setCurrentIndex(choices.index(kept) if kept in choices else 0)
            finally:
                self.blockSignals(False)
        self._entries = entries
        self.setVisible(len(entries) > 2)
