"""BatchNorm on several processes: statistics per process, or shared on CUDA.

DDP averages gradients and leaves BatchNorm alone: each process normalises its
own share of a batch with that share's mean and variance, so a BatchNorm model
trains slightly differently from one process. ``sync_bn`` converts the layers
to ``torch.nn.SyncBatchNorm``, which gathers the statistics of every process at
each training forward; its training forward refuses CPU tensors, so on the CPU
the option changes nothing and the run says so once. In one process every layer
already sees the whole batch: ``sync_bn`` is accepted there without a word, so a
config written for several processes stays usable in the window.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm

# Said once per run (rank 0 prints it) when the model has BatchNorm layers.
_PER_PROCESS = (
    "BatchNorm statistics are per process: each normalises its own share of a "
    "batch, so this model trains slightly differently from one process. "
)
BATCHNORM_NOTICE = _PER_PROCESS + (
    "--sync-bn shares them over the processes on CUDA GPUs (SyncBatchNorm)."
)
# Instead of BATCHNORM_NOTICE when --sync-bn was asked for on the CPU.
SYNC_BN_CPU_NOTICE = _PER_PROCESS + (
    "--sync-bn changes nothing here: SyncBatchNorm runs only on CUDA GPUs."
)


def has_batchnorm(model: nn.Module) -> bool:
    """True when any layer of ``model`` is a BatchNorm (SyncBatchNorm included)."""
    return any(isinstance(m, _BatchNorm) for m in model.modules())


def batchnorm_setup(
    model: nn.Module, device: torch.device, *, sync_bn: bool, world: int
) -> tuple[nn.Module, str | None]:
    """The module DDP wraps, and the one notice about its BatchNorm (or None).

    With ``sync_bn`` on CUDA and several processes the BatchNorm layers become
    SyncBatchNorm. The conversion swaps the layers inside ``model`` and keeps
    their parameters and buffers (the same tensors: the optimizer and the
    state_dict keys are unchanged); it returns ``model`` itself unless the
    whole model is one BatchNorm layer.
    """
    if world <= 1 or not has_batchnorm(model):
        return model, None
    if not sync_bn:
        return model, BATCHNORM_NOTICE
    if device.type != "cuda":
        return model, SYNC_BN_CPU_NOTICE
    return nn.SyncBatchNorm.convert_sync_batchnorm(model), None
