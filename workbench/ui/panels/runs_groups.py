"""The Runs tab's "Show:" choice: every run, the runs outside groups, or one group.

A 200-trial sweep floods the runs list, and a 10-fold cross-validation adds ten
runs at a time; :class:`RunGroupCombo` lets the user see one sweep's trials or
one cross-validation's folds on their own (or every run outside them). Its
entries come from :func:`group_entries` over the listed runs and
:func:`filter_runs` keeps the runs of a choice. A choice is ``None`` (all runs),
:data:`OUTSIDE` (runs of no sweep and no cross-validation), a study's name, or a
:class:`CrossValidation`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from PySide6.QtWidgets import QComboBox, QWidget

from workbench.core.runs.listing import RunSummary
from workbench.ui.panels.runs_folds import GroupRecord, entry_text


@dataclass(frozen=True, slots=True)
class CrossValidation:
    """The choice of one cross-validation group's fold runs (never a study name)."""

    group: str


Choice = str | CrossValidation | None
ALL_RUNS: Choice = None
OUTSIDE = ""  # a run outside sweeps has no sweep label: "" stands for them
GROUP_TIP = (
    "Show every run, only the runs outside sweeps and cross-validations, one "
    "sweep's trials (in trial order) or one cross-validation's folds (in fold "
    "order); a sweep says how many trials it has and its best validation "
    "accuracy, a cross-validation its folds and their mean accuracy ± the 95% "
    "confidence interval"
)


def study_of(run: RunSummary) -> str:
    """The study ``run`` is a trial of ("" outside sweeps): ``"s #7"`` gives ``"s"``."""
    return run.sweep.rpartition(" #")[0]


def is_study(choice: Choice) -> bool:
    """Whether ``choice`` is one sweep (its trials sort in trial order)."""
    return isinstance(choice, str) and choice != OUTSIDE


def in_own_order(choice: Choice) -> bool:
    """Whether ``choice`` lists in its own order: a sweep's trials, a group's folds."""
    return is_study(choice) or isinstance(choice, CrossValidation)


def _sweep_text(study: str, trials: list[RunSummary]) -> str:
    """``"Sweep s: 12 trials, best 97.31%"``; "—" when no trial has an accuracy."""
    found = [r.best_val_accuracy for r in trials if r.best_val_accuracy is not None]
    best = f"{100 * max(found):.2f}%" if found else "—"
    count = f"{len(trials)} trial" + ("" if len(trials) == 1 else "s")
    return f"Sweep {study}: {count}, best {best}"


def _outside_text(sweeps: bool, groups: bool) -> str:
    """The entry of the runs outside whichever kinds of group are listed."""
    listed = (("sweeps", sweeps), ("cross-validations", groups))
    kinds = [kind for kind, found in listed if found]
    return "Runs outside " + (" and ".join(kinds) or "sweeps")


def group_entries(
    runs: Iterable[RunSummary], groups: Mapping[str, GroupRecord] | None = None
) -> list[tuple[str, Choice]]:
    """The combo's (text, choice) entries: all, outside, each sweep, each group.

    Sweeps by name, then cross-validations newest first (their ids begin with
    the time). ``groups``: the records of the fold runs' groups
    (:func:`~workbench.ui.panels.runs_folds.read_groups`). A run whose sweep
    label has no study name (a hand-edited run.json) gets no entry of its own:
    it would read as "outside sweeps".
    """
    studies: dict[str, list[RunSummary]] = {}
    for run in runs:
        if study_of(run):
            studies.setdefault(study_of(run), []).append(run)
    records = sorted((groups or {}).values(), key=lambda g: g.id, reverse=True)
    return [
        ("All runs", ALL_RUNS),
        (_outside_text(bool(studies), bool(records)), OUTSIDE),
        *((_sweep_text(study, studies[study]), study) for study in sorted(studies)),
        *((entry_text(g), CrossValidation(g.id)) for g in records),
    ]


def filter_runs(runs: Iterable[RunSummary], choice: Choice) -> list[RunSummary]:
    """The runs ``choice`` shows, in the order given."""
    if choice is ALL_RUNS:
        return list(runs)
    if isinstance(choice, CrossValidation):
        return [r for r in runs if r.fold_group == choice.group]
    if choice == OUTSIDE:
        return [r for r in runs if not r.sweep and not r.fold_group]
    return [r for r in runs if r.sweep and study_of(r) == choice]


class RunGroupCombo(QComboBox):
    """Which runs the table lists; refilled quietly, keeping the choice by name."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runsGroupCombo")
        self.setToolTip(GROUP_TIP)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._entries: list[tuple[str, Choice]] = []
        self._groups: dict[str, GroupRecord] = {}
        self.set_runs([])

    def choice(self) -> Choice:
        """The chosen group: None (all runs), :data:`OUTSIDE`, a study's name or
        a :class:`CrossValidation`."""
        index = self.currentIndex()
        return self._entries[index][1] if 0 <= index < len(self._entries) else None

    def chosen_group(self) -> GroupRecord | None:
        """The chosen cross-validation's record (None: no group is chosen)."""
        choice = self.choice()
        if isinstance(choice, CrossValidation):
            return self._groups.get(choice.group)
        return None

    def set_runs(
        self, runs: list[RunSummary], groups: Mapping[str, GroupRecord] | None = None
    ) -> None:
        """Entries for ``runs``, without a change signal; a vanished group: all runs.

        ``groups``: the records of the fold runs' groups, read by the caller
        once per refresh. Hidden while no run belongs to a sweep or a
        cross-validation (the choice could change nothing).
        """
        self._groups = dict(groups or {})
        entries = group_entries(runs, self._groups)
        choices = [choice for _, choice in entries]
        if choices == [choice for _, choice in self._entries]:
            # Only counts or accuracies changed (a trial's epoch, a fold's
            # scores): an open popup stays as it is.
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
