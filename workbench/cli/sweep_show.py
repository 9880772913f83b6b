"""``sweep show STUDY`` and ``sweep ledger``: a study's trials, and what mattered.

``show`` prints every trial of a study (surplus asks left out), its best and
the settings' importances; ``ledger`` the importances over every finished run
of the ledger on one dataset and model, swept or not.
"""

from __future__ import annotations

import optuna

from workbench.cli.console import percent, say
from workbench.core.runs.listing import list_runs
from workbench.core.tuning.importance import ledger_importances, study_importances
from workbench.core.tuning.study import (
    RETRY_OF_KEY,
    SURPLUS_KEY,
    best_of,
    close_study,
    open_study,
    param_text,
)


def show_study(name: str, storage: str | None) -> int:
    """Print ``name``'s trials, best and importances."""
    study = open_study(name, storage, create=False)
    try:
        _print_study(study)
    finally:
        close_study(study)
    return 0


def _print_study(study: optuna.Study) -> None:
    name = study.study_name
    trials = [t for t in study.trials if not t.user_attrs.get(SURPLUS_KEY)]
    say(f"study {name}: {len(trials)} trials")
    for trial in trials:
        values = ", ".join(f"{k} {param_text(v)}" for k, v in trial.params.items())
        value = percent(trial.value) if trial.value is not None else "n/a"
        retried = trial.system_attrs.get("failed_trial")  # Optuna's retry
        again = trial.user_attrs.get(RETRY_OF_KEY, retried)
        note = f", again for trial {again}" if again is not None else ""
        state = trial.state.name.lower()
        say(f"  trial {trial.number}: {values} -> {value} ({state}{note})")
    best = best_of(trials)
    if best is not None:
        say(f"best: trial {best.number}, {percent(best.value)}")
    say(study_importances(study).line())


def show_ledger(dataset: str, model: str) -> int:
    """Print the importances over the ledger's finished runs of one data and model."""
    found = ledger_importances(list_runs(), dataset, model)
    say(f"ledger: {found.trials} finished runs of {model} on {dataset}")
    say(found.line())
    return 0
