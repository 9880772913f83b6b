"""A cross-validation's record: its fold runs, their scores and held-out predictions.

A group lives in ``<runs>/folds/<id>/`` beside the run folders (which it
names; each fold run's ``run.json`` names the group back under ``folds``):

``group.json``        K, the seed, the config, each fold's run id and scores
``predictions.pt``    the out-of-fold predictions: every training image once,
                      predicted by the fold model that did not train on it
                      (tensors only: read back with ``weights_only=True``)

Both are rewritten whole after each fold, atomically: a group killed half-way
keeps the folds that finished.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch

from workbench.core.atomic_files import torch_save, write_atomically
from workbench.core.config import TrainConfig
from workbench.core.crossval.stats import Estimate, estimate
from workbench.core.runs.folder import now_stamp, runs_dir

GROUPS_FOLDER = "folds"
GROUP_FILE = "group.json"
PREDICTIONS_FILE = "predictions.pt"
RUN_KEY = "folds"  # run.json: {"group": id, "fold": i, "of": K}
# The scores each fold model gets on its held-out fold, and their names.
SCORES = {
    "val_accuracy": "validation accuracy",
    "val_loss": "validation loss",
    "macro_f1": "macro-F1",
}


def groups_dir(root: Path | None = None) -> Path:
    """Where the groups of the runs folder ``root`` live."""
    return (root or runs_dir()) / GROUPS_FOLDER


@dataclass(frozen=True, slots=True)
class OutOfFold:
    """Held-out predictions: row ``i`` is training image ``index[i]``.

    ``probabilities`` are float32 ``(N, classes)``; ``fold`` says which fold
    model predicted each image.
    """

    index: torch.Tensor
    label: torch.Tensor
    fold: torch.Tensor
    probabilities: torch.Tensor

    def to_dict(self) -> dict[str, torch.Tensor]:
        return {
            "index": self.index,
            "label": self.label,
            "fold": self.fold,
            "probabilities": self.probabilities,
        }

    @classmethod
    def joined(cls, parts: list[OutOfFold]) -> OutOfFold:
        """``parts`` as one, in training-image order."""
        index = torch.cat([p.index for p in parts])
        order = index.argsort()
        return cls(
            index[order],
            torch.cat([p.label for p in parts])[order],
            torch.cat([p.fold for p in parts])[order],
            torch.cat([p.probabilities for p in parts])[order],
        )


class FoldGroup:
    """One cross-validation's folder: what finished so far, rewritten per fold."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def id(self) -> str:
        return self.path.name

    @classmethod
    def create(cls, cfg: TrainConfig, root: Path | None = None) -> FoldGroup:
        """A new group folder for ``cfg`` (``cfg.folds`` folds), group.json written."""
        parent = groups_dir(root)
        parent.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        while True:
            name = f"{stamp}-{cfg.dataset}-{cfg.folds}fold-{secrets.token_hex(2)}"
            try:
                (parent / name).mkdir()
            except FileExistsError:
                continue  # another group began this second with the same suffix
            break
        group = cls(parent / name)
        group._write(
            {
                "id": name,
                "created": now_stamp(),
                "folds": cfg.folds,
                "seed": cfg.seed,
                "config": cfg.replace(fold=0).to_dict(),
                "status": "running",
                "runs": {},
                "scores": {},
            }
        )
        return group

    def info(self) -> dict[str, Any]:
        """``group.json`` (empty when missing or unreadable)."""
        try:
            data = json.loads((self.path / GROUP_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def update(self, **fields: Any) -> None:
        data = self.info()
        data.update(fields, updated=now_stamp())
        self._write(data)

    def add_run(self, fold: int, run_id: str) -> None:
        """Fold ``fold`` is trained by the run ``run_id``."""
        data = self.info()
        data.setdefault("runs", {})[str(fold)] = run_id
        self.update(runs=data["runs"])

    def add_fold(self, fold: int, predictions: OutOfFold, scores: dict[str, float]):
        """Fold ``fold`` finished: keep its held-out predictions and scores.

        The predictions file is written before ``group.json`` names the fold's
        scores: a group never lists a fold whose predictions are missing.
        """
        kept = self.predictions()
        parts = [] if kept is None else [_without(kept, fold)]
        joined = OutOfFold.joined([*parts, predictions])
        write_atomically(
            self.path / PREDICTIONS_FILE, lambda f: torch_save(joined.to_dict(), f)
        )
        data = self.info()
        data.setdefault("scores", {})[str(fold)] = scores
        done = len(data["scores"]) == data.get("folds")
        self.update(scores=data["scores"], status="finished" if done else "running")

    def predictions(self) -> OutOfFold | None:
        """The held-out predictions of the folds finished so far (None: none yet)."""
        path = self.path / PREDICTIONS_FILE
        if not path.is_file():
            return None
        data = torch.load(path, map_location="cpu", weights_only=True)
        fields = ("index", "label", "fold", "probabilities")
        return OutOfFold(**{name: data[name] for name in fields})

    def run_ids(self) -> dict[int, str]:
        """Each fold's run id, by fold."""
        runs = self.info().get("runs") or {}
        return {int(k): str(v) for k, v in runs.items() if str(k).isdigit()}

    def estimates(self) -> dict[str, Estimate]:
        """Each score's mean and 95% interval over the finished folds."""
        scores = [
            s for s in (self.info().get("scores") or {}).values() if isinstance(s, dict)
        ]
        found: dict[str, Estimate] = {}
        for name in SCORES:
            values = [
                float(s[name]) for s in scores if isinstance(s.get(name), int | float)
            ]
            if values:
                found[name] = estimate(values)
        return found

    def _write(self, data: dict[str, Any]) -> None:
        text = json.dumps(data, indent=1) + "\n"
        write_atomically(self.path / GROUP_FILE, lambda f: f.write(text.encode()))


def _without(predictions: OutOfFold, fold: int) -> OutOfFold:
    """``predictions`` less fold ``fold``'s rows (a fold trained again)."""
    keep = predictions.fold != fold
    return OutOfFold(
        predictions.index[keep],
        predictions.label[keep],
        predictions.fold[keep],
        predictions.probabilities[keep],
    )


def list_groups(root: Path | None = None) -> list[FoldGroup]:
    """Every group with a readable ``group.json``, newest first."""
    try:
        paths = sorted(groups_dir(root).iterdir(), reverse=True)
    except OSError:
        return []
    return [FoldGroup(p) for p in paths if p.is_dir() and FoldGroup(p).info()]
