"""Following one headless training: a progress bar and a line per event.

``train`` and ``train --folds`` both train through :func:`follow_training`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.cli.console import percent, say
from workbench.cli.interrupts import stop_on_first_interrupt
from workbench.cli.progress import DownloadBars, StepBar
from workbench.core import config as C
from workbench.core import events as E
from workbench.core.perf.profiling import HOW_TO_OPEN, top_operators_lines
from workbench.core.session import RunPrepared, Session
from workbench.core.train.engine import TrainControl


def folder_line(folder: Any, cfg: C.TrainConfig) -> str:
    """``run folder: PATH (checkpoint saved ...)``: a job's parent reads it."""
    every = cfg.autosave_every
    if every == 0:
        return f"run folder: {folder.path} (checkpoint saved never: autosave is off)"
    when = "every epoch" if every == 1 else f"every {every} epochs"
    return f"run folder: {folder.path} (checkpoint saved {when}, and at the end)"


def follow_training(
    session: Session,
    plan: Any,
    quiet: bool,
    downloads: DownloadBars,
    on_epoch: Any = None,
    profile: tuple[int, Path] | None = None,
) -> tuple[Any, E.TrainResult | None]:
    """Train ``plan`` with a progress bar and a line per epoch.

    Returns the prepared run (None if it never was) and its result (None when
    it stopped before the first step). ``on_epoch(run)`` runs after each epoch;
    ``profile``: (steps, trace file) to record with torch.profiler.
    """
    control = TrainControl()
    if profile is not None:
        control.request_profile(*profile)
    progress = StepBar(quiet)
    run = result = None
    try:
        for event in session.train(plan, control, progress=downloads):
            if isinstance(event, RunPrepared):
                # Until now a stop request ended the command at once (loading the
                # data or a model file's import may never reach a step); from the
                # first step on it stops after the batch, saved.
                stop_on_first_interrupt(control)
                downloads.close()
                run = event.run
                progress.open(run)
                continue
            text = describe_event(event, run)
            if text:
                say(text)
            progress.show(event)
            if isinstance(event, E.EpochMetrics) and on_epoch is not None:
                on_epoch(run)
            elif isinstance(event, E.TrainResult):
                result = event
    finally:
        progress.close()
        downloads.close()
    return run, result


def profile_lines(report: E.ProfileReport) -> list[str]:
    """A profile's trace, its top operators and how to open it."""
    if not report.trace_path:
        return [f"profile: {report.note}"]
    lines = [
        f"profile: {report.steps_recorded} steps recorded into {report.trace_path}"
    ]
    if report.note:
        lines.append(f"  ({report.note})")
    lines += top_operators_lines(report)
    lines.append(HOW_TO_OPEN)
    return lines


def describe_event(event: Any, run: Any) -> str | None:
    """The line the console prints for an engine event, if any."""
    if isinstance(event, E.RunStarted):
        images = run.loaders.train.num_samples
        return (
            f"training {event.model} on {run.config.dataset} ({images:,} images) on "
            f"{event.device}, {event.precision}, {event.trainable_parameters:,}/"
            f"{event.parameters:,} parameters trainable"
            + (f", {event.feature_cache}" if event.feature_cache else "")
        )
    if isinstance(event, E.Notice):
        return f"note: {event.message}"
    if isinstance(event, E.CompileFinished):
        return f"torch.compile took {event.seconds:.1f} s"
    if isinstance(event, E.ProfileReport):
        return "\n".join(profile_lines(event))
    if isinstance(event, E.EpochMetrics):
        return (
            f"epoch {event.epoch + 1}: train loss {event.train_loss:.4f} "
            f"acc {percent(event.train_accuracy)} | val loss {event.val_loss:.4f} "
            f"acc {percent(event.val_accuracy)} | "
            f"{event.images_per_s:,.0f} img/s | {event.seconds:.1f} s"
        )
    return None
