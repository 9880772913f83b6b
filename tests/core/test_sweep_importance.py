"""Which settings mattered: importances over a study, and over the ledger."""

from __future__ import annotations

import random

import optuna

from workbench.cli.commands import main
from workbench.core.config import TrainConfig
from workbench.core.runs.folder import RunFolder
from workbench.core.runs.listing import list_runs
from workbench.core.tuning.importance import ledger_importances, study_importances
from workbench.core.tuning.progress import SweepProgress
from workbench.core.tuning.space import SearchSpace
from workbench.core.tuning.study import StudyPlan

PLAN = StudyPlan(TrainConfig(), SearchSpace.parse({"lr": [1e-4, 1.0]}), 2, "none", 0)


def _accuracy_of(lr: float) -> float:
    """Only the rate matters: best at 1e-2, falling off either side."""
    from math import log10

    return 0.95 - 0.2 * (log10(lr) + 2) ** 2


def _synthetic_ledger(count: int = 40, seed: int = 0) -> None:
    draw = random.Random(seed)
    for _ in range(count):
        lr = 10 ** draw.uniform(-4, 0)
        cfg = TrainConfig(
            model="mlp",
            lr=lr,
            weight_decay=10 ** draw.uniform(-6, -2),
            batch_size=draw.choice((32, 64, 128, 256)),
            optimizer=draw.choice(("sgd", "adam")),
        )
        folder = RunFolder.create(cfg, origin="test")
        accuracy = _accuracy_of(lr) + draw.gauss(0, 0.002)
        folder.update(status="finished", best_val_accuracy=accuracy)
    # Runs of other data or another model, or unfinished, are left out.
    other = RunFolder.create(TrainConfig(model="small-cnn", lr=1e-4), origin="test")
    other.update(status="finished", best_val_accuracy=0.99)
    stopped = RunFolder.create(TrainConfig(model="mlp", lr=1e-4), origin="test")
    stopped.update(status="stopped", best_val_accuracy=0.99)


def test_over_the_ledger_the_rate_ranks_first_when_only_the_rate_matters(capsys):
    _synthetic_ledger()
    found = ledger_importances(list_runs(), "digits", "mlp")
    assert found.trials == 40
    assert next(iter(found.shares)) == "lr"
    assert found.shares["lr"] >= 0.6, found.shares
    assert set(found.shares) == {"lr", "weight_decay", "batch_size", "optimizer"}
    assert abs(sum(found.shares.values()) - 1) < 1e-6
    assert main(["sweep", "ledger", "--dataset", "digits", "--model", "mlp"]) == 0
    out = capsys.readouterr().out
    assert "ledger: 40 finished runs of mlp on digits" in out
    assert "importances: lr 0." in out


def test_over_a_study_the_rate_ranks_first_when_only_the_rate_matters():
    study = optuna.create_study(
        direction="maximize", sampler=optuna.samplers.RandomSampler(seed=1)
    )
    for _ in range(30):
        trial = study.ask()
        lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
        trial.suggest_categorical("batch_size", (64, 128, 256))
        study.tell(trial, _accuracy_of(lr))
    found = study_importances(study)
    assert next(iter(found.shares)) == "lr"
    assert found.shares["lr"] >= 0.6


def test_too_few_runs_say_so_instead_of_a_number():
    assert ledger_importances([], "digits", "mlp").line() == (
        "importances: not yet (0 to compare, 2 needed)"
    )
    RunFolder.create(TrainConfig(model="mlp"), origin="t").update(
        status="finished", best_val_accuracy=0.5
    )
    RunFolder.create(TrainConfig(model="mlp"), origin="t").update(
        status="finished", best_val_accuracy=0.6
    )
    same = ledger_importances(list_runs(), "digits", "mlp")
    assert same.line() == "importances: not yet (every run has the same settings)"


def test_pruned_trials_are_neither_the_best_nor_compared():
    study = optuna.create_study(direction="maximize")
    trial = study.ask()
    trial.suggest_float("lr", 1e-4, 1.0, log=True)
    study.tell(trial, 0.8)
    pruned = study.ask()
    pruned.suggest_float("lr", 1e-4, 1.0, log=True)
    pruned.report(0.9, step=1)  # a pruned trial's value is its last report
    study.tell(pruned, state=optuna.trial.TrialState.PRUNED)
    assert study.trials[1].value == 0.9
    assert study_importances(study).line() == (
        "importances: not yet (1 to compare, 2 needed)"
    )
    progress = SweepProgress("s", PLAN, study.trials)
    assert progress.best.number == 0
    assert progress.finished == 2
