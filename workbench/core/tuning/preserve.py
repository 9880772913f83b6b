"""Put a run back exactly as it was after trying something on it.

The learning-rate finder and its probes train the very run the user will train
(its data, model, freeze mask, precision and optimizer). :func:`preserved`
keeps everything training reads or changes and restores it on the way out, so
the run then trains as if nothing had happened: the same per-step losses and
bit-identical weights.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from workbench.core.checkpoints.io import rng_states, set_rng_states
from workbench.core.training_run import MetricHistory, TrainingRun


@dataclass
class _Kept:
    model: dict[str, torch.Tensor]
    trains: dict[str, bool]
    optimizer: dict[str, Any]
    scheduler: dict[str, Any] | None
    position: tuple[int, int, int]  # epoch, batch in epoch, global step
    loader_epoch: int
    history: MetricHistory
    notices: list[str]
    rng: dict[str, Any]
    modes: dict[str, bool]  # each module's train/eval mode


def _keep(run: TrainingRun) -> _Kept:
    model = run.model
    return _Kept(
        model={k: v.detach().clone() for k, v in model.state_dict().items()},
        trains={n: p.requires_grad for n, p in model.named_parameters()},
        optimizer=copy.deepcopy(run.optimizer.state_dict()),
        scheduler=(
            copy.deepcopy(run.scheduler.state_dict()) if run.scheduler else None
        ),
        position=(run.epoch, run.batch_in_epoch, run.global_step),
        loader_epoch=run.loaders.train.epoch,
        history=copy.deepcopy(run.history),
        notices=list(run.notices),
        rng=copy.deepcopy(rng_states()),
        modes={n: m.training for n, m in model.named_modules()},
    )


def _put_back(run: TrainingRun, kept: _Kept) -> None:
    model = run.model
    with torch.no_grad():
        for name, value in model.state_dict().items():
            value.copy_(kept.model[name])
    for name, param in model.named_parameters():
        param.requires_grad_(kept.trains[name])
        param.grad = None
    run.optimizer.load_state_dict(kept.optimizer)
    run.optimizer.zero_grad(set_to_none=True)
    if run.scheduler is not None and kept.scheduler is not None:
        run.scheduler.load_state_dict(kept.scheduler)
    run.epoch, run.batch_in_epoch, run.global_step = kept.position
    run.loaders.train.set_epoch(kept.loader_epoch)
    run.history = kept.history
    run.notices[:] = kept.notices
    set_rng_states(kept.rng)
    for name, module in model.named_modules():
        module.training = kept.modes[name]


@contextmanager
def preserved(run: TrainingRun) -> Iterator[None]:
    """Within the block ``run`` may be trained; afterwards it is as it was.

    Also after an exception (a diverged loss, a stop): the run is never left
    half-changed.
    """
    kept = _keep(run)
    try:
        yield
    finally:
        _put_back(run, kept)
