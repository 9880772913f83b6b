"""``devices``: every CPU/CUDA/MPS device, and why one is unavailable."""

from __future__ import annotations

import argparse

from workbench.cli.console import say
from workbench.core.train.devices import best_device, list_devices


def cmd_devices(_: argparse.Namespace) -> int:
    """List every device and why an unavailable one cannot be used."""
    for info in list_devices():
        status = "available" if info.available else f"unavailable: {info.reason}"
        say(f"{info.spec:8} {info.name}  ({status})")
    say(f"auto -> {best_device()}")
    return 0
