"""Where a sweep stands: trials done, the best so far, the time left.

Read from the study alone, so it answers for a sweep this process runs, one
its workers run in the background, and one left unfinished when the window
closed (:func:`local_studies` finds those).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from optuna.trial import FrozenTrial, TrialState

from workbench.core.config import ConfigError
from workbench.core.runs.folder import runs_dir
from workbench.core.tuning.study import (
    JOURNAL,
    SURPLUS_KEY,
    StudyPlan,
    best_of,
    close_study,
    open_study,
    recorded_plan,
)


@dataclass(frozen=True)
class SweepProgress:
    """A study's trials and what they add up to."""

    study: str
    plan: StudyPlan
    trials: list[FrozenTrial] = field(default_factory=list)  # surplus left out
    now: dt.datetime | None = None

    def count(self, *states: TrialState) -> int:
        return sum(1 for t in self.trials if t.state in states)

    @property
    def finished(self) -> int:
        return self.count(TrialState.COMPLETE, TrialState.PRUNED)

    @property
    def training(self) -> int:
        return self.count(TrialState.RUNNING)

    @property
    def done(self) -> bool:
        return self.finished >= self.plan.trials

    @property
    def best(self) -> FrozenTrial | None:
        return best_of(self.trials)

    def seconds_left(self) -> float | None:
        """At the pace so far: time since the first trial began, per finished one."""
        starts = [t.datetime_start for t in self.trials if t.datetime_start]
        if not self.finished or not starts or self.now is None:
            return None
        elapsed = (self.now - min(starts)).total_seconds()
        return max(0.0, elapsed / self.finished * (self.plan.trials - self.finished))

    def line(self) -> str:
        """``5 of 12 trials finished (2 pruned), 2 training; best 97.5% …``."""
        pruned = self.count(TrialState.PRUNED)
        parts = [f"{self.finished} of {self.plan.trials} trials finished"]
        if pruned:
            parts[0] += f" ({pruned} pruned)"
        if self.training:
            parts.append(f"{self.training} training")
        best = self.best
        if best is not None:
            parts.append(f"best so far {best.value:.1%} (trial {best.number})")
        left = self.seconds_left()
        if left is not None and not self.done:
            minutes, seconds = divmod(round(left), 60)
            parts.append(f"about {minutes}:{seconds:02d} left")
        return "; ".join(parts)


def read_progress(study: str, storage: str | None = None) -> SweepProgress:
    """The study's progress now; ConfigError if it cannot be read."""
    opened = open_study(study, storage, create=False)
    try:
        plan = recorded_plan(opened)
        trials = [
            t
            for t in opened.get_trials(deepcopy=False)
            if not t.user_attrs.get(SURPLUS_KEY)
        ]
    finally:
        close_study(opened)
    return SweepProgress(study, plan, trials, dt.datetime.now())


def local_studies() -> list[SweepProgress]:
    """Every sweep kept in this machine's runs folder, newest first."""
    folder = runs_dir() / "sweeps"
    if not folder.is_dir():
        return []
    journals = sorted(
        folder.glob(f"*/{JOURNAL}"), key=lambda p: p.stat().st_mtime, reverse=True
    )
    found = []
    for journal in journals:
        try:
            found.append(read_progress(journal.parent.name))
        except ConfigError:
            continue  # damaged, or not a workbench sweep: `sweep show` says why
    return found
