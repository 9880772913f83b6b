"""Prove an exported model equal to the eager one it came from.

Each artifact is loaded back the way a user would load it (``torch.jit.load``,
``torch.export.load``, an onnxruntime session) and run on the run's validation
images next to the eager model: the share of identical top-1 classes and the
largest absolute logit difference decide. Batches of 64 and of 1 both run, so
a batch size frozen into the graph shows up as a failure, not in production.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

# fp32 logits of the same graph agree to ~1e-6; more than this is a wrong model.
TOLERANCE = 1e-4
VERIFY_BATCH = 64
# The first images are also run one at a time: the batch-1 check.
SINGLE_IMAGES = 8
MAX_IMAGES = 10_000

Runner = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True, slots=True)
class Verification:
    """How an artifact's outputs compare with the eager model's."""

    agreed: int
    total: int
    max_diff: float
    tolerance: float = TOLERANCE
    error: str | None = None

    @property
    def agreement(self) -> float:
        """Share of images with the same top-1 class (0..1)."""
        return self.agreed / self.total if self.total else 0.0

    @property
    def passed(self) -> bool:
        """Every class the same and every logit within the tolerance."""
        return (
            self.error is None
            and self.total > 0
            and self.agreed == self.total
            and self.max_diff <= self.tolerance
        )


def load_runner(fmt: str, path: Path) -> Runner:
    """The artifact at ``path`` as a function from a float32 batch to logits."""
    if fmt == "torchscript":
        # TorchScript is deprecated in favour of torch.export, but still loads.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            scripted = torch.jit.load(str(path), map_location="cpu")
        scripted.eval()

        def run_scripted(x: torch.Tensor) -> torch.Tensor:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                return scripted(x)

        return run_scripted
    if fmt == "exported":
        return torch.export.load(str(path)).module()
    if fmt == "onnx":
        import onnxruntime  # optional (the export extra), and slow to import

        session = onnxruntime.InferenceSession(
            str(path), providers=["CPUExecutionProvider"]
        )
        name = session.get_inputs()[0].name

        def run_onnx(x: torch.Tensor) -> torch.Tensor:
            (logits,) = session.run(None, {name: x.numpy()})
            return torch.from_numpy(logits)

        return run_onnx
    raise ValueError(f"unknown export format {fmt!r}")


Batch = tuple[torch.Tensor, torch.Tensor]  # normalised images, labels


def validation_batches(
    batches: Iterable[Batch], limit: int = MAX_IMAGES
) -> Iterator[Batch]:
    """Up to ``limit`` validation images with labels, batches of 64, on the CPU.

    Made as they are needed: 10,000 images at 3x224x224 would be 6 GB at once.
    """
    seen = 0
    for x, y in batches:
        x = x[: limit - seen].detach().to("cpu", torch.float32)
        y = y[: len(x)].detach().to("cpu")
        yield from zip(x.split(VERIFY_BATCH), y.split(VERIFY_BATCH), strict=True)
        seen += len(x)
        if seen >= limit:
            return


class EagerRecord:
    """What the eager model made of the verification images, for the model card.

    The confusion matrix (rows true class, columns predicted) and a SHA-256 of
    the exact inputs and labels: the fingerprint of the data the export was
    proven on.
    """

    def __init__(self, num_classes: int) -> None:
        self.confusion = np.zeros((num_classes, num_classes), dtype=np.int64)
        self._digest = hashlib.sha256()
        self.images = 0

    def add(self, x: torch.Tensor, y: torch.Tensor, logits: torch.Tensor) -> None:
        self._digest.update(x.contiguous().numpy().tobytes())
        self._digest.update(y.to(torch.int64).numpy().tobytes())
        np.add.at(self.confusion, (y.numpy(), logits.argmax(1).numpy()), 1)
        self.images += len(x)

    @property
    def fingerprint(self) -> str:
        return self._digest.hexdigest()

    @property
    def accuracy(self) -> float:
        return float(np.trace(self.confusion) / max(self.images, 1))


@torch.no_grad()
def verify(
    model: nn.Module,
    runners: dict[str, Runner],
    batches: Iterable[Batch],
    progress: Callable[[str], None] | None = None,
    record: EagerRecord | None = None,
) -> dict[str, Verification]:
    """Each runner's outputs against ``model``'s (in eval mode) on ``batches``.

    The eager logits are computed once per batch and compared with every
    runner (one pass: ``batches`` may be a stream); the first
    :data:`SINGLE_IMAGES` images are then run one at a time. ``record``
    collects the eager predictions and the inputs' fingerprint.
    """
    model.eval()
    agreed = dict.fromkeys(runners, 0)
    worst = dict.fromkeys(runners, 0.0)
    errors: dict[str, str] = {}
    total = 0

    def compare(fmt: str, x: torch.Tensor, expected: torch.Tensor) -> int:
        """Record the largest difference; the number of equal top-1 classes."""
        try:
            got = runners[fmt](x)
        except Exception as exc:  # an artifact that cannot run this batch fails
            errors.setdefault(fmt, f"batch of {len(x)}: {first_line(exc)}")
            return 0
        if got.shape != expected.shape:
            errors.setdefault(fmt, f"batch of {len(x)} gave {tuple(got.shape)} logits")
            return 0
        worst[fmt] = max(worst[fmt], float((got.float() - expected).abs().max()))
        return int((got.argmax(1) == expected.argmax(1)).sum())

    singles = torch.empty(0)
    for index, (x, y) in enumerate(batches):
        expected = model(x).float()
        if record is not None:
            record.add(x, y, expected)
        if index == 0:
            singles = x[:SINGLE_IMAGES]
        total += len(x)
        for fmt in runners:
            agreed[fmt] += compare(fmt, x, expected)
        if progress is not None and index % 20 == 0:
            progress(f"verifying: {total} images")
    for image in singles.split(1):
        expected = model(image).float()
        for fmt in runners:
            compare(fmt, image, expected)
    return {
        fmt: Verification(agreed[fmt], total, worst[fmt], error=errors.get(fmt))
        for fmt in runners
    }


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
