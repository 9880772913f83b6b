"""``check-data``: a folder of labelled images checked before training."""

from __future__ import annotations

import argparse

from workbench.cli.console import say
from workbench.core.data.folder_check import check_folder


def cmd_check_data(args: argparse.Namespace) -> int:
    """Report images per class and every defect; 0 if the data can train, else 1."""
    report = check_folder(args.path, image_size=args.image_size)
    for line in report.lines():
        say(line)
    return 0 if report.can_train else 1
