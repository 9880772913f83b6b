"""A training run's state: what the engine trains and what a checkpoint stores.

:class:`TrainingRun` is everything a run needs to continue (model, optimizer,
data, position); :class:`MetricHistory` is what it has logged so far, typed:
the loss of each logged step and the :class:`EpochMetrics` of every epoch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from workbench.core.config import TrainConfig
from workbench.core.data.build import Loaders
from workbench.core.events import EpochMetrics


@dataclass
class MetricHistory:
    """What a run has logged so far; saved in checkpoints and re-plotted on load.

    Attributes
    ----------
    steps : list of (int, float)
        ``(global_step, loss)`` of every logged step.
    epochs : list of EpochMetrics
        Every epoch's metrics (a stopped partial epoch too), with its confusion
        matrix.
    speeds : list of (int, float)
        ``(global_step, images_per_s)`` of every logged step (empty in
        checkpoints of earlier versions, which kept only the epochs' speeds).
    """

    steps: list[tuple[int, float]] = field(default_factory=list)
    epochs: list[EpochMetrics] = field(default_factory=list)
    speeds: list[tuple[int, float]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Builtins only (checkpoint-safe); epochs as :meth:`EpochMetrics.to_dict`."""
        document: dict[str, Any] = {
            "steps": [list(s) for s in self.steps],
            "epochs": [e.to_dict() for e in self.epochs],
        }
        if self.speeds:  # absent, an earlier version's document stays the same
            document["speeds"] = [list(s) for s in self.speeds]
        return document

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MetricHistory:
        """Inverse of :meth:`to_dict`; reads every version's checkpoints."""
        steps = [(int(s), float(loss)) for s, loss in data.get("steps", [])]
        epochs = [EpochMetrics.from_record(e) for e in data.get("epochs", [])]
        speeds = [(int(s), float(rate)) for s, rate in data.get("speeds", [])]
        return cls(steps, epochs, speeds)


@dataclass
class TrainingRun:
    """Everything a run needs to continue; a checkpoint is a snapshot of it."""

    config: TrainConfig
    model: nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler | None
    loaders: Loaders
    device: torch.device
    total_steps: int
    # What the run trains in: config.precision with "auto" resolved for the device.
    precision: str = "fp32"
    log_every: int = 1  # see engine.resolve_log_every
    epoch: int = 0  # epochs completed
    batch_in_epoch: int = 0  # batches of the current epoch already trained
    global_step: int = 0
    history: MetricHistory = field(default_factory=MetricHistory)
    notices: list[str] = field(default_factory=list)
    # DistributedDataParallel around ``model`` when several processes train
    # (workbench.core.distributed.ddp); the model itself stays what checkpoints store.
    ddp: nn.Module | None = None
    # Every rank's RNG state at the last epoch end or stop (several processes
    # only): a checkpoint keeps them, so each rank's dropout resumes exactly.
    rank_rng: list[dict[str, torch.Tensor]] | None = None
    # The loss's weight of each class, float32 on ``device`` (config
    # ``class_weights``); None: the plain mean (workbench.core.train.class_weights).
    class_weights: torch.Tensor | None = None
    # Split each logged step's time into phases (train.step_clock); off only
    # to measure what the split itself costs.
    time_phases: bool = True

    @property
    def train_module(self) -> nn.Module:
        """What the training step calls: the DDP wrapper, or the model."""
        return self.model if self.ddp is None else self.ddp

    @property
    def steps_per_epoch(self) -> int:
        """Batches in one training epoch."""
        return len(self.loaders.train)

    @property
    def finished(self) -> bool:
        """True when the run has trained all its steps."""
        return self.global_step >= self.total_steps
