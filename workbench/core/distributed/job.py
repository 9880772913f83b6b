"""A multi-process run started from another process: its command and its folder.

The window's Processes setting and ``sweep --nproc`` both run ``train --nproc
N`` as a child and learn where its run folder is from the line rank 0 prints.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# What ``train`` prints once its run folder exists (workbench/cli/train.py).
RUN_FOLDER_LINE = re.compile(r"^run folder: (.+?) \(checkpoint saved", re.MULTILINE)


def train_command(config: str | Path, nproc: int) -> list[str]:
    """``python -m workbench train --config CONFIG --nproc N --quiet``."""
    return [
        sys.executable,
        "-m",
        "workbench",
        "train",
        "--config",
        str(config),
        "--nproc",
        str(nproc),
        "--quiet",
    ]
