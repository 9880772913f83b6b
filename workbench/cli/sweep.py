"""``sweep``: trials proposed by Optuna, each an ordinary run of the ledger.

``train``'s flags fix what stays the same; one ``--sweep-FIELD`` per setting
that varies (``--sweep-lr 1e-4 1e-1``, ``--sweep-batch-size 64 128 256``).
``sweep show STUDY`` prints a study's trials, its best and the importances.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import warnings
from typing import Any

from workbench.cli import interrupts
from workbench.cli.console import percent, say
from workbench.cli.train import config_from_args
from workbench.cli.train_flags import add_train_flags
from workbench.core import config as C
from workbench.core.train.engine import TrainControl
from workbench.core.tuning.space import FIELDS, LOG_FIELDS, SearchSpace
from workbench.core.tuning.sweep import SweepSettings, TrialDone, open_study, run_sweep


def add_sweep_parser(sub: Any) -> None:
    """``sweep [show STUDY]`` with ``train``'s flags and one per swept field."""
    parser = sub.add_parser(
        "sweep", help="search settings with Optuna: every trial is a run of the ledger"
    )
    parser.add_argument(
        "action",
        nargs="*",
        metavar="show STUDY",
        help="print a study's trials, best and importances instead of sweeping",
    )
    add_train_flags(parser)
    for field in FIELDS:
        flag = "--sweep-" + field.replace("_", "-")
        if field in LOG_FIELDS:
            parser.add_argument(
                flag, nargs=2, metavar=("LOW", "HIGH"), help="a range, log scale"
            )
        else:
            parser.add_argument(flag, nargs="+", metavar="VALUE", help="choices")
    parser.add_argument(
        "--trials", type=int, default=12, metavar="N", help="trials (default 12)"
    )
    parser.add_argument(
        "--study", metavar="NAME", help="the study's name (default: a new one)"
    )
    parser.add_argument(
        "--storage",
        metavar="URL",
        help="postgresql://… shared by several machines (default: a file in the "
        "sweep's folder)",
    )
    parser.add_argument(
        "--pruner", choices=("halving", "hyperband", "none"), default="halving"
    )


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run a sweep, or show one."""
    if args.action:
        if len(args.action) != 2 or args.action[0] != "show":
            raise C.ConfigError("give 'sweep show STUDY', or flags to run a sweep")
        return _show(args, args.action[1])
    if args.nproc > 1:
        raise C.ConfigError("sweep trials run in one process each: leave out --nproc")
    raw = {
        field: value
        for field in FIELDS
        if (value := getattr(args, "sweep_" + field)) is not None
    }
    space = SearchSpace.parse(raw)
    base = config_from_args(
        args, C.load_config(args.config) if args.config else C.TrainConfig()
    )
    study = args.study or dt.datetime.now().strftime("sweep-%Y%m%d-%H%M%S")
    settings = SweepSettings(
        space, args.trials, study, args.storage, seed=base.seed, pruner=args.pruner
    )
    settings.check()
    interrupts.release()
    control = TrainControl()
    interrupts.stop_on_first_interrupt(control)
    say(f"sweep {study}: {args.trials} trials over {', '.join(space.dimensions)}")
    best: TrialDone | None = None
    for done in run_sweep(base, settings, stop=lambda: control.stop_requested):
        say(trial_line(done))
        if done.state == "complete" and (
            best is None or (done.value or 0) > (best.value or 0)
        ):
            best = done
    if control.stop_requested:
        say("stopped: the trials that finished are kept")
    if best is not None:
        say(f"best: trial {best.number}, {percent(best.value or math.nan)}")
    say(f"see it again: ptcore-workbench sweep show {study}")
    return 130 if control.stop_requested else 0


def trial_line(done: TrialDone) -> str:
    """One trial's line: its number, values, outcome and run folder."""
    values = ", ".join(f"{k} {_value(v)}" for k, v in done.params.items())
    accuracy = percent(done.value) if done.value is not None else "n/a"
    where = f" {done.run_folder}" if done.run_folder else ""
    return (
        f"trial {done.number}: {values} -> {accuracy} ({done.state}, "
        f"{done.epochs} epoch{'s' if done.epochs != 1 else ''}){where}"
    )


def _value(value: object) -> str:
    return f"{value:.2e}" if isinstance(value, float) else str(value)


def _show(args: argparse.Namespace, study_name: str) -> int:
    settings = SweepSettings(SearchSpace({}), 1, study_name, args.storage)
    settings.check()
    study = open_study(settings, create=False)
    say(f"study {study_name}: {len(study.trials)} trials")
    for trial in study.trials:
        values = ", ".join(f"{k} {_value(v)}" for k, v in trial.params.items())
        value = percent(trial.value) if trial.value is not None else "n/a"
        say(f"  trial {trial.number}: {values} -> {value} ({trial.state.name.lower()})")
    complete = [t for t in study.trials if t.value is not None]
    if complete:
        best = study.best_trial
        say(f"best: trial {best.number}, {percent(best.value)}")
    say(_importances(study))
    return 0


def _importances(study: Any) -> str:
    """Each swept setting's share of the variation in accuracy (fANOVA)."""
    from optuna.importance import get_param_importances

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "too few trials": said, not warned
        try:
            shares = get_param_importances(study)
        except (RuntimeError, ValueError, UserWarning) as exc:
            return f"importances: not yet ({str(exc).split('.')[0].lower()})"
    return "importances: " + ", ".join(f"{k} {v:.2f}" for k, v in shares.items())
