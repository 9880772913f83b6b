"""The model a window shows before a run: its size, what training it costs, its build.

Building a large torchvision model takes seconds (``regnet_y_128gf``, 640 M
parameters: about 7 s on 2 CPU cores), so the window builds its preview in
another thread when :func:`estimate_parameters` (no build: the weights' own
count, or the architecture on the ``meta`` device) reaches
:data:`BACKGROUND_FROM`.

:func:`build_preview` leaves the process's random generator alone: every
random draw of the initialisation goes to a private generator seeded as
``build_model(seed=...)`` seeds the global one, so the weights are the same bit
for bit, and a run training in another thread (building its own seeded model,
drawing dropout masks) is not disturbed. A torch function mode does it; modes
belong to the thread that enters them. It also checks ``cancel`` at every torch
call, so a build nobody wants any more stops early.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

import torch
from torch import nn

from workbench.core.model_offer import ModelKey
from workbench.core.models.builtins import build_model, build_on_meta
from workbench.core.models.catalog import (
    BUILTIN_MODELS,
    LEGACY_MODELS,
    is_torchvision,
    weights_enum_class,
)
from workbench.core.models.private_random import PrivateRandom

# Estimated parameters from which a preview is built in another thread. Below
# it a build takes at most about 0.1 s on 2 CPU cores (mobilenet_v3_small,
# 2.5 M: 0.06 s); googlenet (6.6 M) takes 1.1 s, resnet18 (11.7 M) 0.2-0.4 s.
BACKGROUND_FROM = 3_000_000

# Training with Adam in float32 keeps four numbers per parameter: the weight,
# its gradient and Adam's two moving averages.
BYTES_PER_PARAMETER = 4 * 4


def estimate_parameters(key: ModelKey) -> int | None:
    """About how many parameters the model of ``key`` has, without building it.

    A torchvision model: its weights' published count (for 1000 classes; the
    head differs a little). A model file: the architecture on the ``meta``
    device (milliseconds; the file's code runs). None for the built-ins (all
    under 1.2 M parameters: a real build takes milliseconds, and a lazy one's
    first dry run on ``meta`` seconds) and when the architecture cannot be
    made (its real build says why).
    """
    name, classes, shape = key
    if name in BUILTIN_MODELS or name in LEGACY_MODELS:
        return None
    if is_torchvision(name):
        count = weights_enum_class(name).DEFAULT.meta.get("num_params")
        return int(count) if count is not None else None
    try:
        model = build_on_meta(name, classes, shape)
    except Exception:  # the real build reports the problem
        return None
    return sum(p.numel() for p in model.parameters())


def build_preview(
    key: ModelKey,
    seed: int | None = None,
    cancel: Callable[[], bool] = lambda: False,
) -> nn.Module:
    """``build_keyed(key, seed)`` without touching the global random generator.

    Safe in any thread, also while a run trains in another. Raises
    :class:`BuildCancelled` once ``cancel()`` is true, ConfigError as
    :func:`~workbench.core.models.builtins.build_model` does.
    """
    generator = torch.Generator()
    if seed is None:
        generator.seed()  # fresh, from the operating system
    else:
        generator.manual_seed(seed)
    with PrivateRandom(generator, cancel):
        return build_model(key[0], key[1], input_shape=key[2])


# ------------------------------------------------------------------ what it costs


def training_memory(parameters: int) -> int:
    """Bytes for the weights, gradients and Adam state of ``parameters`` (float32)."""
    return parameters * BYTES_PER_PARAMETER


@functools.cache
def device_memory(kind: str) -> int | None:
    """Total memory of the device a run of ``kind`` trains on (bytes), if known.

    ``cuda``: the first GPU's; ``cpu`` and ``mps`` (memory shared with the
    CPU): the machine's physical memory.
    """
    if kind == "cuda":
        if not torch.cuda.is_available():
            return None
        return int(torch.cuda.get_device_properties(0).total_memory)
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX (Windows)
        return None


def training_cost(
    parameters: int, memory: int | None, owner: str = "this computer"
) -> str:
    """One line: what training ``parameters`` with Adam takes, and if it fits.

    ``memory``: what ``owner`` (this computer, the GPU) has, in bytes; None
    when unknown. Activations come on top: they grow with the batch.
    """
    need = training_memory(parameters)
    line = (
        f"Training needs about {_size(need)} for weights, gradients and Adam "
        f"state ({parameters / 1e6:,.1f} M parameters \u00d7 16 bytes)"
    )
    if memory is None:
        return line
    if need > memory:
        return f"{line}: more than {owner}'s {_size(memory)}"
    return f"{line}; {owner} has {_size(memory)}"


def _size(n: int) -> str:
    return f"{n / 2**30:,.1f} GiB" if n >= 2**30 else f"{n / 2**20:,.0f} MiB"
