"""The fold models of a finished cross-validation as one averaging model.

Each fold model saw a different K-1 folds; averaging their class probabilities
uses every training image and is steadier than any one of them. The ensemble
outputs the log of the mean probability, computed as a log-sum-exp (no log of
zero), so its softmax is that mean and it exports like any classifier's logits.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from workbench.core.checkpoints.io import eval_model, load_checkpoint
from workbench.core.config import ConfigError
from workbench.core.crossval.group import GROUP_FILE, FoldGroup, groups_dir
from workbench.core.runs.folder import RunFolder


class AveragingEnsemble(nn.Module):
    """``log(mean_k softmax(member_k(x)))``: the members' probabilities averaged."""

    def __init__(self, members: list[nn.Module]) -> None:
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logs = torch.stack([F.log_softmax(m(x), dim=1) for m in self.members])
        return torch.logsumexp(logs, dim=0) - math.log(len(self.members))


def find_group(key: str | Path, root: Path | None = None) -> FoldGroup | None:
    """The group ``key`` names: its folder, or its id in the runs folder; else None."""
    path = Path(key).expanduser()
    if (path / GROUP_FILE).is_file():
        return FoldGroup(path)
    named = groups_dir(root) / str(key)
    if "/" not in str(key) and (named / GROUP_FILE).is_file():
        return FoldGroup(named)
    return None


def member_checkpoints(group: FoldGroup) -> list[Path]:
    """Each fold run's best.pt (else its latest checkpoint), in fold order.

    Raises
    ------
    ConfigError
        A fold did not finish, or its run folder or checkpoint is gone.
    """
    info = group.info()
    folds = info.get("folds")
    runs = group.run_ids()
    finished = {int(k) for k in (info.get("scores") or {}) if str(k).isdigit()}
    if not isinstance(folds, int) or finished != set(range(folds)):
        raise ConfigError(
            f"{group.id}: {len(finished)} of {folds} folds finished; an ensemble "
            "needs every fold (train the group again with --folds)"
        )
    paths = []
    for fold in range(folds):
        folder = RunFolder(group.path.parent.parent / runs.get(fold, "?"))
        best = folder.best_path
        chosen = best if best.is_file() else folder.checkpoint_path
        if not chosen.is_file():
            raise ConfigError(
                f"{group.id}: fold {fold + 1}'s run {folder.id} has no checkpoint "
                "(deleted?): the ensemble needs every fold model"
            )
        paths.append(chosen)
    return paths


def load_ensemble(group: FoldGroup) -> tuple[dict[str, Any], AveragingEnsemble]:
    """The ensemble of ``group``'s fold models, and the payload describing it.

    The payload is the first fold's checkpoint, with the config of the whole
    training split (the ensemble is checked on the dataset's own validation
    images, which no fold model saw) and no history of its own.
    """
    payloads = [load_checkpoint(path) for path in member_checkpoints(group)]
    ensemble = AveragingEnsemble([eval_model(p) for p in payloads]).eval()
    payload = dict(payloads[0])
    config = dict(payload["config"])
    config.update(folds=1, fold=0)
    payload.update(config=config, history={"epochs": []}, ensemble_of=len(payloads))
    return payload, ensemble
