"""Which model a config asks for, and a weights file offered to that model.

A model's shapes follow its architecture, the number of classes and the input
shape (channels, height, width): :func:`model_key`. Loading weights compares the
file with a fresh model of that key: :func:`offer_weights`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from workbench.core.checkpoints.io import CheckpointError, config_of, load_weights_file
from workbench.core.config import TrainConfig
from workbench.core.data.describe import input_spec
from workbench.core.models.builtins import build_model
from workbench.core.models.inputs import model_channels
from workbench.core.models.state_dict_match import StateDiff, compare_state

# (architecture, classes, input shape): what decides a model's shapes.
ModelKey = tuple[str, int, tuple[int, int, int]]

# Below this share of tensors loaded, a partial load misleads more than it helps.
MOSTLY_FITS = 0.5


@dataclass(frozen=True)
class WeightsOffer:
    """A weights file compared with a fresh model of the chosen architecture."""

    path: Path
    model: nn.Module
    state: dict[str, torch.Tensor]
    diff: StateDiff
    model_key: ModelKey
    saved_from: str | None = None  # the architecture a checkpoint names

    @property
    def other_architecture(self) -> str | None:
        """The file's own architecture when it is not the chosen one and fits badly."""
        if self.diff.exact or self.saved_from in (None, self.model_key[0]):
            return None
        return self.saved_from

    @property
    def mostly_unfit(self) -> bool:
        """Fewer than half of the model's tensors would load: loading misleads."""
        return not self.diff.exact and self.diff.fit_fraction < MOSTLY_FITS


def model_key(cfg: TrainConfig) -> ModelKey:
    """(architecture, classes, input shape): what decides a model's shapes.

    Raises
    ------
    DataError
        When ``cfg`` names an image folder that cannot be read.
    """
    spec = input_spec(cfg.dataset, cfg.data_dir, cfg.resolved_image_size)
    return (cfg.model, spec.num_classes, model_input_shape(cfg.model, spec.image_shape))


def model_input_shape(
    model: str, data_shape: tuple[int, int, int]
) -> tuple[int, int, int]:
    """The (C, H, W) ``model`` takes for data of ``data_shape``: a torchvision
    model gets gray data repeated to three channels (``model_inputs``)."""
    channels, height, width = data_shape
    return (model_channels(model, channels), height, width)


def build_keyed(key: ModelKey, seed: int | None = None) -> nn.Module:
    """A fresh model of ``key``'s architecture, classes and input shape."""
    return build_model(key[0], key[1], seed=seed, input_shape=key[2])


def offer_weights(
    path: str | Path,
    cfg: TrainConfig,
    state: dict[str, torch.Tensor] | None = None,
    payload: dict[str, Any] | None = None,
) -> WeightsOffer:
    """Read a checkpoint or state_dict and compare it with ``cfg``'s model.

    ``state`` and ``payload``: the file's weights and checkpoint when the
    caller has read them already (``load_weights_file``).

    Raises
    ------
    CheckpointError
        When the file cannot be read as weights.
    """
    path = Path(path)
    if state is None:
        state, payload = load_weights_file(path)
    key = model_key(cfg)
    model = build_keyed(key, seed=cfg.seed)
    diff = compare_state(model, state)
    return WeightsOffer(path, model, state, diff, key, _saved_architecture(payload))


def _saved_architecture(payload: dict[str, Any] | None) -> str | None:
    """The model a checkpoint was saved from (None: a bare state_dict)."""
    if payload is None:
        return None
    try:
        return config_of(payload).model
    except CheckpointError:
        return None
