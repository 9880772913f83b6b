"""A sweep: Optuna proposes the trials, each one trains as an ordinary run.

Built on Optuna's ask-and-tell interface: :func:`run_sweep` asks the study for
a trial, trains it through a :class:`~workbench.core.session.Session` like any
run (its own run folder and checkpoint; ``run.json`` says which sweep and
trial), reports the validation accuracy after every epoch, and tells the
result. Pruning is decided here, in the process that watches the run, after an
epoch: a pruned run stops there, keeps its checkpoint and reads "pruned".

Several workers can share one study (see :mod:`~workbench.core.tuning.study`):
:func:`start_sweep` creates it and records the plan, :func:`join_sweep` reads
the plan back, and :func:`run_trials` is one worker's loop.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import optuna
from optuna.trial import TrialState

from workbench.core import events as E
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.session import Session
from workbench.core.train.engine import TrainControl
from workbench.core.tuning.job_trial import train_trial_as_job
from workbench.core.tuning.space import SearchSpace
from workbench.core.tuning.study import (
    StudyPlan,
    heartbeat,
    open_study,
    public_url,
    record_plan,
    recorded_plan,
    take_trial,
    use_plan_sampling,
)

SWEEP_KEY = "sweep"  # run.json: {"study": ..., "trial": n}
PRUNED = "pruned"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True)
class SweepSettings:
    """What a sweep searches, for how many trials, and where its study lives."""

    space: SearchSpace
    trials: int
    study: str
    storage: str | None = None  # None: the journal file in the sweep's folder
    seed: int = 0
    pruner: str = "halving"  # or "hyperband", "none"
    nproc: int = 1  # processes each trial trains on (torchrun when over 1)

    def check(self) -> None:
        """Raise ConfigError naming what cannot work."""
        if self.trials < 1:
            raise ConfigError(f"--trials must be 1 or more, not {self.trials}")
        if not _NAME.fullmatch(self.study):
            raise ConfigError(
                f"study name {self.study!r}: letters, digits, '-', '_' and '.', "
                "up to 64"
            )
        if self.nproc < 1:
            raise ConfigError(f"--nproc must be 1 or more, not {self.nproc}")
        if self.pruner not in ("halving", "hyperband", "none"):
            raise ConfigError(f"pruner {self.pruner!r}: halving, hyperband or none")
        if self.storage is not None and not self.storage.startswith("postgresql"):
            raise ConfigError(
                f"--storage {public_url(self.storage)}: give a postgresql:// URL (the "
                "default is a file in the sweep's folder)"
            )


@dataclass(frozen=True)
class TrialDone:
    """One trial's outcome, as the ledger and the study have it."""

    number: int
    params: dict[str, object]
    state: str  # "complete", "pruned", "failed", "stopped"
    value: float | None  # the last validation accuracy
    epochs: int  # epochs trained
    run_folder: Path | None


def start_sweep(base: TrainConfig, settings: SweepSettings) -> optuna.Study:
    """The study made (or reopened) with its plan recorded; trial 0 queued."""
    settings.check()
    study = open_study(
        settings.study, settings.storage, seed=settings.seed, pruner=settings.pruner
    )
    plan = StudyPlan(
        base,
        settings.space,
        settings.trials,
        settings.pruner,
        settings.seed,
        settings.nproc,
    )
    record_plan(study, plan)
    if not study.trials:
        study.enqueue_trial(settings.space.current(base), skip_if_exists=True)
    return study


def join_sweep(
    name: str, storage: str | None, *, worker: int
) -> tuple[optuna.Study, StudyPlan]:
    """A study another worker started, and its plan; ``worker`` varies the seed.

    Workers with one seed would draw the same random trials side by side.
    """
    study = open_study(name, storage, create=False)
    plan = recorded_plan(study)
    use_plan_sampling(study, plan, worker)
    return study, plan


def run_sweep(
    base: TrainConfig,
    settings: SweepSettings,
    *,
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[TrialDone]:
    """Start the study and train its trials here until the budget is spoken for."""
    study = start_sweep(base, settings)
    plan = recorded_plan(study)
    yield from run_trials(study, plan, stop=stop)


def run_trials(
    study: optuna.Study,
    plan: StudyPlan,
    *,
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[TrialDone]:
    """One worker: ask, train and tell until the study holds ``plan.trials``.

    Trial 0 of a new study is the base settings. Yields each trial as it ends.
    ``stop()`` (checked at every logged step) stops the trial in progress
    after its batch, keeps it as a stopped run, and ends this worker.
    """
    while not stop():
        trial = take_trial(study, plan.trials)
        if trial is None:
            return
        params = plan.space.suggest(trial)
        try:
            cfg = plan.space.apply(plan.base, params)
        except ConfigError as exc:
            study.tell(trial, state=TrialState.FAIL)
            yield TrialDone(trial.number, params, "failed", None, 0, None)
            raise ConfigError(f"trial {trial.number}: {exc}") from exc
        with heartbeat(study, trial):
            if plan.nproc > 1:
                done = _train_trial_job(cfg, trial, study.study_name, plan.nproc, stop)
            else:
                done = _train_trial(cfg, trial, study.study_name, stop)
        if done.state == "complete":
            study.tell(trial, done.value)
        elif done.state == PRUNED:
            study.tell(trial, state=TrialState.PRUNED)
        else:
            study.tell(trial, state=TrialState.FAIL)
        yield done
        if done.state == "stopped":
            return


def _train_trial_job(
    cfg: TrainConfig,
    trial: optuna.Trial,
    study: str,
    nproc: int,
    stop: Callable[[], bool],
) -> TrialDone:
    label = {"study": study, "trial": trial.number}
    state, value, epochs, folder = train_trial_as_job(
        cfg, trial, nproc, label=label, stop=stop
    )
    return TrialDone(trial.number, dict(trial.params), state, value, epochs, folder)


def _train_trial(
    cfg: TrainConfig, trial: optuna.Trial, study: str, stop: Callable[[], bool]
) -> TrialDone:
    control = TrainControl()  # its own: a pruned trial's stop ends it alone
    session = Session(origin=f"sweep {study}")
    plan = session.plan(cfg)
    session.begin(plan)
    folder = session.folder
    if folder is not None:
        folder.update(**{SWEEP_KEY: {"study": study, "trial": trial.number}})
    result, value, epochs, pruned = None, None, 0, False
    for event in session.train(plan, control):
        if stop():
            control.request_stop()
        if isinstance(event, E.EpochMetrics):
            value = event.val_accuracy
            epochs = event.epoch + 1
            trial.report(value, step=epochs)
            if trial.should_prune():
                pruned = True
                control.request_stop()  # after this epoch's last batch: kept
        elif isinstance(event, E.TrainResult):
            result = event
    session.finish(result)
    params = dict(trial.params)
    run_folder = folder.path if folder is not None else None
    if pruned:
        if folder is not None:
            folder.update(status=PRUNED)
        return TrialDone(trial.number, params, PRUNED, value, epochs, run_folder)
    if result is None or result.stopped:
        return TrialDone(trial.number, params, "stopped", value, epochs, run_folder)
    return TrialDone(
        trial.number, params, "complete", result.val_accuracy, epochs, run_folder
    )
