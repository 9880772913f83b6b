"""Plain-data events the training engine yields.

Frozen, slotted dataclasses of Python scalars only: safe to pass between threads
and processes, to JSON, and to Qt signals. Never tensors, never the model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class RunStarted:
    """The run is prepared: data loaded, model built, optimizer ready."""

    total_steps: int
    steps_per_epoch: int
    start_step: int
    device: str
    precision: str
    model: str
    parameters: int
    trainable_parameters: int


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should read once (a setting switched off, a slow step)."""

    message: str


@dataclass(frozen=True, slots=True)
class CompileStarted:
    """``torch.compile`` is tracing the first step; it can take many seconds."""


@dataclass(frozen=True, slots=True)
class CompileFinished:
    """The first compiled step is done; ``seconds`` is what compiling cost."""

    seconds: float


@dataclass(frozen=True, slots=True)
class StepMetrics:
    """Training progress, yielded every ``log_every`` global steps.

    ``loss`` is the loss of this step's batch; ``accuracy`` and ``images_per_s``
    cover the steps since the previous ``StepMetrics``.
    """

    epoch: int
    step: int
    global_step: int
    total_steps: int
    loss: float
    accuracy: float
    lr: float
    images_per_s: float
    elapsed_s: float


@dataclass(frozen=True, slots=True)
class EpochMetrics:
    """End of an epoch (or of a stopped partial epoch): train and validation."""

    epoch: int
    global_step: int
    train_loss: float
    train_accuracy: float
    val_loss: float
    val_accuracy: float
    images_per_s: float
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """As a dict of builtins (metric history, JSON)."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class TrainResult:
    """The last event of every run that did not fail.

    ``step_seconds`` is the median time of one training step once compiled;
    ``compile_seconds`` is the extra time the first (compiling) steps took.
    """

    stopped: bool
    epochs_completed: int
    global_step: int
    val_loss: float
    val_accuracy: float
    images_per_s: float
    seconds: float
    compile_seconds: float
    step_seconds: float


@dataclass(frozen=True, slots=True)
class WeightsReady:
    """A copy of the weights asked for with ``TrainControl.request_weights``.

    The copy itself waits in the control (``take_weights``): events carry no
    tensors.
    """

    global_step: int


@dataclass(frozen=True, slots=True, eq=False)
class Evaluation:
    """Every validation prediction of one epoch, for the confusion matrix.

    Plain NumPy copies made after the epoch (never tensors, never the model), in
    the validation set's natural order, so index ``i`` is validation image ``i``.

    Attributes
    ----------
    epoch : int
        0-based epoch the predictions were made after.
    global_step : int
        Training steps done when they were made.
    labels, predictions : numpy.ndarray
        int64 (N,): true and predicted class of each validation image.
    confidences : numpy.ndarray
        float32 (N,): softmax probability of the predicted class.
    losses : numpy.ndarray
        float32 (N,): cross-entropy loss of each image.
    num_classes : int
        Size of the matrix.
    """

    epoch: int
    global_step: int
    labels: np.ndarray
    predictions: np.ndarray
    confidences: np.ndarray
    losses: np.ndarray
    num_classes: int

    def confusion(self) -> np.ndarray:
        """int64 (C, C): row = true class, column = predicted class."""
        c = self.num_classes
        flat = self.labels * c + self.predictions
        return np.bincount(flat, minlength=c * c).reshape(c, c)

    def per_class_accuracy(self) -> np.ndarray:
        """float64 (C,): share of each true class predicted right (NaN if absent)."""
        matrix = self.confusion()
        totals = matrix.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(totals > 0, np.diag(matrix) / totals, np.nan)

    def cell(self, true: int, predicted: int) -> np.ndarray:
        """Indices of the images in cell (true, predicted), highest loss first."""
        hits = np.flatnonzero((self.labels == true) & (self.predictions == predicted))
        return hits[np.argsort(-self.losses[hits], kind="stable")]


@dataclass(frozen=True, slots=True)
class LayerHealth:
    """Gradient and weight norms of each layer, at a log step.

    A layer is a module that owns parameters; its norm covers all of them
    (weight and bias). A frozen layer's gradient norm is 0.
    """

    global_step: int
    layers: tuple[str, ...]
    grad_norms: tuple[float, ...]
    weight_norms: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class WeightHistograms:
    """Histogram of each layer's weights (all its parameters) after an epoch."""

    epoch: int
    global_step: int
    layers: tuple[str, ...]
    edges: tuple[tuple[float, ...], ...]
    counts: tuple[tuple[int, ...], ...]


TrainEvent = (
    RunStarted
    | Notice
    | CompileStarted
    | CompileFinished
    | StepMetrics
    | EpochMetrics
    | TrainResult
    | WeightsReady
    | Evaluation
    | LayerHealth
    | WeightHistograms
)
