"""``sweep``: trials proposed by Optuna, each an ordinary run of the ledger.

``train``'s flags fix what stays the same; one ``--sweep-FIELD`` per setting
that varies (``--sweep-lr 1e-4 1e-1``, ``--sweep-batch-size 64 128 256``), or
the config file's ``[sweep]`` table. ``--parallel N`` trains N trials at once
on this machine; ``--join STUDY`` adds this machine's worker to a sweep
started elsewhere. ``sweep show STUDY`` prints a study (:mod:`.sweep_show`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
from collections.abc import Callable, Iterator
from typing import Any

from workbench.cli import interrupts
from workbench.cli.console import percent, say
from workbench.cli.sweep_show import show_ledger, show_study
from workbench.cli.train_flags import add_train_flags, config_from_args
from workbench.core import config as C
from workbench.core.train.engine import TrainControl
from workbench.core.tuning.space import FIELDS, LOG_FIELDS, SearchSpace
from workbench.core.tuning.study import (
    best_trial,
    close_study,
    param_text,
    recorded_plan,
)
from workbench.core.tuning.sweep import (
    SweepSettings,
    TrialDone,
    join_sweep,
    run_trials,
    start_sweep,
)
from workbench.core.tuning.workers import LocalWorkers


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
        "--trials", type=int, metavar="N", help="trials in all (default 12)"
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
    parser.add_argument("--pruner", choices=("halving", "hyperband", "none"))
    parser.add_argument(
        "--parallel",
        type=int,
        default=1,
        metavar="N",
        help="trials trained at once on this machine, the cores shared (default 1)",
    )
    parser.add_argument(
        "--join",
        metavar="STUDY",
        help="add a worker to a sweep started elsewhere (with its --storage)",
    )
    # A local worker's number, from --parallel: varies its sampler's seed.
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run a sweep, join one, or show one."""
    if args.action == ["ledger"]:
        default = C.TrainConfig()
        return show_ledger(args.dataset or default.dataset, args.model or default.model)
    if args.action:
        if len(args.action) != 2 or args.action[0] != "show":
            raise C.ConfigError(
                "give 'sweep show STUDY', 'sweep ledger', or flags to run a sweep"
            )
        return show_study(args.action[1], args.storage)
    if args.parallel < 1:
        raise C.ConfigError(f"--parallel must be 1 or more, not {args.parallel}")
    if args.join:
        return _join(args)
    settings, base = _settings(args)
    study = start_sweep(base, settings)
    dims = ", ".join(settings.space.dimensions)
    say(f"sweep {settings.study}: {settings.trials} trials over {dims}")
    if args.parallel > 1:
        close_study(study)  # the workers open their own
        return _parallel(args, settings)
    interrupts.release()
    try:
        code = _work(lambda stop: run_trials(study, recorded_plan(study), stop=stop))
    finally:
        close_study(study)
    _summary(settings.study, args.storage)
    return code


def _settings(args: argparse.Namespace) -> tuple[SweepSettings, C.TrainConfig]:
    """The sweep's settings: the config file's [sweep] table, then the flags."""
    table: dict[str, Any] = {}
    base = C.TrainConfig()
    if args.config:
        base = C.load_config(args.config)
        table = sweep_table(args.config)
    raw = {f: table[f] for f in FIELDS if f in table}
    raw.update(
        (field, value)
        for field in FIELDS
        if (value := getattr(args, "sweep_" + field)) is not None
    )
    space = SearchSpace.parse(raw)
    base = config_from_args(args, base)
    trials = args.trials if args.trials is not None else table.get("trials", 12)
    pruner = args.pruner or table.get("pruner", "halving")
    study = args.study or dt.datetime.now().strftime("sweep-%Y%m%d-%H%M%S")
    if not isinstance(trials, int) or isinstance(trials, bool):
        raise C.ConfigError(f"[sweep] trials must be a whole number, not {trials!r}")
    settings = SweepSettings(
        space,
        trials,
        study,
        args.storage,
        seed=base.seed,
        pruner=str(pruner),
        nproc=args.nproc,
    )
    settings.check()
    return settings, base


