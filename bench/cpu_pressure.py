"""The Linux CPU pressure, printed by the benches so a noisy run shows."""

from __future__ import annotations

import os
from pathlib import Path


def cpu_pressure() -> str:
    """``some avg10`` from /proc/pressure/cpu, or a dash where unavailable."""
    try:
        line = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return "-"
    fields = dict(item.split("=") for item in line.split()[1:])
    return f"{fields.get('avg10', '?')}% (avg10), {fields.get('avg60', '?')}% (avg60)"


def cpu_steal_seconds() -> float:
    """CPU seconds the hypervisor has taken from this machine since boot.

    The ``steal`` column of /proc/stat (all CPUs, in clock ticks): time a
    virtual CPU was ready to run but the host ran something else. A bench that
    compares two runs reads it before and after each: a run that lost seconds to
    the host is slower for reasons of the host's, not the code's. 0.0 where
    unavailable.
    """
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0
