"""What the engine measures of a model between steps.

Validation predictions (:func:`evaluate_predictions`), every layer's gradient
and weight norms (:func:`layer_health`) and weight histograms
(:func:`weight_histograms`); each returns an event of plain data.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import numpy as np
import torch
from torch import nn

from workbench.core.events import Evaluation, LayerHealth, WeightHistograms
from workbench.core.train.freezing import train_mode
from workbench.core.training_run import TrainingRun


def autocast_context(
    precision: str, device: torch.device
) -> contextlib.AbstractContextManager[Any]:
    """Autocast for bf16/fp16; a no-op for fp32."""
    if precision == "fp32":
        return contextlib.nullcontext()
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    return torch.autocast(device.type, dtype=dtype)


def sync_device(device: torch.device) -> None:
    """Wait for the device's queued work: a timer must not stop before it ends."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def evaluate(run: TrainingRun) -> tuple[float, float]:
    """Mean loss and accuracy on the validation split, in ``eval()`` mode."""
    return mean_loss_and_accuracy(evaluate_predictions(run))


def mean_loss_and_accuracy(ev: Evaluation) -> tuple[float, float]:
    """Mean loss and accuracy of an evaluation (NaN for an empty split)."""
    if len(ev.labels) == 0:
        return math.nan, math.nan
    loss = float(ev.losses.mean(dtype=np.float64))
    return loss, float((ev.predictions == ev.labels).mean())


def evaluate_predictions(run: TrainingRun) -> Evaluation:
    """Every validation image's prediction, confidence and loss (``eval()`` mode).

    In full precision whatever the run trains in: the scores are then the ones
    the kept model gives everywhere else (the Draw tab, ``predict``, an export),
    which read in float32. A bf16 run's validation is not bf16's rounding.
    """
    model = run.model
    was_training = model.training
    model.eval()
    parts: list[tuple[torch.Tensor, ...]] = []
    with torch.no_grad():
        for x, y in run.loaders.val:
            logits = model(x).float()
            losses = nn.functional.cross_entropy(logits, y, reduction="none")
            confidence, predicted = torch.softmax(logits, 1).max(1)
            parts.append((y, predicted, confidence, losses))
    model.train(was_training)
    columns = [
        torch.cat(column).cpu().numpy() if parts else np.zeros(0)
        for column in zip(*parts, strict=True)
    ] or [np.zeros(0)] * 4
    labels, predicted, confidence, losses = columns
    return Evaluation(
        epoch=run.epoch,
        global_step=run.global_step,
        labels=labels.astype(np.int64),
        predictions=predicted.astype(np.int64),
        confidences=confidence.astype(np.float32),
        losses=losses.astype(np.float32),
        num_classes=run.loaders.info.num_classes,
    )


def _layers(model: nn.Module) -> list[tuple[str, list[nn.Parameter]]]:
    """Modules that own parameters, with those parameters (the freeze tree's leaves)."""
    return [
        (name or "(model)", params)
        for name, module in model.named_modules()
        if (params := list(module.parameters(recurse=False)))
    ]


def layer_health(run: TrainingRun) -> LayerHealth:
    """Gradient and weight norm of every layer now (after a step)."""
    names, grads, weights = [], [], []
    for name, params in _layers(run.model):
        names.append(name)
        grad_sq = [
            p.grad.detach().float().pow(2).sum() for p in params if p.grad is not None
        ]
        grads.append(
            torch.stack(grad_sq).sum().sqrt()
            if grad_sq
            else torch.zeros((), device=run.device)
        )
        weights.append(
            torch.stack([p.detach().float().pow(2).sum() for p in params]).sum().sqrt()
        )
    # One transfer for all: a device sync per norm would cost more than the norms.
    values = torch.stack([torch.stack(grads), torch.stack(weights)]).cpu().tolist()
    return LayerHealth(
        global_step=run.global_step,
        layers=tuple(names),
        grad_norms=tuple(values[0]),
        weight_norms=tuple(values[1]),
    )


def weight_histograms(run: TrainingRun, epoch: int, bins: int = 30) -> WeightHistograms:
    """A histogram of every layer's weights (all of its parameters)."""
    names, edges, counts = [], [], []
    for name, params in _layers(run.model):
        values = torch.cat([p.detach().float().flatten() for p in params]).cpu().numpy()
        # Weights gone NaN (a diverging run, caught at the next log step) have no
        # histogram range: count the finite ones. In float64: float32 weights a
        # few ulps apart (Swin V2's logit scales) leave float32 no room for 30
        # distinct bin edges, and numpy refuses.
        finite = values[np.isfinite(values)].astype(np.float64)
        count, edge = np.histogram(
            finite, bins=bins, range=None if finite.size else (0, 1)
        )
        names.append(name)
        edges.append(tuple(float(e) for e in edge))
        counts.append(tuple(int(c) for c in count))
    return WeightHistograms(
        epoch=epoch,
        global_step=run.global_step,
        layers=tuple(names),
        edges=tuple(edges),
        counts=tuple(counts),
    )


def evaluate_one_batch(run: TrainingRun) -> None:
    """One eval-mode forward pass (compiles the eval graph validation uses)."""
    model = run.model
    model.eval()
    with torch.no_grad():
        for x, _ in run.loaders.val:
            model(x)
            break
    train_mode(model)
