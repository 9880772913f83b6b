"""A training set made slow on purpose: the speed doctor's data-bound case.

A module of its own, so DataLoader workers started with ``spawn`` import the
class by name (a monkeypatch in the test process would not reach them).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from torch.utils.data import Dataset

from workbench.core.config import TrainConfig
from workbench.core.data.loaders import DataLoaderBatches
from workbench.core.data.registry import ImageArrays
from workbench.core.train.engine import prepare_run
from workbench.core.training_run import TrainingRun

SECONDS_PER_IMAGE = 0.002


class SlowDataset(Dataset[Any]):
    """``dataset``, sleeping ``seconds`` before each image (a slow decode)."""

    def __init__(self, dataset: Dataset[Any], seconds: float = SECONDS_PER_IMAGE):
        self.dataset = dataset
        self.seconds = seconds

    def __len__(self) -> int:
        return len(self.dataset)  # type: ignore[arg-type]

    def __getitem__(self, index: int) -> Any:
        time.sleep(self.seconds)
        return self.dataset[index]


def slow_prepare(
    arrays: ImageArrays | None = None, seconds: float = SECONDS_PER_IMAGE
) -> Callable[[TrainConfig], TrainingRun]:
    """``prepare_run`` whose DataLoader training images each take ``seconds``.

    The fast in-memory loader reads the arrays, not a dataset, so it stays
    fast: the change a data-bound run should be advised to make.
    """

    def prepare(cfg: TrainConfig) -> TrainingRun:
        run = prepare_run(cfg, arrays=arrays)
        train = run.loaders.train
        if isinstance(train, DataLoaderBatches):
            slow = DataLoaderBatches(
                SlowDataset(train.dataset, seconds),
                batch_size=cfg.batch_size,
                shuffle=True,
                seed=cfg.seed,
                device=run.device,
                num_workers=cfg.workers,
                pin_memory=cfg.pin_memory,
            )
            run.loaders = dataclasses.replace(run.loaders, train=slow)
        return run

    return prepare
