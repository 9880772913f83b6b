"""``ptcore-workbench``: the parser, and the window or the command it names.

Each command lives in its own module (see :mod:`workbench.cli`); ``train`` and
``predict`` run the same core engine as the window, with no Qt imported, so
they work over SSH and in CI.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from workbench import __version__
from workbench.cli import check_data as cli_check_data
from workbench.cli import data_issues as cli_data_issues
from workbench.cli import devices as cli_devices
from workbench.cli import doctor_speed as cli_doctor_speed
from workbench.cli import export as cli_export
from workbench.cli import fixes as cli_fixes
from workbench.cli import inspect as cli_inspect
from workbench.cli import interrupts
from workbench.cli import lr_find as cli_lr_find
from workbench.cli import models as cli_models
from workbench.cli import predict as cli_predict
from workbench.cli import script as cli_script
from workbench.cli import sweep as cli_sweep
from workbench.cli import train as cli_train
from workbench.cli.runs import run_command
from workbench.cli.train_flags import MODEL_HELP, add_train_flags
from workbench.core import config as C
from workbench.core.errors import USER_ERRORS
from workbench.core.host.memory import keep_freed_memory

log = logging.getLogger("workbench")


def build_parser() -> argparse.ArgumentParser:
    """The command line; with no command the window opens."""
    parser = argparse.ArgumentParser(
        prog="ptcore-workbench",
        description="See and steer PyTorch training. No command opens the window.",
    )
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_train_flags(sub.add_parser("train", help="train headless"))
    predict = sub.add_parser("predict", help="classify images with a checkpoint")
    predict.add_argument(
        "--checkpoint",
        required=True,
        metavar="PATH",
        help="a checkpoint file, or a run folder (its latest weights)",
    )
    predict.add_argument(
        "--best",
        action="store_true",
        help="the run's best epoch (best.pt) instead of its latest weights",
    )
    predict.add_argument(
        "images", nargs="+", metavar="IMAGE", help="image files, or folders of them"
    )
    predict.add_argument(
        "--top", type=int, default=3, help="classes to show (default 3)"
    )
    cli_predict.add_predict_flags(predict)
    sub.add_parser(
        "devices", help="list CPU/CUDA/MPS devices and why any is unavailable"
    )
    runs = sub.add_parser("runs", help="the run ledger: list, show, reproduce runs")
    runs_sub = runs.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    runs_sub.add_parser("list", help="every run, newest first")
    show = runs_sub.add_parser("show", help="one run: config, metrics, events")
    show.add_argument("id", metavar="ID", help="run id, a unique prefix of it, or name")
    again = runs_sub.add_parser(
        "reproduce", help="train a finished run again and compare every logged loss"
    )
    again.add_argument("id", metavar="ID")
    inspect = sub.add_parser(
        "inspect", help="print what a checkpoint holds, or how it fits a model"
    )
    inspect.add_argument("path", metavar="PATH", help="checkpoint or state_dict file")
    inspect.add_argument(
        "--against-model",
        metavar="NAME",
        choices=C.MODELS,
        help="compare the weights with this model: what fits, what does not",
    )
    inspect.add_argument(
        "--classes",
        type=int,
        metavar="N",
        help="classes of that model (default: the checkpoint's dataset, else 10)",
    )
    check = sub.add_parser(
        "check-data",
        help="check a folder of labelled images (DIR/<class>/<image>) before training",
    )
    check.add_argument("path", metavar="DIR")
    check.add_argument(
        "--image-size",
        type=int,
        default=64,
        metavar="N",
        help="the size images are trained at, to flag far smaller ones (default 64)",
    )
    check.add_argument(
        "--fixes",
        metavar="NAME",
        help="count the folder as train --fixes NAME sees it (the overlay's "
        "exclusions and relabels; the files are never changed)",
    )
    summary = sub.add_parser(
        "summary", help="each layer's output shape, parameters and MACs; the totals"
    )
    summary.add_argument("--model", required=True, help=MODEL_HELP)
    for flag, default in (("image-size", 28), ("channels", None), ("classes", 10)):
        summary.add_argument(f"--{flag}", type=int, default=default, metavar="N")
    sub.add_parser("models", help="every model --model takes, by family")
    cli_export.add_export_parser(sub)
    cli_script.add_script_parser(sub)
    cli_lr_find.add_lr_find_parser(sub)
    cli_doctor_speed.add_doctor_speed_parser(sub)
    cli_sweep.add_sweep_parser(sub)
    cli_data_issues.add_data_issues_parser(sub)
    cli_fixes.add_fixes_parser(sub)
    summary.add_argument("--batch-size", type=int, default=256, metavar="N")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``ptcore-workbench``."""
    previous = interrupts.hold()  # kept until the command runs (see interrupts)
    try:
        return _main(argv)
    finally:
        interrupts.restore(previous)  # a command run in-process leaves no trace


def _main(argv: Sequence[str] | None) -> int:
    keep_freed_memory()  # before any tensor: every command trains or reads faster
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for --nproc
    if args.command is None:
        try:
            interrupts.release_to_window()
        except KeyboardInterrupt:
            return 130  # Ctrl+C before the window showed: it does not
        # The window's Qt only when no command is given: commands stay Qt-free.
        from workbench.app import run_window

        return run_window()
    commands = {
        "train": cli_train.cmd_train,
        "predict": cli_predict.cmd_predict,
        "devices": cli_devices.cmd_devices,
        "inspect": cli_inspect.cmd_inspect,
        "check-data": cli_check_data.cmd_check_data,
        "runs": run_command,
        "summary": cli_models.cmd_summary,
        "models": cli_models.cmd_models,
        "export": cli_export.cmd_export,
        "script": cli_script.cmd_script,
        "lr-find": cli_lr_find.cmd_lr_find,
        "doctor-speed": cli_doctor_speed.cmd_doctor_speed,
        "sweep": cli_sweep.cmd_sweep,
        "data-issues": cli_data_issues.cmd_data_issues,
        "fixes": cli_fixes.cmd_fixes,
    }
    try:
        if not interrupts.is_rank():  # a rank holds until its first step
            interrupts.release()
        return commands[args.command](args)
    except USER_ERRORS as exc:
        sys.stderr.write(f"ptcore-workbench {args.command}: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
