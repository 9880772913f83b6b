"""Out-of-sample probabilities for every image: the folds' and the ensemble's.

Training images: the held-out predictions a cross-validation group keeps (an
earlier group over the same data and settings is reused). Validation images:
the group's fold models averaged (none of them trained on those).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from workbench.core.config import TrainConfig
from workbench.core.crossval.ensemble import ensemble_probabilities, load_ensemble
from workbench.core.crossval.group import FoldGroup, list_groups
from workbench.core.data.build import build_loaders


def matching_group(
    cfg: TrainConfig, labels: torch.Tensor, root: Path | None = None
) -> FoldGroup | None:
    """A finished group of ``cfg``'s folds whose predictions cover ``labels``.

    The same settings (every config field but the fold and those that only
    change how a run is kept or fed: autosave, logging, workers, device) and
    the same training labels in the same order; the newest such group.
    """
    wanted = _what_predicts(cfg.replace(fold=0).to_dict())
    for group in list_groups(root):
        info = group.info()
        stored = info.get("config")
        if info.get("status") != "finished" or not isinstance(stored, dict):
            continue
        if _what_predicts(stored) != wanted:
            continue
        predictions = group.predictions()
        if predictions is not None and torch.equal(predictions.label, labels):
            return group
    return None


# Settings that change how a run is kept or fed, not what it learns.
# Settings that change how a run is kept or fed, not what it predicts (the
# memory format changes only rounding, and runs from before it lack the field).
_BOOKKEEPING = (
    "autosave_every",
    "log_every",
    "workers",
    "pin_memory",
    "device",
    "channels_last",
)


def _what_predicts(config: dict) -> dict:
    return {k: v for k, v in config.items() if k not in _BOOKKEEPING}


def training_probabilities(group: FoldGroup) -> np.ndarray:
    """Every training image's held-out probabilities, in training order."""
    predictions = group.predictions()
    if predictions is None:
        raise ValueError(f"{group.id} keeps no held-out predictions")
    return predictions.probabilities.double().numpy()


def validation_probabilities(group: FoldGroup, cfg: TrainConfig) -> np.ndarray:
    """The fold models' averaged probabilities of every validation image.

    Fold models on one frozen backbone run it once per batch, not once each.
    """
    _payload, ensemble = load_ensemble(group)
    whole = cfg.replace(folds=1, fold=0, device="cpu")
    batches = build_loaders(whole, "cpu").val
    return ensemble_probabilities(ensemble, batches).double().numpy()
