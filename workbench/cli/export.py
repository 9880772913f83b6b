"""The command line's ``export``: write each format, verify it, print the figures."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from workbench.cli.console import say
from workbench.core.crossval.ensemble import find_group
from workbench.core.export.formats import FAILED_MARKER, export_checkpoint, export_group
from workbench.core.runs.best_or_latest import pick_checkpoint

if TYPE_CHECKING:  # the core (and torch) load only when the command runs
    from workbench.core.export.formats import FormatResult

EXPORT_FORMATS = ("torchscript", "exported", "onnx")


def add_export_parser(sub: argparse._SubParsersAction) -> None:
    """``export CHECKPOINT [--format ...] --out DIR``."""
    export = sub.add_parser(
        "export",
        help="export a checkpoint's model (TorchScript, torch.export, ONNX) and "
        "verify each file against it",
    )
    export.add_argument(
        "checkpoint",
        metavar="CHECKPOINT",
        help="a checkpoint file, a run folder (its latest weights), or a "
        "cross-validation's group (its folder or id): its fold models as one "
        "averaging ensemble",
    )
    export.add_argument(
        "--best",
        action="store_true",
        help="export the run's best epoch (best.pt) instead of its latest weights",
    )
    export.add_argument(
        "--format",
        nargs="+",
        choices=EXPORT_FORMATS,
        default=list(EXPORT_FORMATS),
        help="formats to write (default: all three)",
    )
    export.add_argument("--out", required=True, metavar="DIR", help="output folder")


def format_line(r: FormatResult) -> str:
    """One format's line: file, agreement, largest difference, verdict."""
    v = r.verification
    if v is None:
        return f"{r.format:<12} {'-':<10} {r.message}"
    return (
        f"{r.format:<12} {r.file:<10} "
        f"agreement {100 * v.agreement:.2f}% ({v.agreed}/{v.total})  "
        f"max |diff| {v.max_diff:.1e}  {r.message}"
    )


def cmd_export(args: argparse.Namespace) -> int:
    """0 when every format exported and verified; 1 otherwise (files kept)."""
    group = find_group(args.checkpoint)
    if group is not None:
        result = export_group(group, args.out, args.format)
    else:
        checkpoint = pick_checkpoint(args.checkpoint, args.best)
        result = export_checkpoint(checkpoint, args.out, args.format)
    if result.weights:  # a run's latest or best: say which
        say(f"weights: {result.weights}")
    for fmt in result.formats:
        say(format_line(fmt))
    good = sum(r.passed for r in result.formats)
    total = len(result.formats)
    if result.passed:
        say(f"exported {result.model} to {result.out_dir}: {good}/{total} verified")
        return 0
    marker = (
        f"; marked {result.out_dir / FAILED_MARKER}"
        if result.verification_failed
        else ""
    )
    say(
        f"export of {result.model} to {result.out_dir} FAILED: {good}/{total} "
        f"verified{marker}"
    )
    return 1
