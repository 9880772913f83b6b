"""A finished fold run's predictions on its held-out fold, and their scores.

The fold model is the run's best epoch (``best.pt``), the weights its scores
and the ensemble use; a run without one (no autosave) gives its latest.
"""

from __future__ import annotations

import copy

import torch
from torch.nn import functional as F

from workbench.core.checkpoints.io import eval_model, load_checkpoint
from workbench.core.crossval.group import OutOfFold
from workbench.core.events import Evaluation
from workbench.core.runs.folder import RunFolder
from workbench.core.train.class_scores import macro_f1
from workbench.core.train.probes import mean_loss_and_accuracy
from workbench.core.training_run import TrainingRun


def fold_model(run: TrainingRun, folder: RunFolder | None) -> torch.nn.Module:
    """The fold's model in eval mode on the run's device: best.pt's, else latest."""
    if folder is not None and folder.best_path.is_file():
        model = eval_model(load_checkpoint(folder.best_path))
    else:
        model = copy.deepcopy(run.model)
    return model.to(run.device).eval()


@torch.no_grad()
def held_out_predictions(run: TrainingRun, model: torch.nn.Module) -> OutOfFold:
    """``model``'s class probabilities for every image of ``run``'s held-out fold."""
    if run.loaders.held_out is None:
        raise ValueError("not a fold run: it has no held-out fold")
    probabilities, labels = [], []
    for x, y in run.loaders.val:
        probabilities.append(F.softmax(model(x).float(), dim=1).cpu())
        labels.append(y.cpu())
    label = torch.cat(labels)
    return OutOfFold(
        index=run.loaders.held_out.clone(),
        label=label,
        fold=torch.full_like(label, run.config.fold),
        probabilities=torch.cat(probabilities),
    )


def fold_scores(predictions: OutOfFold) -> dict[str, float]:
    """Accuracy, mean cross-entropy and macro-F1 of held-out predictions.

    Scored as the engine scores a validation (its :class:`Evaluation`).
    """
    probabilities, label = predictions.probabilities, predictions.label
    confidence, predicted = probabilities.max(dim=1)
    picked = probabilities.gather(1, label[:, None]).squeeze(1)
    evaluation = Evaluation(
        epoch=0,
        global_step=0,
        labels=label.numpy(),
        predictions=predicted.numpy(),
        confidences=confidence.numpy(),
        losses=-picked.clamp_min(1e-12).log().numpy(),
        num_classes=probabilities.shape[1],
    )
    loss, accuracy = mean_loss_and_accuracy(evaluation)
    return {
        "val_accuracy": accuracy,
        "val_loss": loss,
        "macro_f1": float(macro_f1(evaluation.confusion())),
    }
