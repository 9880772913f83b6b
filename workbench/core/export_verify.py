"""Prove an exported model equal to the eager one it came from.

Each artifact is loaded back the way a user would load it (``torch.jit.load``,
``torch.export.load``, an onnxruntime session) and run on the run's validation
images next to the eager model: the share of identical top-1 classes and the
largest absolute logit difference decide. Batches of 64 and of 1 both run, so
a batch size frozen into the graph shows up as a failure, not in production.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

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
        import onnxruntime

        session = onnxruntime.InferenceSession(
            str(path), providers=["CPUExecutionProvider"]
        )
        name = session.get_inputs()[0].name

        def run_onnx(x: torch.Tensor) -> torch.Tensor:
            (logits,) = session.run(None, {name: x.numpy()})
            return torch.from_numpy(logits)

        return run_onnx
    raise ValueError(f"unknown export format {fmt!r}")


def validation_batches(
    batches: Iterable[tuple[torch.Tensor, torch.Tensor]], limit: int = MAX_IMAGES
) -> list[torch.Tensor]:
    """Up to ``limit`` normalised validation images, as batches of 64 on the CPU."""
    chunks: list[torch.Tensor] = []
    seen = 0
    for x, _y in batches:
        x = x[: limit - seen].detach().to("cpu", torch.float32)
        chunks.extend(x.split(VERIFY_BATCH))
        seen += len(x)
        if seen >= limit:
            break
    return chunks


@torch.no_grad()
def verify(
    model: nn.Module,
    runners: dict[str, Runner],
    batches: list[torch.Tensor],
    progress: Callable[[str], None] | None = None,
) -> dict[str, Verification]:
    """Each runner's outputs against ``model``'s (in eval mode) on ``batches``.

    The eager logits are computed once per batch and compared with every
    runner; the first :data:`SINGLE_IMAGES` images are then run one at a time.
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

    for index, x in enumerate(batches):
        expected = model(x).float()
        total += len(x)
        for fmt in runners:
            agreed[fmt] += compare(fmt, x, expected)
        if progress is not None and index % 20 == 0:
            progress(f"verifying: {total} images")
    singles = batches[0][:SINGLE_IMAGES] if batches else torch.empty(0)
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
