"""``lr-find``: the learning-rate range test and its probe runs, headless.

Every ``train`` flag sets up the run the rate is for (``--resume`` finds it for
a run from where its checkpoint stands); nothing is trained for real and no
run folder is made.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from tqdm import tqdm

from workbench.cli import interrupts
from workbench.cli.console import percent, say
from workbench.cli.progress import DownloadBars
from workbench.cli.train_flags import add_train_flags, config_from_args
from workbench.core import config as C
from workbench.core.session import Session
from workbench.core.train.engine import TrainControl
from workbench.core.training_run import TrainingRun
from workbench.core.tuning.lr_find import END, START, STEPS, RangeSettings
from workbench.core.tuning.lr_probe import Probe, RateFound, find_rate


def add_lr_find_parser(sub: Any) -> None:
    """The ``lr-find`` command: ``train``'s flags and the ramp's own."""
    parser = sub.add_parser(
        "lr-find",
        help="find a learning rate: a range test whose suggestion probe runs check",
    )
    add_train_flags(parser)
    add = parser.add_argument
    add(
        "--lr-start",
        type=float,
        default=START,
        metavar="RATE",
        help=f"default {START:g}",
    )
    add("--lr-end", type=float, default=END, metavar="RATE", help=f"default {END:g}")
    add("--lr-steps", type=int, default=STEPS, metavar="N", help=f"default {STEPS}")
    add(
        "--probe-steps",
        type=int,
        metavar="N",
        help="steps of each probe run (default: one epoch, at most 100)",
    )


def cmd_lr_find(args: argparse.Namespace) -> int:
    """Ramp, suggest, probe; print the curve's figures and the rate to use."""
    if args.nproc > 1:
        raise C.ConfigError("lr-find runs in one process: leave out --nproc")
    settings = RangeSettings(args.lr_start, args.lr_end, args.lr_steps)
    settings.check()
    if args.probe_steps is not None and args.probe_steps < 1:
        raise C.ConfigError(f"--probe-steps must be 1 or more, not {args.probe_steps}")
    interrupts.release()  # Ctrl+C while preparing ends the command at once
    run = _prepare(args)
    control = TrainControl()
    interrupts.stop_on_first_interrupt(control)
    with _Bar(args.quiet) as bar:
        found = find_rate(
            run,
            settings,
            steps=args.probe_steps,
            stop=lambda: control.stop_requested,
            progress=bar.show,
        )
    for line in report_lines(found, settings):
        say(line)
    if found.offered is None:
        return 130 if control.stop_requested else 1
    return 0


def report_lines(found: RateFound, settings: RangeSettings) -> list[str]:
    """What ``lr-find`` prints: the curve, the suggestions, the probes, the rate."""
    curve = found.curve
    done = len(curve.rates) + curve.dropped
    lines = [
        f"range test: {done} of {settings.steps} steps from {settings.start:.0e} "
        f"to {settings.end:g} ({curve.stopped_because})",
        *(f"note: {note}" for note in curve.notes),
    ]
    guess = curve.suggestions
    if guess is None:
        return lines
    line = f"suggestions: valley {guess.valley:.2e}, steepest {guess.steepest:.2e}"
    if guess.disagree:
        low, high = guess.band
        line += f" (they disagree by over 3x: the band {low:.2e} to {high:.2e})"
    lines.append(line)
    if found.probes:
        lines.append(
            f"probe runs ({found.probe_steps} steps each, from step {found.from_step}):"
        )
        lines += probe_table(list(found.probes), found.offered)
    if found.offered is None:
        lines.append("stopped: no rate offered")
    else:
        lines.append(f"use: --lr {found.offered.rate:.2e}")
    return lines


def _prepare(args: argparse.Namespace) -> TrainingRun:
    """The run ``train`` would start with these flags (or resume), not trained."""
    session = Session(origin="command line")
    downloads = DownloadBars(args.quiet)
    if args.init_from:
        raise C.ConfigError("lr-find does not take --init-from: give --resume")
    try:
        base = C.load_config(args.config) if args.config else None
        if args.resume:
            opened = session.open(args.resume, progress=downloads, evaluate=False)
            session.adopt(opened)
            base = base or opened.run.config
        cfg = config_from_args(args, base or C.TrainConfig())
        return session.trial_run(session.plan(cfg), downloads)
    finally:
        downloads.close()


def probe_table(probes: list[Probe], best: Probe | None) -> list[str]:
    """The probes as aligned lines, the offered one marked."""
    lines = [
        f"  {'rate':>9}  {'train loss':>10}  {'val loss':>8}  {'val accuracy':>12}"
    ]
    for probe in probes:
        mark = "  <- offered" if probe is best else ""
        lines.append(
            f"  {probe.rate:9.2e}  {_loss(probe.train_loss):>10}  "
            f"{_loss(probe.val_loss):>8}  {percent(probe.val_accuracy):>12}{mark}"
        )
    return lines


def _loss(value: float) -> str:
    return f"{value:.4f}" if math.isfinite(value) else "diverged"


class _Bar:
    """A tqdm bar per stage of a ``progress(stage, done, total)`` callback."""

    def __init__(self, quiet: bool) -> None:
        self.quiet, self.stage, self.bar = quiet, "", None

    def __enter__(self) -> _Bar:
        return self

    def show(self, stage: str, done: int, total: int) -> None:
        if self.bar is None or stage != self.stage:
            self.close()
            self.stage = stage
            self.bar = tqdm(total=total, desc=stage, disable=self.quiet, leave=False)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __exit__(self, *exc: object) -> None:
        self.close()
