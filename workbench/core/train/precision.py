"""``precision = "auto"``: bf16 where this machine computes it natively, else fp32.

Measured with ``bench/time_to_accuracy.py`` on a 2-core Xeon with AVX512-BF16
(the default ``small-cnn``, one epoch of MNIST): bf16 autocast trained 1.45x
faster than fp32 (7.0 s against 10.1 s) and reached the same test accuracy
(three seeds: 99.06, 99.22, 99.20% against 99.05, 99.13, 99.14%). A CPU
without native bf16 (no AVX512-BF16, no AMX) emulates it and is slower than
fp32, so auto keeps fp32 there. On GPUs auto keeps fp32 too: the small models
here are not measured faster in bf16 on them yet; choose bf16 or fp16 yourself.
"""

from __future__ import annotations

import torch

from workbench.core.train.devices import DeviceError, resolve_device

AUTO = "auto"


def native_bf16_cpu() -> bool:
    """True if this CPU has bf16 instructions oneDNN uses (AVX512-BF16 or AMX)."""
    cpu = torch.cpu
    return bool(cpu._is_avx512_bf16_supported() or cpu._is_amx_tile_supported())


def resolve_precision(choice: str, device: torch.device) -> tuple[str, str]:
    """The precision a run trains in for ``choice``, and why (empty if chosen).

    ``choice`` is a config's ``precision``; anything but ``auto`` is kept.
    """
    if choice != AUTO:
        return choice, ""
    if device.type == "cpu" and native_bf16_cpu():
        return "bf16", "auto: bf16, which this CPU computes natively"
    if device.type == "cpu":
        return "fp32", "auto: fp32, as this CPU has no native bf16"
    return "fp32", f"auto: fp32 on {device.type}"


def precision_for(choice: str, device_spec: str) -> str:
    """:func:`resolve_precision` for a config's device spec, on this machine.

    A device this machine lacks (a script written for a GPU here) still names
    its kind, which is all the choice depends on.
    """
    try:
        device = resolve_device(device_spec)
    except DeviceError:
        device = torch.device(device_spec)
    return resolve_precision(choice, device)[0]
