"""Which devices this machine can train on, and why the others cannot."""

from __future__ import annotations

import functools
import logging
import platform
import sys
from dataclasses import dataclass

import torch

log = logging.getLogger(__name__)


class DeviceError(ValueError):
    """A device the user asked for that cannot be used; the text says why."""


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """One device choice: ``spec`` is what config and ``torch.device`` accept."""

    spec: str
    kind: str
    name: str
    available: bool
    reason: str = ""


@functools.cache
def _say_cpuinfo_skipped() -> None:
    """Log once per process that the CPU's name comes from ``platform``."""
    log.debug(
        "/proc/cpuinfo skipped: not Linux (%s); the CPU's name comes from platform",
        sys.platform,
    )


def _cpu_name() -> str:
    # /proc/cpuinfo has the marketing name; platform.processor() is often only
    # the architecture on Linux.
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
                for line in cpuinfo:
                    if line.startswith("model name"):
                        return line.split(":", 1)[1].strip()
        except OSError:
            pass
    else:
        _say_cpuinfo_skipped()
    return platform.processor() or platform.machine() or "CPU"


def _cuda_devices() -> list[DeviceInfo]:
    if not torch.backends.cuda.is_built():
        return [
            DeviceInfo("cuda", "cuda", "CUDA", False, "this PyTorch build has no CUDA")
        ]
    if not torch.cuda.is_available():
        return [
            DeviceInfo(
                "cuda",
                "cuda",
                "CUDA",
                False,
                "no CUDA GPU or driver found (PyTorch was built with CUDA "
                f"{torch.version.cuda})",
            )
        ]
    return [
        DeviceInfo(f"cuda:{i}", "cuda", torch.cuda.get_device_name(i), True)
        for i in range(torch.cuda.device_count())
    ]


def _mps_device() -> DeviceInfo:
    mps = torch.backends.mps
    if mps.is_available():
        return DeviceInfo("mps", "mps", "Apple GPU (Metal)", True)
    if not mps.is_built():
        reason = "MPS needs macOS on Apple silicon and a PyTorch built with MPS"
    else:
        reason = "MPS is built in but not usable (macOS 12.3+ on Apple silicon needed)"
    return DeviceInfo("mps", "mps", "Apple GPU (Metal)", False, reason)


def list_devices() -> list[DeviceInfo]:
    """CPU first, then each CUDA GPU (or why none), then MPS (or why not)."""
    cpu = DeviceInfo("cpu", "cpu", _cpu_name(), True)
    return [cpu, *_cuda_devices(), _mps_device()]


def best_device() -> str:
    """The spec ``auto`` resolves to: the first GPU that works, else the CPU."""
    for info in list_devices():
        if info.available and info.kind != "cpu":
            return info.spec
    return "cpu"


def resolve_device(spec: str) -> torch.device:
    """Turn ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps`` into a usable device.

    Raises
    ------
    DeviceError
        When the device does not exist here; the message carries the reason.
    """
    spec = spec.strip().lower()
    if spec == "auto":
        spec = best_device()
    try:
        device = torch.device(spec)
    except RuntimeError:
        raise DeviceError(
            f"device: {spec!r} is not one of auto, cpu, cuda, cuda:N, mps"
        ) from None
    if device.type == "cpu":
        return device
    infos = [i for i in list_devices() if i.kind == device.type]
    if device.type not in ("cuda", "mps") or not infos:
        raise DeviceError(f"device: {spec!r} is not supported (use cpu, cuda or mps)")
    usable = [i for i in infos if i.available]
    if not usable:
        raise DeviceError(f"device {spec!r} is not available: {infos[0].reason}")
    if device.type == "cuda":
        index = device.index or 0
        if index >= len(usable):
            raise DeviceError(
                f"device {spec!r} does not exist: this machine has {len(usable)} "
                "CUDA device(s)"
            )
        return torch.device("cuda", index)
    return device
