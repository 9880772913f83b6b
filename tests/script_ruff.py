"""A written script checked as its promise says: code ruff leaves as it is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RUFF = [sys.executable, "-m", "ruff"]
RULES = "E,F,W,I,UP,B"


def assert_ruff_accepts(script: Path) -> None:
    """``ruff check`` finds nothing in ``script``; ``ruff format`` changes nothing."""
    lint = [*RUFF, "check", "--isolated", "--select", RULES, str(script)]
    checked = subprocess.run(lint, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout
    formatted = subprocess.run(
        [*RUFF, "format", "--isolated", "--check", "--diff", str(script)],
        capture_output=True,
        text=True,
    )
    assert formatted.returncode == 0, formatted.stdout
