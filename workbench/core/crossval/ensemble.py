"""The fold models of a finished cross-validation as one averaging model.

Each fold model saw a different K-1 folds; averaging their class probabilities
uses every training image and is steadier than any one of them. The ensemble
outputs the log of the mean probability, computed as a log-sum-exp (no log of
zero), so its softmax is that mean and it exports like any classifier's logits.

Fold models that trained only their head on one frozen backbone differ only in
the head: :func:`ensemble_probabilities` runs that backbone once per batch and
each head on its output, the numbers of the members run one by one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from workbench.core.checkpoints.io import eval_model, load_checkpoint
from workbench.core.config import ConfigError
from workbench.core.crossval.group import GROUP_FILE, FoldGroup, groups_dir
from workbench.core.models.builtins import head_name
from workbench.core.runs.folder import RunFolder
from workbench.core.train.feature_cache import head_inputs


class AveragingEnsemble(nn.Module):
    """``log(mean_k softmax(member_k(x)))``: the members' probabilities averaged."""

    def __init__(self, members: list[nn.Module]) -> None:
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return averaged([m(x) for m in self.members])


def averaged(logits: list[torch.Tensor]) -> torch.Tensor:
    """``log(mean_k softmax(logits[k]))``, as a log-sum-exp."""
    logs = torch.stack([F.log_softmax(z, dim=1) for z in logits])
    return torch.logsumexp(logs, dim=0) - math.log(len(logits))


def shared_backbone_heads(ensemble: AveragingEnsemble) -> list[nn.Module] | None:
    """Each member's head when the members differ in nothing else; else None.

    Compared bit for bit: every parameter and buffer outside the head (frozen
    BatchNorm statistics included).
    """
    members = list(ensemble.members)
    names = {head_name(m) for m in members}
    name = names.pop() if len(names) == 1 else ""
    if not name:
        return None
    inside = name + "."

    def backbone(member: nn.Module) -> list[tuple[str, torch.Tensor]]:
        state = member.state_dict()
        return [(k, v) for k, v in state.items() if not k.startswith(inside)]

    first = backbone(members[0])
    for member in members[1:]:
        other = backbone(member)
        if len(other) != len(first) or any(
            k != j or not torch.equal(v, w)
            for (k, v), (j, w) in zip(first, other, strict=True)
        ):
            return None
    return [m.get_submodule(name) for m in members]


@torch.no_grad()
def ensemble_probabilities(
    ensemble: AveragingEnsemble, batches: Iterable[tuple[torch.Tensor, torch.Tensor]]
) -> torch.Tensor:
    """``softmax(ensemble(x))`` of every batch ``(x, y)``, in order.

    When the members share their backbone (:func:`shared_backbone_heads`) and
    the first member's output is its head's to the bit, the backbone runs
    once per batch and each head on its output: the same numbers.
    """
    heads = shared_backbone_heads(ensemble)
    first = ensemble.members[0]
    parts = []
    for x, _y in batches:
        if heads is not None and not parts and not _head_makes_output(first, x[:8]):
            heads = None
        feat = None
        if heads is not None:
            with head_inputs(first) as features:
                feat = features(x)
        if heads is None or feat is None:
            logits = ensemble(x)
        else:
            logits = averaged([head(feat) for head in heads])
        parts.append(F.softmax(logits, dim=1))
    return torch.cat(parts)


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


def _head_makes_output(model: nn.Module, x: torch.Tensor) -> bool:
    """Whether ``model``'s output for ``x`` is its head's on its input, to the bit."""
    whole = model(x)
    with head_inputs(model) as features:
        feat = features(x)
    head = model.get_submodule(head_name(model))
    return feat is not None and torch.equal(whole, head(feat))
