"""Where a sweep's study lives, what it records, and which worker holds a trial.

The study is shared by every worker of a sweep: local processes (``--parallel``)
and other machines (``--join``). Besides Optuna's trials it records the sweep's
plan (the base settings, the search space, the budget, the pruner), so a worker
that joins needs only the study's name and storage.

Storage: by default a journal file in the sweep's folder (Optuna's file lock
makes it safe for several local processes); a ``postgresql://`` URL uses
Optuna's RDB storage with heartbeats, so a worker on another machine that dies
has its trial failed after the grace period and tried again. A local worker
that dies is noticed sooner: every trial records its host and process id, and
the next worker to ask finds the process gone.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import threading
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
from optuna.storages import (
    JournalStorage,
    RDBStorage,
    RetryHeartbeatStaleTrialCallback,
)
from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock
from optuna.trial import FrozenTrial, TrialState

from workbench.core.config import ConfigError, TrainConfig
from workbench.core.runs.folder import runs_dir
from workbench.core.tuning.space import SearchSpace

JOURNAL = "study.journal"
PLAN_KEY = "workbench_plan"  # the study's user attribute holding the plan
WORKER_KEY = "worker"  # a trial's user attribute: {"host": ..., "pid": ...}
RETRY_OF_KEY = "retry_of"  # a retried trial's: the number of the one that died
SURPLUS_KEY = "surplus"  # asked past the budget in a race: not a trial at all
RETRIES = 2  # a trial whose worker died is tried again this often


def heartbeat_seconds() -> tuple[int, int]:
    """(interval, grace) of an RDB worker's sign of life; settable for tests."""
    interval = int(os.environ.get("PTCORE_SWEEP_HEARTBEAT_S", "10"))
    return interval, 3 * interval


