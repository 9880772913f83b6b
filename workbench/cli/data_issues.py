"""``data-issues``: where the data is wrong, from predictions no model made on its
own training images.

Cross-validates the config's data (or reuses a finished cross-validation of the
same data and settings), then lists likely label errors, top losses, the most
confused class pairs and duplicate images; ``--csv`` and ``--json`` keep them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli.console import say
from workbench.cli.folds import cross_validate
from workbench.cli.run_outputs import OutputFile
from workbench.cli.train_flags import add_train_flags, config_from_args
from workbench.core import config as C
from workbench.core.atomic_files import write_atomically
from workbench.core.crossval.campaign import check_fold_count
from workbench.core.crossval.shared_features import sharing_features
from workbench.core.data.fixes import classes_of
from workbench.core.data_issues.held_out import (
    matching_group,
    training_probabilities,
    validation_probabilities,
)
from workbench.core.data_issues.images import named_images
from workbench.core.data_issues.label_errors import RANKINGS
from workbench.core.data_issues.report import DataIssues, find_data_issues
from workbench.core.data_issues.stubborn import stubborn_errors

DEFAULT_FOLDS = 5
SHOWN = 10  # lines of each list on the console


def add_data_issues_parser(sub: argparse._SubParsersAction) -> None:
    """``data-issues [train's flags] [--folds K] [--csv FILE] [--json FILE]``."""
    parser = sub.add_parser(
        "data-issues",
        help="find likely label errors, top losses, confused classes and "
        "duplicates, from cross-validated predictions (train's flags choose the "
        "data and settings)",
    )
    add_train_flags(parser)
    parser.add_argument(
        "--rank-by",
        choices=RANKINGS,
        default="self_confidence",
        help="how likely label errors are ordered (default: self_confidence)",
    )
    parser.add_argument(
        "--top",
        type=int,
        default=None,
        metavar="N",
        help="top losses kept in --csv and --json (default: 1%% of the images)",
    )
    parser.add_argument("--csv", metavar="FILE", help="one row per flagged image")
    parser.add_argument("--json", metavar="FILE", help="the lists as JSON")


def cmd_data_issues(args: argparse.Namespace) -> int:
    """0 when the lists were made (and written); 130 when a fold was stopped."""
    # Before anything trains: an output given as a folder is one line.
    outputs = [
        OutputFile(flag, path, _write_text)
        for flag, path in (("--csv", args.csv), ("--json", args.json))
        if path
    ]
    if args.nproc > 1:
        raise C.ConfigError(
            "data-issues trains its folds in this process: give --nproc 1"
        )
    base = C.load_config(args.config) if args.config else C.TrainConfig()
    args.folds = DEFAULT_FOLDS if args.folds is None else args.folds
    check_fold_count(args.folds)
    cfg = config_from_args(args, base).replace(fold=0)
    if args.autosave_every is None and base.autosave_every == 1:
        # Each fold is saved when it ends, not after every epoch: a big frozen
        # backbone's checkpoint a fold an epoch was most of the pass's time.
        cfg = cfg.replace(autosave_every=cfg.resolved_epochs)
    images = named_images(cfg)
    group = matching_group(cfg, images.arrays.train_labels)
    if group is not None:
        say(f"reusing the held-out predictions of {group.id} (same data, settings)")
    else:
        # The folds share one frozen backbone's features: each image's once.
        with sharing_features():
            campaign, code = cross_validate(cfg, args.quiet, args.tensorboard)
        if code:
            return code
        group = campaign.group
        assert group is not None
    say(f"group: {group.path} (the held-out predictions)")
    say("predicting the validation images with the fold models' ensemble")
    issues = find_data_issues(
        images,
        training_probabilities(group),
        validation_probabilities(group, cfg),
        classes_of(cfg),
        args.rank_by,
        stubborn_errors(cfg, images),
    )
    top = args.top if args.top is not None else max(1, round(0.01 * len(issues.names)))
    for line in summary_lines(issues):
        say(line)
    failed = False
    for out in outputs:
        text = issues.csv_text(top) if out.flag == "--csv" else issues.json_text(top)
        error = out.write_at_end(text)
        say(f"error: {error}" if error else f"wrote {out.path}")
        failed = failed or bool(error)
    return 1 if failed else 0


def summary_lines(issues: DataIssues) -> list[str]:
    """What the console shows: counts, and the head of each list."""
    names = issues.class_names
    found = issues.label_issues
    errors = "error" if len(found.index) == 1 else "errors"
    lines = [
        f"{len(issues.names):,} images; {len(found.index):,} likely label {errors} "
        "(confident learning):"
    ]
    for i, given, suggested, score in list(
        zip(found.index, found.given, found.suggested, found.score, strict=True)
    )[:SHOWN]:
        lines.append(
            f"  {issues.names[i]}: labelled {names[given]}, likely {names[suggested]} "
            f"(self-confidence {score:.3f})"
        )
    lines.append("top losses:")
    for i in issues.top_losses(SHOWN):
        lines.append(
            f"  {issues.names[i]}: labelled {names[issues.labels[i]]}, predicted "
            f"{names[int(issues.probabilities[i].argmax())]} "
            f"(loss {issues.losses[i]:.2f})"
        )
    lines.append("most-confused classes (labelled -> predicted: images):")
    for pair in issues.confused[:SHOWN]:
        lines.append(f"  {names[pair.given]} -> {names[pair.predicted]}: {pair.count}")
    stubborn = issues.stubborn
    if stubborn is not None and stubborn.runs:
        count = len(stubborn.runs)
        lines.append(
            f"stubborn errors: {len(stubborn.rows):,} images every one of the "
            f"{count} finished run{'s' if count != 1 else ''} on this data got wrong:"
        )
        for i in stubborn.rows[:SHOWN]:
            lines.append(
                f"  {issues.names[i]}: labelled {names[issues.labels[i]]}, held-out "
                f"prediction {names[int(issues.probabilities[i].argmax())]}"
            )
    else:
        lines.append("stubborn errors: no finished run on this data to ask")
    exact = sum(pair.exact for pair in issues.duplicates)
    lines.append(
        f"duplicates across classes or splits: {exact} exact, "
        f"{len(issues.duplicates) - exact} near"
    )
    for pair in issues.duplicates[:SHOWN]:
        a, b = pair.first, pair.second
        lines.append(
            f"  {issues.names[a]} ({names[issues.labels[a]]}) ~ {issues.names[b]} "
            f"({names[issues.labels[b]]}): similarity {pair.similarity:.3f}"
        )
    return lines


def _write_text(path: Path, text: str) -> None:
    write_atomically(path, lambda handle: handle.write(text.encode("utf-8")))
