"""``doctor-speed``: which settings would make a run faster, measured here.

Every ``train`` flag sets up the run to diagnose. Its settings and each
candidate change train a few steps at a time in alternating rounds; nothing is
trained for real, no run folder is made, and nothing is changed: a change
that beats the noise is printed as the ``train`` flags that apply it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from tqdm import tqdm

from workbench.cli.console import say
from workbench.cli.progress import DownloadBars
from workbench.cli.train_flags import add_train_flags, config_from_args
from workbench.core import config as C
from workbench.core.perf.graph_breaks import report_lines as graph_break_lines
from workbench.core.perf.speed_doctor import (
    DEFAULT_KINDS,
    KINDS,
    ROUNDS,
    STEPS,
    WARMUP,
    DoctorProgress,
    DoctorReport,
    check_settings,
    diagnose,
    explain_config,
    flags,
    gain_text,
)
from workbench.core.session import Session
from workbench.core.training_run import TrainingRun


def add_doctor_speed_parser(sub: Any) -> None:
    """The ``doctor-speed`` command: ``train``'s flags and the timing's own."""
    parser = sub.add_parser(
        "doctor-speed",
        help="time the run's settings against faster ones; recommend what beats "
        "the noise",
    )
    add_train_flags(parser)
    add = parser.add_argument
    add(
        "--steps",
        type=int,
        default=STEPS,
        metavar="N",
        help=f"timed steps of each setting per round (default {STEPS})",
    )
    add(
        "--rounds",
        type=int,
        default=ROUNDS,
        metavar="R",
        help=f"rounds, each timing every setting in turn (default {ROUNDS})",
    )
    add(
        "--try",
        dest="kinds",
        nargs="+",
        type=_kind,
        choices=KINDS,
        default=list(DEFAULT_KINDS),
        metavar="KIND",
        help="kinds of change to try: loader, precision, compile, memory-format, "
        "batch (default: all but compile, whose compiling takes tens of seconds)",
    )


def _kind(text: str) -> str:
    return text.replace("-", " ")  # "memory-format" needs no quotes


def cmd_doctor_speed(args: argparse.Namespace) -> int:
    """Diagnose, print every candidate's gain, and the flags of the recommended."""
    if args.nproc > 1:
        raise C.ConfigError("doctor-speed times one process: leave out --nproc")
    if args.resume or args.init_from:
        raise C.ConfigError(
            "doctor-speed times a run's settings, not its weights: give the flags "
            "or --config instead of --resume or --init-from"
        )
    check_settings(args.steps, args.rounds, WARMUP, args.kinds)
    session = Session(origin="command line")
    downloads = DownloadBars(args.quiet)
    base = C.load_config(args.config) if args.config else C.TrainConfig()
    cfg = config_from_args(args, base)

    def prepare(changed: C.TrainConfig) -> TrainingRun:
        return session.trial_run(session.plan(changed), downloads)

    report = None
    bar = tqdm(total=1, disable=args.quiet, leave=False, unit="turn")
    try:
        for item in diagnose(
            cfg, steps=args.steps, rounds=args.rounds, kinds=args.kinds, prepare=prepare
        ):
            if isinstance(item, DoctorProgress):
                bar.total = item.total
                bar.set_description(f"round {item.round}/{item.rounds}: {item.arm}")
                bar.update(item.done - bar.n)
            else:
                report = item
    finally:
        bar.close()
        downloads.close()
    assert report is not None  # diagnose always ends with its report
    for line in report_lines(report, args.kinds):
        say(line)
    if cfg.compile and not report.cancelled:
        say("torch.compile:")
        for line in graph_break_lines(explain_config(cfg, prepare)):
            say(f"  {line}")
        say(
            "  a number the model reads that changes between steps (a scheduler "
            "value) recompiles too: the run says each recompile as it trains"
        )
    return 0


def report_lines(
    report: DoctorReport, kinds: Sequence[str] = DEFAULT_KINDS
) -> list[str]:
    """What ``doctor-speed`` prints: the baseline, the diagnosis, each candidate.

    ``kinds``: those asked for; the last line names the ones left out.
    """
    if report.cancelled:
        return ["doctor-speed: cancelled"]
    lines = [
        f"your settings: {report.images_per_s:,.0f} images/s on {report.device} in "
        f"{report.precision} ({report.rounds} rounds of {report.steps} steps; "
        f"round-to-round noise {report.noise:.0%})",
        f"diagnosis: {report.diagnosis}",
        "gain in images/s over your settings, median (worst-best round; of 4 "
        "or more, the worst is spared); recommended when the worst round judged "
        "beats 1 + the noise:",
    ]
    width = max((len(f.name) for f in report.findings), default=0)
    for f in report.findings:
        line = f"  {f.name:<{width}}  {gain_text(f):<20}  {f.verdict}"
        if f.recommended:
            line += f": {flags(f.changes)}"
        lines.append(line)
        if f.kind == "batch" and f.rounds:
            lines.append(f"  {'':<{width}}  note: {f.reason}")
    others = sorted({f.kind for f in report.findings} - set(kinds))
    if others:
        every = " ".join(kind.replace(" ", "-") for kind in [*kinds, *others])
        lines.append(f"to time the others too: --try {every}")
    if report.recommended:
        each = " ".join(flags(f.changes) for f in report.recommended)
        lines.append(f"apply (each measured alone): {each}")
    else:
        lines.append("apply: nothing; no change beat the noise")
    return lines