@dataclass(frozen=True)
class StudyPlan:
    """What every worker of a sweep trains: recorded in the study itself."""

    base: TrainConfig
    space: SearchSpace
    trials: int
    pruner: str
    seed: int
    nproc: int = 1  # processes each trial trains on

    def to_attr(self) -> dict[str, Any]:
        return {
            "base": self.base.to_dict(),
            "space": self.space.to_raw(),
            "trials": self.trials,
            "pruner": self.pruner,
            "seed": self.seed,
            "nproc": self.nproc,
        }

    @classmethod
    def from_attr(cls, data: Any) -> StudyPlan:
        try:
            return cls(
                TrainConfig.from_dict(dict(data["base"])),
                SearchSpace.parse(data["space"]),
                int(data["trials"]),
                str(data["pruner"]),
                int(data["seed"]),
                int(data.get("nproc", 1)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            problem = f"the study's recorded plan is unreadable: {exc}"
            raise ConfigError(problem) from None


def sweep_folder(study: str) -> Path:
    """Where a study's journal (and notes) live: ``<runs>/sweeps/<study>``."""
    return runs_dir() / "sweeps" / study


def open_storage(study: str, url: str | None) -> optuna.storages.BaseStorage:
    """The journal file of ``study`` when ``url`` is None, else the RDB at ``url``."""
    if url is None:
        folder = sweep_folder(study)
        folder.mkdir(parents=True, exist_ok=True)
        path = str(folder / JOURNAL)
        try:
            return JournalStorage(JournalFileBackend(path, JournalFileOpenLock(path)))
        except Exception as exc:  # a damaged journal: one line, not a traceback
            raise ConfigError(
                f"the study file {path} is damaged: {str(exc).splitlines()[0]}"
            ) from None
    # psycopg (3) is the driver installed; SQLAlchemy's bare scheme means psycopg2.
    driver_url = re.sub(r"^postgresql://", "postgresql+psycopg://", url)
    interval, grace = heartbeat_seconds()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return RDBStorage(
                driver_url,
                heartbeat_interval=interval,
                grace_period=grace,
                heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback(
                    max_retry=RETRIES
                ),
            )
    except Exception as exc:  # sqlalchemy's, psycopg's: one line, not a traceback
        raise ConfigError(
            f"cannot open the study storage {public_url(url)}: "
            f"{str(exc).splitlines()[0]}"
        ) from None


def open_study(
    name: str,
    storage: str | None = None,
    *,
    create: bool = True,
    seed: int = 0,
    pruner: str = "halving",
) -> optuna.Study:
    """The study ``name``, made if ``create`` and it does not exist yet."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if not create and storage is None and not (sweep_folder(name) / JOURNAL).is_file():
        raise ConfigError(f"no study named {name!r} in {sweep_folder(name).parent}")
    sampler = optuna.samplers.TPESampler(seed=seed)
    if create:
        return optuna.create_study(
            study_name=name,
            storage=open_storage(name, storage),
            sampler=sampler,
            pruner=_pruner(pruner),
            direction="maximize",
            load_if_exists=True,
        )
    try:
        return optuna.load_study(
            study_name=name,
            storage=open_storage(name, storage),
            sampler=sampler,
            pruner=_pruner(pruner),
        )
    except KeyError:
        raise ConfigError(f"no study named {name!r}") from None


def public_url(url: str) -> str:
    """``url`` without its password."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def record_plan(study: optuna.Study, plan: StudyPlan) -> None:
    study.set_user_attr(PLAN_KEY, plan.to_attr())


def recorded_plan(study: optuna.Study) -> StudyPlan:
    data = study.user_attrs.get(PLAN_KEY)
    if data is None:
        raise ConfigError(
            f"study {study.study_name!r} was not started by a workbench sweep: "
            "nothing to join"
        )
    return StudyPlan.from_attr(data)


def this_worker() -> dict[str, Any]:
    return {"host": socket.gethostname(), "pid": os.getpid()}


def counted_trials(study: optuna.Study) -> list[optuna.trial.FrozenTrial]:
    """The trials that count towards the budget (not failed, not surplus)."""
    states = (
        TrialState.COMPLETE,
        TrialState.PRUNED,
        TrialState.RUNNING,
        TrialState.WAITING,
    )
    return [
        t
        for t in study.get_trials(deepcopy=False, states=states)
        if not t.user_attrs.get(SURPLUS_KEY)
    ]


def finished_trials(study: optuna.Study) -> int:
    done = (TrialState.COMPLETE, TrialState.PRUNED)
    return sum(1 for t in counted_trials(study) if t.state in done)


def take_trial(study: optuna.Study, budget: int) -> optuna.Trial | None:
    """The next trial this worker trains, or None when the budget is spoken for.

    A trial waiting in the queue (trial 0, a retry) is always taken. Two
    workers that ask at once may both pass the count; the one whose trial is
    past the budget among the lower-numbered ones gives it back as surplus.
    """
    fail_dead_workers(study)
    counted = counted_trials(study)
    waiting = any(t.state == TrialState.WAITING for t in counted)
    if not waiting and len(counted) >= budget:
        return None
    with warnings.catch_warnings():
        # "Heartbeat ... supposed to be used with Study.optimize": the
        # heartbeat is ours (see heartbeat()).
        warnings.simplefilter("ignore", UserWarning)
        trial = study.ask()
    trial.set_user_attr(WORKER_KEY, this_worker())
    if _was_queued(study, trial):
        return trial
    before = [t for t in counted_trials(study) if t.number < trial.number]
    if len(before) >= budget:
        trial.set_user_attr(SURPLUS_KEY, True)
        study.tell(trial, state=TrialState.FAIL)
        return None
    return trial


def _was_queued(study: optuna.Study, trial: optuna.Trial) -> bool:
    """Whether ``trial`` came from the queue: enqueued, or a retry Optuna added."""
    for frozen in study.get_trials(deepcopy=False):
        if frozen.number == trial.number:
            attrs = frozen.system_attrs
            return "fixed_params" in attrs or "failed_trial" in attrs
    return False


def fail_dead_workers(study: optuna.Study) -> list[int]:
    """Fail the running trials whose worker is gone; queue each again.

    A local worker's death is seen at once (its process id is no more); a
    worker on another machine is failed by the RDB storage's heartbeat after
    the grace period, and Optuna's retry callback queues its trial.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fail_stale_trials is "experimental"
        optuna.storages.fail_stale_trials(study)
    host = socket.gethostname()
    failed = []
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        worker = trial.user_attrs.get(WORKER_KEY) or {}
        if worker.get("host") != host or _alive(worker.get("pid")):
            continue
        try:
            study.tell(trial.number, state=TrialState.FAIL)
        except (ValueError, RuntimeError):
            continue  # another worker failed it first
        failed.append(trial.number)
        retries = int(trial.user_attrs.get("retries", 0))
        if retries < RETRIES:
            study.enqueue_trial(
                trial.params,
                user_attrs={RETRY_OF_KEY: trial.number, "retries": retries + 1},
            )
    return failed


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int):
        return True  # not ours to judge
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def heartbeat(study: optuna.Study, trial: optuna.Trial) -> Iterator[None]:
    """While training ``trial``, tell a storage with heartbeats this worker lives."""
    storage = trial.storage  # Optuna wraps an RDBStorage in a cache: ask it
    interval = getattr(storage, "get_heartbeat_interval", lambda: None)()
    if interval is None:
        yield
        return
    trial_id = storage.get_trial_id_from_study_id_trial_number(
        storage.get_study_id_from_name(study.study_name), trial.number
    )
    done = threading.Event()

    def beat() -> None:
        while True:
            storage.record_heartbeat(trial_id)
            if done.wait(interval):
                return

    thread = threading.Thread(target=beat, name="sweep-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def close_study(study: optuna.Study) -> None:
    """Close an RDB storage's connections (a journal file holds none open)."""
    storage = study._storage  # Optuna keeps no public handle on it
    backend = getattr(storage, "_backend", storage)
    if isinstance(backend, RDBStorage):
        backend.remove_session()
        backend.engine.dispose()


def best_of(trials: Iterable[FrozenTrial]) -> FrozenTrial | None:
    """The complete trial with the highest accuracy, or None.

    Never a pruned one: Optuna gives it its last report as value, of fewer epochs.
    """
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    return max(complete, key=lambda t: t.value, default=None)


def best_trial(name: str, storage: str | None) -> FrozenTrial | None:
    """The best trial of study ``name`` (:func:`best_of`)."""
    study = open_study(name, storage, create=False)
    try:
        return best_of(study.get_trials(deepcopy=False))
    finally:
        close_study(study)


def use_plan_sampling(study: optuna.Study, plan: StudyPlan, worker: int) -> None:
    """The plan's pruner, and its seed varied by ``worker`` for the sampler."""
    study.sampler = optuna.samplers.TPESampler(seed=plan.seed + worker)
    study.pruner = _pruner(plan.pruner)


def param_text(value: object) -> str:
    """A trial's value as people read it: rates in e-notation."""
    return f"{value:.2e}" if isinstance(value, float) else str(value)


def _pruner(name: str) -> optuna.pruners.BasePruner:
    """Rungs after epochs 1, 4, 16...: a quarter of a rung's trials go on.

    Optuna's own reduction factor (4); with 3, a 12-trial digits sweep spent
    over 45% of the full runs' epochs on 1 seed in 6 (bench/sweep_halving_bench).
    """
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=1)
    if name == "none":
        return optuna.pruners.NopPruner()
    return optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=4)
