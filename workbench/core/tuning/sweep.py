"""A sweep: Optuna proposes the trials, each one trains as an ordinary run.

Built on Optuna's ask-and-tell interface: :func:`run_sweep` asks the study for
a trial, trains it through a :class:`~workbench.core.session.Session` like any
run (its own run folder and checkpoint; ``run.json`` says which sweep and
trial), reports the validation accuracy after every epoch, and tells the
result. Pruning is decided here, in the process that watches the run, after an
epoch: a pruned run stops there, keeps its checkpoint and reads "pruned".

The study lives in a storage several processes share: by default a journal
file in the sweep's folder (Optuna's file lock makes it safe for local
workers); a ``postgresql://`` URL uses Optuna's RDB storage with heartbeats, so
workers on other machines can join and a killed worker's trial is failed and
tried again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import optuna
from optuna.storages import JournalStorage, RDBStorage, RetryFailedTrialCallback
from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock
from optuna.trial import TrialState

from workbench.core import events as E
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.runs.folder import runs_dir
from workbench.core.session import Session
from workbench.core.train.engine import TrainControl
from workbench.core.tuning.space import SearchSpace

SWEEP_KEY = "sweep"  # run.json: {"study": ..., "trial": n}
PRUNED = "pruned"
JOURNAL = "study.journal"
HEARTBEAT_S = 10  # an RDB worker's sign of life; a silent one's trial fails
GRACE_S = 30
RETRIES = 2  # a failed trial (its worker killed) is tried again this often
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

    def check(self) -> None:
        """Raise ConfigError naming what cannot work."""
        if self.trials < 1:
            raise ConfigError(f"--trials must be 1 or more, not {self.trials}")
        if not _NAME.fullmatch(self.study):
            raise ConfigError(
                f"study name {self.study!r}: letters, digits, '-', '_' and '.', "
                "up to 64"
            )
        if self.pruner not in ("halving", "hyperband", "none"):
            raise ConfigError(f"pruner {self.pruner!r}: halving, hyperband or none")
        if self.storage is not None and not self.storage.startswith("postgresql"):
            raise ConfigError(
                f"--storage {_public(self.storage)}: give a postgresql:// URL (the "
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


def sweep_folder(study: str) -> Path:
    """Where a study's journal (and notes) live: ``<runs>/sweeps/<study>``."""
    return runs_dir() / "sweeps" / study


def open_study(settings: SweepSettings, *, create: bool = True) -> optuna.Study:
    """The study, made if ``create`` and it does not exist yet."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    journal = sweep_folder(settings.study) / JOURNAL
    if not create and settings.storage is None and not journal.is_file():
        raise ConfigError(
            f"no study named {settings.study!r} in {journal.parent.parent}"
        )
    storage = _storage(settings)
    sampler = optuna.samplers.TPESampler(seed=settings.seed)
    if create:
        return optuna.create_study(
            study_name=settings.study,
            storage=storage,
            sampler=sampler,
            pruner=_pruner(settings.pruner),
            direction="maximize",
            load_if_exists=True,
        )
    try:
        return optuna.load_study(
            study_name=settings.study,
            storage=storage,
            sampler=sampler,
            pruner=_pruner(settings.pruner),
        )
    except KeyError:
        raise ConfigError(f"no study named {settings.study!r}") from None


def run_sweep(
    base: TrainConfig,
    settings: SweepSettings,
    *,
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[TrialDone]:
    """Ask, train and tell until the study has ``settings.trials`` finished trials.

    Trial 0 of a new study is ``base`` itself. Yields each trial as it ends.
    ``stop()`` (checked at every logged step) stops the trial in progress
    after its batch, keeps it as a stopped run, and ends the sweep.
    """
    settings.check()
    study = open_study(settings)
    if not study.trials:
        study.enqueue_trial(settings.space.current(base), skip_if_exists=True)
    while _finished(study) < settings.trials and not stop():
        trial = study.ask()
        params = settings.space.suggest(trial)
        try:
            cfg = settings.space.apply(base, params)
        except ConfigError as exc:
            study.tell(trial, state=TrialState.FAIL)
            yield TrialDone(trial.number, params, "failed", None, 0, None)
            raise ConfigError(f"trial {trial.number}: {exc}") from exc
        done = _train_trial(cfg, trial, settings.study, stop)
        if done.state == "complete":
            study.tell(trial, done.value)
        elif done.state == PRUNED:
            study.tell(trial, state=TrialState.PRUNED)
        else:
            study.tell(trial, state=TrialState.FAIL)
        yield done
        if done.state == "stopped":
            return


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


def _finished(study: optuna.Study) -> int:
    done = (TrialState.COMPLETE, TrialState.PRUNED)
    return len(study.get_trials(deepcopy=False, states=done))


def _storage(settings: SweepSettings) -> optuna.storages.BaseStorage:
    if settings.storage is None:
        folder = sweep_folder(settings.study)
        folder.mkdir(parents=True, exist_ok=True)
        path = str(folder / JOURNAL)
        return JournalStorage(JournalFileBackend(path, JournalFileOpenLock(path)))
    # psycopg (3) is the driver installed; SQLAlchemy's bare scheme means psycopg2.
    url = re.sub(r"^postgresql://", "postgresql+psycopg://", settings.storage)
    try:
        return RDBStorage(
            url,
            heartbeat_interval=HEARTBEAT_S,
            grace_period=GRACE_S,
            failed_trial_callback=RetryFailedTrialCallback(max_retry=RETRIES),
        )
    except Exception as exc:  # sqlalchemy's, psycopg's: one line, not a traceback
        raise ConfigError(
            f"cannot open the study storage {_public(settings.storage)}: "
            f"{str(exc).splitlines()[0]}"
        ) from None


def _pruner(name: str) -> optuna.pruners.BasePruner:
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=1)
    if name == "none":
        return optuna.pruners.NopPruner()
    return optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3)


def _public(url: str) -> str:
    """``url`` without its password."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)
