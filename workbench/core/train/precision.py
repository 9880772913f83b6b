"""``precision = "auto"``: bf16 where this machine computes it natively, else fp32.

On a CPU with AVX512-BF16, bf16 autocast trains the default ``small-cnn``
about 1.45x as fast as fp32, to the same test accuracy
(``bench/time_to_accuracy.py``). A CPU without native bf16 (no AVX512-BF16,
no AMX) emulates it and is slower than fp32, so auto keeps fp32 there. On GPUs
auto keeps fp32 too: no gain from bf16 is known for the small models here;
choose bf16 or fp16 yourself.
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