def sweep_table(path: str) -> dict[str, Any]:
    """A config file's ``[sweep]`` table: fields to vary, ``trials``, ``pruner``."""
    table = C.read_config_table(path).get(C.SWEEP_TABLE, {})
    if not isinstance(table, dict):
        raise C.ConfigError(f"{path}: [sweep] must be a table of fields")
    unknown = sorted(set(table) - set(FIELDS) - {"trials", "pruner"})
    if unknown:
        raise C.ConfigError(
            f"{path}: [sweep] {unknown[0]!r} is not a field a sweep varies "
            f"({', '.join(FIELDS)}), trials or pruner"
        )
    for field in FIELDS:
        if field in table and not isinstance(table[field], list):
            raise C.ConfigError(
                f"{path}: [sweep] {field} must be a list (a range or choices), "
                f"not {table[field]!r}"
            )
    return table


def _join(args: argparse.Namespace) -> int:
    """This process as one more worker of a study started elsewhere.

    With ``--parallel N``, N local workers instead: how a sweep stopped or
    left when the window closed goes on where it was.
    """
    if args.parallel > 1:
        study, plan = join_sweep(args.join, args.storage, worker=0)
        close_study(study)
        dims = ", ".join(plan.space.dimensions)
        say(f"joined sweep {args.join}: {plan.trials} trials over {dims}")
        settings = SweepSettings(
            plan.space,
            plan.trials,
            args.join,
            args.storage,
            plan.seed,
            plan.pruner,
            plan.nproc,
        )
        return _parallel(args, settings)
    worker = args.worker if args.worker is not None else os.getpid()
    study, plan = join_sweep(args.join, args.storage, worker=worker)
    if args.worker is None:
        dims = ", ".join(plan.space.dimensions)
        say(f"joined sweep {args.join}: {plan.trials} trials over {dims}")
    interrupts.release()
    try:
        code = _work(lambda stop: run_trials(study, plan, stop=stop))
    finally:
        close_study(study)
    if args.worker is None:
        _summary(args.join, args.storage)
    return code


def _parallel(args: argparse.Namespace, settings: SweepSettings) -> int:
    """Start ``--parallel`` local workers, pass Ctrl+C on, wait for them all."""
    workers = LocalWorkers(settings.study, settings.storage, args.parallel)
    interrupts.release()
    stopped = False
    while True:
        try:
            codes = workers.wait()
            break
        except KeyboardInterrupt:
            stopped = True
            workers.interrupt()
    if stopped:
        say("stopped: the trials that finished are kept")
    _summary(settings.study, settings.storage)
    if stopped:
        return 130
    return 0 if all(code == 0 for code in codes) else 1


def _work(trials: Callable[[Callable[[], bool]], Iterator[TrialDone]]) -> int:
    """Train a worker's trials, a line each; Ctrl+C stops after the batch."""
    control = TrainControl()
    interrupts.stop_on_first_interrupt(control)
    for done in trials(lambda: control.stop_requested):
        say(trial_line(done))
    if control.stop_requested:
        say("stopped: the trials that finished are kept")
        return 130
    return 0


def _summary(study_name: str, storage: str | None) -> None:
    best = best_trial(study_name, storage)
    if best is not None:
        say(f"best: trial {best.number}, {percent(best.value or math.nan)}")
    say(f"see it again: ptcore-workbench sweep show {study_name}")


def trial_line(done: TrialDone) -> str:
    """One trial's line: its number, values, outcome and run folder."""
    values = ", ".join(f"{k} {param_text(v)}" for k, v in done.params.items())
    accuracy = percent(done.value) if done.value is not None else "n/a"
    where = f" {done.run_folder}" if done.run_folder else ""
    return (
        f"trial {done.number}: {values} -> {accuracy} ({done.state}, "
        f"{done.epochs} epoch{'s' if done.epochs != 1 else ''}){where}"
    )
