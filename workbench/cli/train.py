"""``train``: headless training with a progress bar, or on several processes.

The same :class:`~workbench.core.session.Session` as the window, with no Qt
imported, so it works over SSH and in CI.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from workbench.cli import distributed as cli_distributed
from workbench.cli import folds as cli_folds
from workbench.cli.class_table import class_score_lines
from workbench.cli.console import percent, say
from workbench.cli.progress import DownloadBars
from workbench.cli.run_outputs import MetricsJson, OutputFile, metrics_document
from workbench.cli.train_flags import config_from_args
from workbench.cli.train_loop import folder_line, follow_training
from workbench.core import config as C
from workbench.core.checkpoints.io import (
    CheckpointError,
    config_of,
    load_weights_file,
    save_checkpoint,
)
from workbench.core.model_offer import offer_weights
from workbench.core.perf.profiling import check_steps
from workbench.core.session import Session
from workbench.core.start_plan import StartKind
from workbench.core.train.best_epoch import METRIC_NAMES, run_best, value_text
from workbench.core.train.step_clock import split_text


def cmd_train(args: argparse.Namespace) -> int:
    """Train headless, or re-launch on ``--nproc`` processes through torchrun."""
    if args.folds is not None:
        return cli_folds.train_folds(args)
    if args.profile_steps is not None:
        check_profile_flag(args)
    if args.nproc > 1:
        base = C.load_config(args.config) if args.config else C.TrainConfig()
        return cli_distributed.relaunch(args, config_from_args(args, base))
    return cli_distributed.run_rank(_train, args)


def _train(args: argparse.Namespace) -> int:
    """Train headless with a progress bar; save and report as asked."""
    if args.resume and args.init_from:
        raise C.ConfigError(
            "--resume continues a run, --init-from starts a new one from its "
            "weights: give one of them"
        )
    # Before anything trains: a folder given by mistake is one line, not a loss.
    metrics = MetricsJson(args.metrics_json) if args.metrics_json else None
    save = OutputFile("--save", args.save, save_checkpoint) if args.save else None
    session = Session(origin="command line")
    session.tensorboard = args.tensorboard
    downloads = DownloadBars(args.quiet)
    base = C.load_config(args.config) if args.config else None
    if args.resume:
        opened = session.open(args.resume, progress=downloads, evaluate=False)
        session.adopt(opened)
        for note in opened.notes:
            say(f"note: {note}")
        base = base or opened.run.config
    base = base or C.TrainConfig()
    if args.init_from:
        # Read once: its architecture is the default, its weights the start.
        state, payload = load_weights_file(args.init_from)
        if payload is not None and not args.model:
            base = base.replace(model=config_of(payload).model)
        cfg = config_from_args(args, base)
        say(_load_initial_weights(session, cfg, args, state, payload))
    else:
        cfg = config_from_args(args, base)
    plan = session.plan_resume(cfg, args.resume) if args.resume else session.plan(cfg)
    if args.resume:
        run = opened.run
        if plan.kind is StartKind.NEW:
            raise C.ConfigError(
                f"cannot resume {args.resume}: {plan.why_new} (give --init-from to "
                "start a new run from its weights)"
            )
        changed = f", with {', '.join(plan.changed)} changed" if plan.changed else ""
        say(
            f"resuming {args.resume} at step {run.global_step} "
            f"(epoch {run.epoch + 1}){changed}"
        )
    for note in session.begin(plan):
        say(f"warning: {note}")
    if session.folder is not None:
        say(folder_line(session.folder, cfg))

    def on_epoch(run: Any) -> None:
        said = [save.write_during_run(run)] if save is not None else []
        if metrics is not None:
            document = metrics_document(cfg, run.history, None)
            said.append(metrics.write_during_run(document))
        for warning in filter(None, said):
            say(f"warning: {warning}")

    profile = None
    if args.profile_steps is not None:
        where = session.folder.path if session.folder is not None else Path.cwd()
        profile = (args.profile_steps, where / "trace.json")
    prepared, result = follow_training(
        session, plan, args.quiet, downloads, on_epoch, profile=profile
    )
    run = prepared or (opened.run if args.resume else None)
    session.finish(result)
    if result is None:  # stopped before the first step
        say("stopped before training began")
        return 130
    errors = [save.write_at_end(run)] if save is not None else []
    saved = save.path if save is not None and not errors[0] else None
    say(summary_line(result, run, saved))
    if split := split_text(result.phases):
        say(f"where the time went: {split}")
    for line in best_lines(result, run, session.folder):
        say(line)
    for line in class_score_lines(run.history.epochs, run.loaders.info.class_names):
        say(line)
    if metrics is not None:
        errors.append(metrics.write_at_end(metrics_document(cfg, run.history, result)))
    for error in filter(None, errors):
        sys.stderr.write(f"ptcore-workbench train: error: {error}\n")
    if any(errors):
        return 1
    return 130 if result.stopped else 0


def check_profile_flag(args: argparse.Namespace) -> None:
    """``--profile-steps`` is a step count one process records."""
    try:
        check_steps(args.profile_steps)
    except ValueError as exc:
        raise C.ConfigError(f"--profile-steps: {exc}") from None
    if args.nproc > 1:
        raise C.ConfigError(
            "--profile-steps records one process: give --nproc 1 (each rank of a "
            "multi-process run would write its own trace)"
        )


def summary_line(result: Any, run: Any, save_path: Path | None) -> str:
    """The one-line summary that ends a headless run."""
    state = "stopped" if result.stopped else "done"
    parts = [
        f"{state}: step {result.global_step}/{run.total_steps}",
        f"val accuracy {percent(result.val_accuracy)}",
        f"{result.images_per_s:,.0f} img/s",
        f"{result.seconds:.1f} s",
    ]
    if run.config.compile:
        parts.append(f"compile {result.compile_seconds:.1f} s")
    if save_path:
        parts.append(f"saved {save_path}")
    return ", ".join(parts)


def best_lines(result: Any, run: Any, folder: Any) -> list[str]:
    """Which epoch was best (and where its weights are), and an early stop's why."""
    metric = run.config.best_metric
    best = run_best(run)
    lines = []
    if best is not None:
        kept = folder is not None and folder.best_path.is_file()
        where = f": {folder.best_path}" if kept else ""
        lines.append(
            f"best epoch {best.epoch + 1} of {run.epoch} by {METRIC_NAMES[metric]} "
            f"({value_text(metric, best.value)}){where}"
        )
    if result.early_stop:
        lines.append(
            f"stopped early after epoch {result.epochs_completed}: {result.early_stop}"
        )
    return lines


def _load_initial_weights(
    session: Any,
    cfg: C.TrainConfig,
    args: Any,
    state: dict[str, Any],
    payload: dict[str, Any] | None,
) -> str:
    """Make ``--init-from`` the next run's weights; the line saying what happened."""
    offer = offer_weights(args.init_from, cfg, state, payload)
    diff = offer.diff
    if not diff.exact and not (diff.partial and args.init_partial):
        hint = " (add --init-partial to load what fits)" if diff.partial else ""
        if offer.other_architecture:
            hint = f" (it was saved from {offer.other_architecture}: drop --model)"
        raise CheckpointError(
            f"{args.init_from} does not fit this {args.model or 'model'}: "
            f"{diff.summary()}{hint}; " + "; ".join(diff.lines(limit=5))
        )
    _model, weights = session.accept_weights(offer, cfg.frozen)
    if diff.exact:
        return f"starting from the weights in {args.init_from}"
    return f"starting from {args.init_from}, partly: {weights.summary}"
