"""Several workers of one sweep: local ones, joined ones, and ones that die."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import optuna
import pytest
from optuna.trial import TrialState

from workbench.cli.commands import main
from workbench.core.config import TrainConfig
from workbench.core.runs.folder import runs_dir
from workbench.core.runs.listing import list_runs
from workbench.core.tuning.space import SearchSpace
from workbench.core.tuning.study import (
    RETRY_OF_KEY,
    SURPLUS_KEY,
    WORKER_KEY,
    close_study,
    counted_trials,
    heartbeat,
    open_storage,
    take_trial,
)
from workbench.core.tuning.sweep import SweepSettings, join_sweep, start_sweep
from workbench.core.tuning.workers import threads_per_worker, worker_command

BASE = TrainConfig(model="mlp", epochs=1, batch_size=256, log_every=5, lr=0.006)
SPACE = SearchSpace.parse({"lr": [1e-3, 1e-1]})


def _reaped() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def _study(name: str, trials: int, storage: str | None = None) -> optuna.Study:
    return start_sweep(BASE, SweepSettings(SPACE, trials, name, storage))


def test_a_trial_whose_local_worker_died_fails_and_is_taken_again():
    study = _study("dead", trials=3)
    first = take_trial(study, 3)
    assert first is not None
    assert first.number == 0
    first.suggest_float("lr", 1e-3, 1e-1, log=True)
    first.set_user_attr(WORKER_KEY, {"host": os.uname().nodename, "pid": _reaped()})
    again = take_trial(study, 3)
    assert again is not None
    trials = {t.number: t for t in study.get_trials(deepcopy=False)}
    assert trials[0].state == TrialState.FAIL
    assert trials[again.number].user_attrs[RETRY_OF_KEY] == 0
    assert again.suggest_float("lr", 1e-3, 1e-1, log=True) == trials[0].params["lr"]
    # A worker of another machine is not judged by process ids here.
    again.set_user_attr(WORKER_KEY, {"host": "elsewhere", "pid": _reaped()})
    third = take_trial(study, 3)
    assert third is not None
    assert study.get_trials(deepcopy=False)[again.number].state == TrialState.RUNNING
    assert third.user_attrs[WORKER_KEY] == {
        "host": os.uname().nodename,
        "pid": os.getpid(),
    }


def test_the_budget_counts_running_trials_and_a_racing_ask_is_given_back(
    monkeypatch,
):
    study = _study("race", trials=2)
    assert take_trial(study, 2) is not None  # trial 0, queued
    real_ask = study.ask

    def another_worker_asks_first(*args, **kwargs):
        real_ask()  # another worker's trial, taken between our count and ask
        return real_ask(*args, **kwargs)

    monkeypatch.setattr(study, "ask", another_worker_asks_first)
    assert take_trial(study, 2) is None
    surplus = study.get_trials(deepcopy=False)[-1]
    assert surplus.state == TrialState.FAIL
    assert surplus.user_attrs[SURPLUS_KEY] is True
    assert [t.number for t in counted_trials(study)] == [0, 1]
    monkeypatch.undo()
    assert take_trial(study, 2) is None  # two running: the budget is spoken for


def test_a_joined_worker_reads_the_plan_from_the_study():
    study = _study("plan", trials=5)
    joined, plan = join_sweep("plan", None, worker=3)
    assert plan.base == BASE
    assert plan.space == SPACE
    assert (plan.trials, plan.pruner, plan.seed) == (5, "halving", BASE.seed)
    assert joined.study_name == study.study_name
    # Another seed: side by side, two workers would draw the same trials.
    assert joined.sampler._rng.rng.random() != study.sampler._rng.rng.random()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--join", "nobody"], "no study named 'nobody'"),
        (["--parallel", "0", "--sweep-lr", "1e-3", "1e-1"], "--parallel must be 1"),
        (
            ["--join", "x", "--storage", "postgresql://u:secret@127.0.0.1:1/db"],
            "cannot open the study storage postgresql://u:***@127.0.0.1:1/db",
        ),
    ],
)
def test_joining_what_cannot_be_joined_is_one_line(capsys, flags, message):
    assert main(["sweep", "--quiet", *flags]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "secret" not in err
    assert "Traceback" not in err


def test_a_study_not_started_by_a_sweep_cannot_be_joined(capsys):
    optuna.create_study(
        study_name="foreign",
        storage=open_storage("foreign", None),  # the journal file, no plan in it
    )
    assert main(["sweep", "--join", "foreign"]) == 2
    assert "was not started by a workbench sweep" in capsys.readouterr().err


def test_a_damaged_study_file_is_one_line(capsys):
    _study("damaged", trials=1)
    journal = next((runs_dir() / "sweeps" / "damaged").glob("*.journal"))
    journal.write_bytes(b"\x00not a journal\n{]")
    assert main(["sweep", "show", "damaged"]) == 2
    err = capsys.readouterr().err
    assert "damaged" in err
    assert "Traceback" not in err


def test_a_silent_remote_workers_trial_fails_after_the_grace_and_runs_again(
    postgres_url, monkeypatch
):
    monkeypatch.setenv("PTCORE_SWEEP_HEARTBEAT_S", "1")
    study = _study("remote", trials=3, storage=postgres_url)
    try:
        remote = take_trial(study, 3)
        remote.suggest_float("lr", 1e-3, 1e-1, log=True)
        remote.set_user_attr(WORKER_KEY, {"host": "another-machine", "pid": 1})
        mine = take_trial(study, 3)
        # Both beat once; only this worker's heartbeat goes on.
        with heartbeat(study, remote):
            pass
        with heartbeat(study, mine):
            time.sleep(4.5)  # past the grace (3 heartbeats)
            again = take_trial(study, 3)
        assert again is not None
        trials = study.get_trials(deepcopy=False)
        assert trials[mine.number].state == TrialState.RUNNING
        assert trials[remote.number].state == TrialState.FAIL
        retried = trials[again.number]
        assert retried.system_attrs["failed_trial"] == remote.number
        assert retried.params["lr"] == trials[remote.number].params["lr"]
    finally:
        close_study(study)


def test_two_local_workers_and_a_joined_one_finish_the_sweep_despite_a_kill(
    postgres_url, tmp_path
):
    # The joined worker is paused while this machine's workers start (its trials
    # are quick: it could take them all first); a heartbeat grace of 90 s
    # outlasts the pause.
    env = {**os.environ, "PTCORE_SWEEP_HEARTBEAT_S": "30", "PYTHONUNBUFFERED": "1"}
    base = TrainConfig(model="small-cnn", epochs=2, batch_size=64)
    study = start_sweep(base, SweepSettings(SPACE, 12, "many", postgres_url))
    workbench = [sys.executable, "-m", "workbench", "sweep"]
    # The joined worker first, as from a machine that was ready sooner: this
    # machine's workers must share the study with it, not race it.
    with open(tmp_path / "joined.txt", "w") as out:
        joined = subprocess.Popen(
            [*workbench, "--join", "many", "--storage", postgres_url],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    flags = ["--model", "small-cnn", "--epochs", "2", "--batch-size", "64"]
    sweep = ["--study", "many", "--storage", postgres_url, "--trials", "12"]
    logs = (tmp_path / "local.txt", tmp_path / "joined.txt")
    with open(tmp_path / "local.txt", "w") as out:
        _wait_for(
            lambda: _training(study, {joined.pid}), "the joined worker's trial", logs
        )
        joined.send_signal(signal.SIGSTOP)
        local = subprocess.Popen(
            [
                *workbench,
                *flags,
                *sweep,
                "--sweep-lr",
                "1e-3",
                "1e-1",
                "--parallel",
                "2",
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        local_workers = _not({local.pid, joined.pid})
        try:
            victim = _wait_for(
                lambda: _training(study, local_workers), "a local trial", logs, 60
            )
        finally:
            joined.send_signal(signal.SIGCONT)
        os.kill(victim.user_attrs[WORKER_KEY]["pid"], signal.SIGKILL)
        assert local.wait(timeout=300) == 1  # one of its workers was killed
        assert joined.wait(timeout=120) == 0
    finally:
        for process in (local, joined):
            if process.poll() is None:
                process.kill()
        trials = study.get_trials(deepcopy=False)
        close_study(study)
    out = (tmp_path / "local.txt").read_text() + (tmp_path / "joined.txt").read_text()
    finished = [
        t for t in trials if t.state in (TrialState.COMPLETE, TrialState.PRUNED)
    ]
    assert len(finished) == 12, out
    assert trials[victim.number].state == TrialState.FAIL
    retry = [t for t in finished if _retry_of(t) == victim.number]
    assert len(retry) == 1
    assert retry[0].params == victim.params
    # No trial ran twice: each finished trial's settings are its own.
    assert len({t.params["lr"] for t in finished}) == 12
    workers = {t.user_attrs[WORKER_KEY]["pid"] for t in finished}
    killed = victim.user_attrs[WORKER_KEY]["pid"]
    assert joined.pid in workers, workers
    assert workers - {joined.pid, killed}, workers  # the other local worker
    # Every trial is a run of the ledger, the killed one left "interrupted".
    runs = {r.sweep: r for r in list_runs() if r.sweep.startswith("many #")}
    assert set(runs) == {f"many #{t.number}" for t in [*finished, victim]}
    assert runs[f"many #{victim.number}"].status == "interrupted"
    for trial in finished:
        info = json.loads(
            (runs[f"many #{trial.number}"].folder.path / "run.json").read_text()
        )
        assert info["config"]["lr"] == pytest.approx(trial.params["lr"])
    assert "best: trial" in out


def _retry_of(trial: optuna.trial.FrozenTrial) -> int | None:
    """The trial ``trial`` runs again: seen dead here, or silent (Optuna's retry)."""
    return trial.user_attrs.get(RETRY_OF_KEY, trial.system_attrs.get("failed_trial"))


def _wait_for(probe, what: str, logs=(), timeout: float = 120.0):
    """What ``probe`` finds first; on timeout, the end of each of ``logs``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.1)
    tails = "".join(f"\n--- {p.name}:\n{p.read_text()[-3000:]}" for p in logs)
    raise AssertionError(f"no {what} within {timeout:.0f} s{tails}")


def _not(pids: set[int]):
    return lambda pid: pid not in pids


def _training(study: optuna.Study, worker_is):
    """A trial being trained by a worker ``worker_is`` accepts: its run folder made.

    ``worker_is`` is a set of process ids, or a test of one.
    """
    accept = worker_is.__contains__ if isinstance(worker_is, set) else worker_is
    training = {r.sweep for r in list_runs() if r.status == "running"}
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        worker = trial.user_attrs.get(WORKER_KEY)
        if worker and accept(worker["pid"]) and f"many #{trial.number}" in training:
            return trial
    return None


def test_each_local_worker_gets_an_equal_share_of_the_cores(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert [threads_per_worker(n) for n in (1, 2, 3, 8, 16)] == [8, 4, 2, 1, 1]
    assert worker_command("s", None, 1)[-5:] == [
        "sweep",
        "--join",
        "s",
        "--worker",
        "1",
    ]


def test_ctrl_c_stops_every_local_worker_after_its_batch_and_keeps_what_finished(
    tmp_path,
):
    flags = ["--model", "small-cnn", "--epochs", "3", "--batch-size", "32"]
    command = [sys.executable, "-m", "workbench", "sweep", *flags, "--study", "halt"]
    with open(tmp_path / "out.txt", "w") as out:
        # Its own session, as a terminal's foreground job: Ctrl+C reaches the
        # whole process group.
        sweep = subprocess.Popen(
            [*command, "--sweep-lr", "1e-3", "1e-1", "--parallel", "2"],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_for(lambda: len(_running_runs("halt")) == 2, "two trials training")
        os.killpg(sweep.pid, signal.SIGINT)
        assert sweep.wait(timeout=120) == 130
    finally:
        if sweep.poll() is None:
            os.killpg(sweep.pid, signal.SIGKILL)
    out = (tmp_path / "out.txt").read_text()
    assert out.count("stopped: the trials that finished are kept") == 3, out
    assert "Traceback" not in out
    assert "aborted" not in out.lower(), out
    runs = [r for r in list_runs() if r.sweep.startswith("halt #")]
    assert {r.status for r in runs} == {"stopped"}, out  # each kept, none killed
    for run in runs:
        assert (run.folder.path / "checkpoint.pt").is_file(), (
            sorted(p.name for p in run.folder.path.iterdir()),
            out,
        )


def _running_runs(study: str) -> list:
    """The study's trials that are training: running, and a step logged."""
    return [
        r
        for r in list_runs()
        if r.sweep.startswith(f"{study} #")
        and r.status == "running"
        and (r.folder.path / "metrics.jsonl").is_file()
    ]


@pytest.mark.slow
def test_trials_on_several_processes_are_pruned_by_the_worker_that_watches(capsys):
    # Trial 0 trains well; the seeded sampler's next rates diverge and trail.
    flags = ["--model", "mlp", "--epochs", "3", "--batch-size", "64", "--quiet"]
    sweep = ["--sweep-lr", "1e-3", "10", "--trials", "3", "--study", "ranks"]
    assert main(["sweep", *flags, *sweep, "--nproc", "2"]) == 0
    out = capsys.readouterr().out
    runs = {r.sweep: r for r in list_runs() if r.sweep.startswith("ranks #")}
    assert set(runs) == {"ranks #0", "ranks #1", "ranks #2"}, out
    assert {r.world_size for r in runs.values()} == {2}
    assert runs["ranks #0"].status == "finished"
    pruned = [r for r in runs.values() if r.status == "pruned"]
    assert pruned, out
    for run in pruned:
        # Stopped after its batch once the pruner spoke, checkpoint kept.
        assert run.global_step < runs["ranks #0"].global_step
        assert (run.folder.path / "checkpoint.pt").is_file()
    assert "(pruned, 1 epoch)" in out
