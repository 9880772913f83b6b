"""Plain-data events the training engine yields.

Frozen, slotted dataclasses of Python scalars only: safe to pass between threads
and processes, to JSON, and to Qt signals. Never tensors, never the model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


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


TrainEvent = (
    RunStarted
    | Notice
    | CompileStarted
    | CompileFinished
    | StepMetrics
    | EpochMetrics
    | TrainResult
    | WeightsReady
)
