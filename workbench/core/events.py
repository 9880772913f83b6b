"""Plain-data events the training engine yields.

Frozen, slotted dataclasses of Python scalars only: safe to pass between threads
and processes, to JSON, and to Qt signals. Never tensors, never the model.

The events a run's ledger keeps (steps, layer health, weight histograms,
epochs) own their record format: ``to_record()`` gives the JSON line's dict,
``from_record()`` reads one back, also one written by an earlier version. A
record is the event's fields plus ``"kind"``; a measurement missing from an
old record reads as NaN, a count as 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Self

import numpy as np


def _float(record: Mapping[str, Any], key: str) -> float:
    """A measurement; NaN when an older record lacks it (or holds null)."""
    value = record.get(key)
    return math.nan if value is None else float(value)


def _count(record: Mapping[str, Any], key: str) -> int:
    """A count; 0 when an older record lacks it."""
    return _whole(record.get(key) or 0)


def _whole(value: Any) -> int:
    """A count or step read back: a whole number >= 0 (ValueError otherwise)."""
    number = int(value)
    if number < 0:
        raise ValueError(f"{value!r} is below 0")
    return number


def _phases(record: Mapping[str, Any]) -> tuple[float, ...]:
    """A step's time split; () when an older record lacks it."""
    values = record.get("phases") or ()
    if not isinstance(values, list | tuple):
        raise ValueError(f"phases: {values!r} is not a list")
    phases = _floats(values)
    if not all(math.isfinite(v) and v >= 0 for v in phases):
        raise ValueError(f"phases: {values!r} holds a value below 0 or not finite")
    return phases


def _same_length(name: str, *columns: tuple[Any, ...]) -> None:
    if len({len(c) for c in columns}) > 1:
        raise ValueError(f"{name}: the lists differ in length")


def _floats(values: Any) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


