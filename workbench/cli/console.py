"""How the command line writes to the terminal (shared by every command)."""

from __future__ import annotations

import math
import sys

from tqdm import tqdm


def say(text: str) -> None:
    """Print a line without breaking a progress bar that is on screen."""
    tqdm.write(text, file=sys.stdout)


def percent(value: float) -> str:
    """``0.9912`` -> ``"99.12%"``; NaN (nothing measured) -> ``"n/a"``."""
    return "n/a" if math.isnan(value) else f"{100 * value:.2f}%"
