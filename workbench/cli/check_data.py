"""``check-data``: a folder of labelled images checked before training.

``--fixes NAME`` checks the folder as ``train --fixes NAME`` would see it: the
overlay's excluded images left out, its relabelled ones counted under their
new class (the files are never changed).
"""

from __future__ import annotations

import argparse

from workbench.cli.console import say
from workbench.core import config as C
from workbench.core.data.fixes import Overlay, check_fixed_folder
from workbench.core.data.folder_check import DataReport, check_folder
from workbench.core.data.registry import FOLDER


def cmd_check_data(args: argparse.Namespace) -> int:
    """Report images per class and every defect; 0 if the data can train, else 1."""
    if not args.fixes:  # as train: --fixes "" is none
        report = check_folder(args.path, image_size=args.image_size)
    else:
        report = _check_with_fixes(args.path, args.fixes, args.image_size)
    for line in report.lines():
        say(line)
    return 0 if report.can_train else 1


def _check_with_fixes(path: str, name: str, image_size: int) -> DataReport:
    """The report with the overlay ``name`` applied (ConfigError/DataError if bad)."""
    cfg = C.TrainConfig(dataset=FOLDER, data_dir=path)
    # Opened before the slow decoding: a damaged or foreign overlay fails at once.
    overlay = Overlay.open(name, cfg, must_exist=True)
    fixed = cfg.replace(fixes=overlay.config_entries(), fixes_name=name)
    return check_fixed_folder(fixed, image_size)
