"""Which settings mattered: each one's share of the variation in accuracy.

Optuna's fANOVA evaluator (seeded, so the shares are the same each time),
over one study's finished trials, or over every finished run of the ledger on
one dataset and model: their settings become trials of a study in memory, the
settings that differ between them its parameters.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
)
from optuna.importance import FanovaImportanceEvaluator, get_param_importances
from optuna.trial import TrialState

LOG_SETTINGS = ("lr", "weight_decay")
CHOICE_SETTINGS = ("batch_size", "optimizer", "schedule", "epochs", "augment", "frozen")


@dataclass(frozen=True)
class Importances:
    """Shares summing to 1, largest first; or why there are none yet."""

    trials: int
    shares: dict[str, float] = field(default_factory=dict)
    reason: str = ""

    def line(self) -> str:
        if not self.shares:
            return f"importances: not yet ({self.reason})"
        return "importances: " + ", ".join(
            f"{name} {share:.2f}" for name, share in self.shares.items()
        )


def study_importances(study: optuna.Study) -> Importances:
    """The shares over ``study``'s complete trials (Optuna leaves pruned ones out)."""
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    return _evaluate(study, len(complete))


def ledger_importances(runs: Iterable[Any], dataset: str, model: str) -> Importances:
    """The shares over every finished run of ``dataset`` and ``model``.

    ``runs`` are the ledger's summaries (:class:`~workbench.core.runs.listing
    .RunSummary`): their ``config`` and ``best_val_accuracy``.
    """
    rows = [
        (_settings(run.config), float(run.best_val_accuracy))
        for run in runs
        if run.status == "finished"
        and run.best_val_accuracy is not None
        and run.config.get("dataset") == dataset
        and run.config.get("model") == model
    ]
    distributions = _distributions([settings for settings, _ in rows])
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize")
    for settings, accuracy in rows:
        params = {k: settings[k] for k in distributions}
        study.add_trial(
            optuna.create_trial(
                params=params, distributions=distributions, value=accuracy
            )
        )
    if rows and not distributions:
        return Importances(len(rows), reason="every run has the same settings")
    return _evaluate(study, len(rows))


def _evaluate(study: optuna.Study, finished: int) -> Importances:
    if finished < 2:
        return Importances(finished, reason=f"{finished} to compare, 2 needed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            shares = get_param_importances(
                study, evaluator=FanovaImportanceEvaluator(seed=0)
            )
        except (RuntimeError, ValueError) as exc:
            return Importances(finished, reason=str(exc).split(".")[0].lower())
    if not shares:
        return Importances(finished, reason="nothing varied between the trials")
    return Importances(finished, {k: float(v) for k, v in shares.items()})


def _settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """A run's settings as parameters: lists become one comparable value."""
    settings: dict[str, Any] = {}
    for name in (*LOG_SETTINGS, *CHOICE_SETTINGS):
        value = config.get(name)
        if name == "frozen":
            value = len(value or ())  # how much is frozen, not which names
        elif isinstance(value, list):
            value = "+".join(value) or "none"
        settings[name] = value
    return settings


def _distributions(rows: list[dict[str, Any]]) -> dict[str, BaseDistribution]:
    """One per setting whose value differs between the runs."""
    found: dict[str, BaseDistribution] = {}
    for name in (*LOG_SETTINGS, *CHOICE_SETTINGS):
        values = {row[name] for row in rows if row[name] is not None}
        if len(values) < 2 or any(row[name] is None for row in rows):
            continue
        if name in LOG_SETTINGS and all(v > 0 for v in values):
            found[name] = FloatDistribution(min(values), max(values), log=True)
        else:
            found[name] = CategoricalDistribution(sorted(values, key=str))
    return found
