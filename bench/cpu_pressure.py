"""The Linux CPU pressure, printed by the benches so a noisy run shows."""

from __future__ import annotations

from pathlib import Path


def cpu_pressure() -> str:
    """``some avg10`` from /proc/pressure/cpu, or a dash where unavailable."""
    try:
        line = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return "-"
    fields = dict(item.split("=") for item in line.split()[1:])
    return f"{fields.get('avg10', '?')}% (avg10), {fields.get('avg60', '?')}% (avg60)"