def _ints(values: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


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
    # "feature cache: on (...)" or "feature cache: off: <why>" (feature_cache.py)
    feature_cache: str = ""


@dataclass(frozen=True, slots=True)
class FeaturesProgress:
    """The feature cache is being computed, before the first step.

    ``done`` of ``total`` training images have their features; a stop request
    cancels the computation (and the run, which has trained nothing yet).
    """

    done: int
    total: int


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should read once (a setting switched off, a slow step)."""

    message: str


@dataclass(frozen=True, slots=True)
class CompileStarted:
    """``torch.compile`` is tracing a step; it can take many seconds.

    ``batch_size``: the batch it compiles for. The first step compiles; a
    batch of another size (an epoch's last, partial batch) compiles again.
    """

    batch_size: int = 0
    first: bool = True


@dataclass(frozen=True, slots=True)
class CompileFinished:
    """A compiled step is done; ``seconds``: what that step took, compiling included."""

    seconds: float
    batch_size: int = 0
    first: bool = True


@dataclass(frozen=True, slots=True)
class StepMetrics:
    """Training progress, yielded every ``log_every`` global steps.

    ``loss`` is the loss of this step's batch; ``accuracy``, ``images_per_s``
    and ``step_seconds`` (the mean time of one training step, data loading
    included) cover the steps since the previous ``StepMetrics``. ``phases``
    splits that step time over ``step_clock.PHASES`` (data, copy, forward,
    backward, optimizer, other), in seconds a step; empty where not measured.
    """

    KIND: ClassVar[str] = "step"

    epoch: int
    step: int
    global_step: int
    total_steps: int
    loss: float
    accuracy: float
    lr: float
    images_per_s: float
    elapsed_s: float
    step_seconds: float
    phases: tuple[float, ...] = ()

    def to_record(self) -> dict[str, Any]:
        """The ledger's line: the fields and ``"kind": "step"``."""
        record = {"kind": self.KIND, **asdict(self)}
        record["phases"] = list(self.phases)
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Self:
        """Read a ledger line back (``global_step`` and ``loss`` are required).

        The first lines of a continued run are seeded from its checkpoint's
        ``(step, loss)`` history and hold nothing else.
        """
        return cls(
            epoch=_count(record, "epoch"),
            step=_count(record, "step"),
            global_step=_whole(record["global_step"]),
            total_steps=_count(record, "total_steps"),
            loss=float(record["loss"]),
            accuracy=_float(record, "accuracy"),
            lr=_float(record, "lr"),
            images_per_s=_float(record, "images_per_s"),
            elapsed_s=_float(record, "elapsed_s"),
            step_seconds=_float(record, "step_seconds"),
            phases=_phases(record),
        )


@dataclass(frozen=True, slots=True)
class EpochMetrics:
    """End of an epoch (or of a stopped partial epoch): train and validation.

    ``confusion`` is the validation confusion matrix (row = true class, column
    = predicted class): a few hundred integers that let the window replay
    every epoch's matrix. None in the history of an older checkpoint.
    """

    KIND: ClassVar[str] = "epoch"

    epoch: int
    global_step: int
    train_loss: float
    train_accuracy: float
    val_loss: float
    val_accuracy: float
    images_per_s: float
    seconds: float
    confusion: tuple[tuple[int, ...], ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields as builtins, no ``kind`` (the checkpoint's history).

        ``confusion`` becomes a list of lists, and is left out when None.
        """
        data = {
            "epoch": self.epoch,
            "global_step": self.global_step,
            "train_loss": self.train_loss,
            "train_accuracy": self.train_accuracy,
            "val_loss": self.val_loss,
            "val_accuracy": self.val_accuracy,
            "images_per_s": self.images_per_s,
            "seconds": self.seconds,
        }
        if self.confusion is not None:
            data["confusion"] = [list(row) for row in self.confusion]
        return data

    def to_record(self) -> dict[str, Any]:
        """The ledger's line: :meth:`to_dict` and ``"kind": "epoch"``."""
        return {"kind": self.KIND, **self.to_dict()}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Self:
        """Read a ledger line or a history entry (``epoch``, ``global_step`` needed)."""
        confusion = record.get("confusion")
        return cls(
            epoch=_whole(record["epoch"]),
            global_step=_whole(record["global_step"]),
            train_loss=_float(record, "train_loss"),
            train_accuracy=_float(record, "train_accuracy"),
            val_loss=_float(record, "val_loss"),
            val_accuracy=_float(record, "val_accuracy"),
            images_per_s=_float(record, "images_per_s"),
            seconds=_float(record, "seconds"),
            confusion=None if confusion is None else _square(confusion),
        )


@dataclass(frozen=True, slots=True)
class TrainResult:
    """The last event of every run that did not fail.

    ``step_seconds`` is the median time of one training step once compiled;
    ``compile_seconds`` is the extra time the first (compiling) steps took;
    ``phases`` the mean step's split over ``step_clock.PHASES`` (as in
    :class:`StepMetrics`).
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
    early_stop: str = ""  # why it stopped before its last epoch ("": it did not)
    phases: tuple[float, ...] = ()


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

    The confusion matrix and every cell's images, hardest first, are worked
    out when the event is made (in the training thread): a window showing
    them only reads them.
    """

    epoch: int
    global_step: int
    labels: np.ndarray
    predictions: np.ndarray
    confidences: np.ndarray
    losses: np.ndarray
    num_classes: int
    _matrix: np.ndarray = field(init=False, repr=False)
    _cell_order: np.ndarray = field(init=False, repr=False)
    _cell_starts: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        c = self.num_classes
        flat = self.labels * c + self.predictions
        counts = np.bincount(flat, minlength=c * c)
        matrix = counts.reshape(c, c)
        matrix.flags.writeable = False
        # Sorted by cell, then by loss (highest first), then by index: each
        # cell's images are one slice, in the order the gallery lists them.
        order = np.lexsort((-self.losses, flat)).astype(np.int64)
        order.flags.writeable = False
        starts = np.concatenate(([0], np.cumsum(counts)))
        object.__setattr__(self, "_matrix", matrix)
        object.__setattr__(self, "_cell_order", order)
        object.__setattr__(self, "_cell_starts", starts)

    def confusion(self) -> np.ndarray:
        """int64 (C, C), read-only: row = true class, column = predicted class."""
        return self._matrix

    def per_class_accuracy(self) -> np.ndarray:
        """float64 (C,): share of each true class predicted right (NaN if absent)."""
        matrix = self.confusion()
        totals = matrix.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(totals > 0, np.diag(matrix) / totals, np.nan)

    def cell(self, true: int, predicted: int) -> np.ndarray:
        """Indices of the images in cell (true, predicted), highest loss first.

        Read-only; equal losses keep the validation order.
        """
        k = true * self.num_classes + predicted
        return self._cell_order[self._cell_starts[k] : self._cell_starts[k + 1]]


@dataclass(frozen=True, slots=True)
class LayerHealth:
    """Gradient and weight norms of each layer, at a log step.

    A layer is a module that owns parameters; its norm covers all of them
    (weight and bias). A frozen layer's gradient norm is 0.
    """

    KIND: ClassVar[str] = "health"

    global_step: int
    layers: tuple[str, ...]
    grad_norms: tuple[float, ...]
    weight_norms: tuple[float, ...]

    def to_record(self) -> dict[str, Any]:
        """The ledger's line: the fields (lists) and ``"kind": "health"``."""
        return {
            "kind": self.KIND,
            "global_step": self.global_step,
            "layers": list(self.layers),
            "grad_norms": list(self.grad_norms),
            "weight_norms": list(self.weight_norms),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Self:
        """Read a ledger line back (every field is required)."""
        event = cls(
            global_step=_whole(record["global_step"]),
            layers=tuple(str(name) for name in record["layers"]),
            grad_norms=_floats(record["grad_norms"]),
            weight_norms=_floats(record["weight_norms"]),
        )
        _same_length(cls.KIND, event.layers, event.grad_norms, event.weight_norms)
        return event


@dataclass(frozen=True, slots=True)
class WeightHistograms:
    """Histogram of each layer's weights (all its parameters) after an epoch."""

    KIND: ClassVar[str] = "histograms"

    epoch: int
    global_step: int
    layers: tuple[str, ...]
    edges: tuple[tuple[float, ...], ...]
    counts: tuple[tuple[int, ...], ...]

    def to_record(self) -> dict[str, Any]:
        """The ledger's line: the fields (lists) and ``"kind": "histograms"``."""
        return {
            "kind": self.KIND,
            "epoch": self.epoch,
            "global_step": self.global_step,
            "layers": list(self.layers),
            "edges": [list(e) for e in self.edges],
            "counts": [list(c) for c in self.counts],
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Self:
        """Read a ledger line back (every field is required)."""
        event = cls(
            epoch=_whole(record["epoch"]),
            global_step=_whole(record["global_step"]),
            layers=tuple(str(name) for name in record["layers"]),
            edges=tuple(_floats(e) for e in record["edges"]),
            counts=tuple(_ints(c) for c in record["counts"]),
        )
        _same_length(cls.KIND, event.layers, event.edges, event.counts)
        for edges, counts in zip(event.edges, event.counts, strict=True):
            _same_length(cls.KIND, edges, (0, *counts))
        return event


RecordedEvent = StepMetrics | EpochMetrics | LayerHealth | WeightHistograms
"""The events a run's ledger (``metrics.jsonl``) keeps, one line each."""

RECORDED_EVENTS: tuple[type[RecordedEvent], ...] = (
    StepMetrics,
    EpochMetrics,
    LayerHealth,
    WeightHistograms,
)


def _square(rows: Any) -> tuple[tuple[int, ...], ...]:
    """A confusion matrix read back: as many rows as columns, counts >= 0."""
    matrix = tuple(tuple(_whole(n) for n in row) for row in rows)
    _same_length("confusion", *matrix, matrix)
    return matrix


def event_from_record(record: Mapping[str, Any]) -> RecordedEvent | None:
    """The event a ledger line holds; None for a kind this version does not know.

    Raises
    ------
    KeyError, TypeError, ValueError
        When a record of a known kind lacks a required field or holds a value
        of the wrong type.
    """
    for cls in RECORDED_EVENTS:
        if record.get("kind") == cls.KIND:
            try:
                return cls.from_record(record)
            except OverflowError as exc:  # int(1e400): a number no count holds
                raise ValueError(f"{cls.KIND}: {exc}") from None
    return None


@dataclass(frozen=True, slots=True)
class OperatorTime:
    """One operator's self time over the recorded steps.

    Attributes
    ----------
    name : str
        The operator (``aten::mm``).
    self_seconds : float
        Time in the operator itself, not in operators it called: host time,
        or on CUDA the time of the kernels it launched.
    calls : int
        How many times it ran.
    share : float
        ``self_seconds`` as a fraction of all the self time recorded.
    """

    name: str
    self_seconds: float
    calls: int
    share: float


@dataclass(frozen=True, slots=True)
class ProfileReport:
    """What a profile found, in Python scalars (it travels to the window).

    Attributes
    ----------
    trace_path : str
        The Chrome-trace JSON file, or ``""`` when none was written.
    steps_recorded, steps_asked : int
        Steps in the trace, and the number asked for.
    top_operators : tuple of OperatorTime
        By self time, longest first.
    phase_seconds : tuple of (str, float)
        Host seconds inside each ``workbench/<phase>`` label, summed over steps.
    note : str
        Why fewer steps were recorded (or none); ``""`` when all were.
    measured_on : str
        ``"CPU"`` or ``"CUDA"``: whose clock ``self_seconds`` is.
    """

    trace_path: str
    steps_recorded: int
    steps_asked: int
    top_operators: tuple[OperatorTime, ...]
    phase_seconds: tuple[tuple[str, float], ...]
    note: str = ""
    measured_on: str = "CPU"


TrainEvent = (
    FeaturesProgress
    | RunStarted
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
    | ProfileReport
)
