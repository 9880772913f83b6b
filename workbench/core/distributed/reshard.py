"""Resuming a checkpoint on another number of processes than the one that saved it.

Checkpoints store ``world_size``, the number of processes that trained the run
(absent in older files: one). Any number of processes trains the same global
batches in the same order (:mod:`workbench.core.distributed.ddp`), so the data a resumed
run draws does not depend on it; what does is the order in which gradients are
summed (rounding) and, for BatchNorm, which samples its statistics cover.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from workbench.core.distributed.sync_bn import has_batchnorm


def saved_world_size(payload: dict[str, Any]) -> int:
    """How many processes trained the checkpoint's run (1 when it does not say)."""
    value = payload.get("world_size", 1)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        return 1  # an unreadable count only words a notice: assume one process
    return value


def resize_notice(saved: int, now: int, model: nn.Module) -> str | None:
    """The one notice for a run saved by ``saved`` processes continuing on ``now``.

    None when the counts agree.
    """
    if saved == now:
        return None
    batchnorm = has_batchnorm(model)
    statistics = (
        ", and BatchNorm statistics cover each process's share of a batch "
        "unless SyncBatchNorm shares them"
        if batchnorm
        else ""
    )
    return (
        f"this checkpoint was saved by {_processes(saved)} and continues on "
        f"{_processes(now)}: the batches and their order stay the same (the "
        "processes split each batch of the one-process order), but the gradients "
        f"are summed in another order, which rounds differently{statistics}; the "
        "continuation is close to, not bit for bit, the run it would have been "
        f"on {_processes(saved)}"
    )


def _processes(count: int) -> str:
    return "1 process" if count == 1 else f"{count} processes"
