"""What a model does to one input size: shapes, parameters, MACs, activation memory.

``summarize_model`` runs one forward pass with a forward hook on every leaf module
(and on any module that owns parameters of its own) and records, per call, the
output shape, the module's own parameters and its multiply-accumulates (MACs).

MAC convention: only the layers that multiply weights by inputs count -
``Conv*d`` (output elements x in_channels/groups x kernel size) and ``Linear``
(output elements x in_features); bias additions, BatchNorm, activations and
pooling count 0. That is the work ``torch.utils.flop_counter.FlopCounterMode``
measures (it counts convolutions and matrix products as 2 FLOPs per MAC), so the
two totals agree exactly.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from workbench.core.config import ConfigError
from workbench.core.models.builtins import build_model

InputShape = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class LayerRow:
    """One call of one module during the summary's forward pass.

    ``output_shape`` includes the batch dimension of the pass, which is 1.
    """

    path: str
    kind: str
    output_shape: tuple[int, ...]
    parameters: int
    macs: int


@dataclass(frozen=True, slots=True)
class ModelSummary:
    """Per-layer rows and the totals for one input shape and batch size.

    ``activation_bytes`` is the sum of every leaf module's output size (elements x
    element size x batch size): roughly what autograd keeps for the backward pass.
    Outputs written in place over their input (``ReLU(inplace=True)``) share that
    memory and are not counted again.
    """

    rows: tuple[LayerRow, ...]
    input_shape: InputShape
    batch_size: int
    parameters: int
    trainable_parameters: int
    macs: int
    activation_bytes_per_sample: int

    @property
    def activation_bytes(self) -> int:
        """Activation memory at ``batch_size``, in bytes."""
        return self.activation_bytes_per_sample * self.batch_size

    def lines(self) -> list[str]:
        """An aligned table, one row per layer call, then the totals."""
        header = ("layer", "type", "output (per sample)", "params", "MACs")
        body = [
            (
                row.path or "(model)",
                row.kind,
                "x".join(map(str, row.output_shape[1:])) or "-",
                f"{row.parameters:,}",
                f"{row.macs:,}",
            )
            for row in self.rows
        ]
        widths = [max(len(r[i]) for r in (header, *body)) for i in range(5)]

        def fmt(cells: tuple[str, ...]) -> str:
            left = [c.ljust(w) for c, w in zip(cells[:3], widths[:3], strict=True)]
            right = [c.rjust(w) for c, w in zip(cells[3:], widths[3:], strict=True)]
            return "  ".join([*left, *right]).rstrip()

        shape = "x".join(map(str, self.input_shape))
        return [
            fmt(header),
            "  ".join("-" * w for w in widths),
            *map(fmt, body),
            "",
            f"input: {shape} per sample, batch size {self.batch_size}",
            f"parameters: {human(self.parameters)} ({self.parameters:,}; "
            f"trainable {self.trainable_parameters:,})",
            f"MACs: {human(self.macs, 'MAC')} per sample ({self.macs:,})",
            f"activation memory: {human(self.activation_bytes, 'B')} at batch "
            f"size {self.batch_size} (kept for backward, roughly)",
        ]


def human(value: float, unit: str = "") -> str:
    """``1.2 M``, ``34.5 MMAC``, ``12.3 MB`` (powers of 1000)."""
    for prefix in ("", "k", "M", "G", "T"):
        if abs(value) < 1000 or prefix == "T":
            break
        value /= 1000
    text = f"{value:.0f}" if prefix == "" else f"{value:.1f}"
    return f"{text} {prefix}{unit}".rstrip()


def layer_macs(module: nn.Module, output: torch.Tensor) -> int:
    """Multiply-accumulates of one call of ``module`` producing ``output``.

    Convolutions and linear layers only (see the module docstring); 0 otherwise.
    """
    if isinstance(module, nn.modules.conv._ConvNd):
        per_output = module.in_channels // module.groups * math.prod(module.kernel_size)
        return output.numel() * per_output
    if isinstance(module, nn.Linear):
        return output.numel() * module.in_features
    return 0


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


def summarize_model(
    model: nn.Module, input_shape: InputShape, batch_size: int = 1
) -> ModelSummary:
    """Run one zeros sample through ``model`` and summarise every layer call.

    Parameters
    ----------
    model
        Any module taking ``(N, C, H, W)`` batches; lazy modules must be
        materialised. It runs in ``eval()`` under ``torch.no_grad()`` on the
        device of its parameters; its training flag is restored and the hooks
        removed even if the forward pass fails.
    input_shape
        ``(channels, height, width)`` of one sample.
    batch_size
        The batch size activation memory is reported for.

    Returns
    -------
    ModelSummary
        Rows in call order, and totals per sample (MACs) or per batch (memory).
    """
    if batch_size < 1:
        raise ConfigError("batch size: must be a whole number >= 1")
    rows: list[LayerRow] = []
    activation = [0]
    seen: set[nn.Module] = set()

    def hook(module: nn.Module, inputs: Any, output: Any) -> None:
        outs = list(_tensors(output))
        ins = {id(t) for t in _tensors(inputs)}
        if not module._modules:  # leaves hold the activations, parents repeat them
            activation[0] += sum(
                t.numel() * t.element_size() for t in outs if id(t) not in ins
            )
        own = 0 if module in seen else sum(p.numel() for p in module.parameters(False))
        seen.add(module)
        first = outs[0] if outs else None
        rows.append(
            LayerRow(
                path=paths[module],
                kind=type(module).__name__,
                output_shape=tuple(first.shape) if first is not None else (),
                parameters=own,
                macs=layer_macs(module, first) if first is not None else 0,
            )
        )

    paths = {
        module: path
        for path, module in model.named_modules()
        if not module._modules or any(True for _ in module.parameters(False))
    }
    first_param = next(model.parameters(), None)
    device = first_param.device if first_param is not None else torch.device("cpu")
    dtype = first_param.dtype if first_param is not None else torch.float32
    was_training = model.training
    handles = [module.register_forward_hook(hook) for module in paths]
    try:
        model.eval()
        with torch.no_grad():
            model(torch.zeros(1, *input_shape, device=device, dtype=dtype))
    finally:
        for handle in handles:
            handle.remove()
        model.train(was_training)
    unique = {id(p): p for p in model.parameters()}.values()
    return ModelSummary(
        rows=tuple(rows),
        input_shape=input_shape,
        batch_size=batch_size,
        parameters=sum(p.numel() for p in unique),
        trainable_parameters=sum(p.numel() for p in unique if p.requires_grad),
        macs=sum(row.macs for row in rows),
        activation_bytes_per_sample=activation[0],
    )


def summarize_named(
    name: str, input_shape: InputShape, num_classes: int = 10, batch_size: int = 1
) -> ModelSummary:
    """Summarise a built-in model or a ``torchvision.models`` classifier by name.

    Torchvision models are built with ``weights=None`` (nothing is downloaded) and
    take 3 channels. Bad names, sizes and counts raise ``ConfigError``.
    """
    for label, value in (
        ("channels", input_shape[0]),
        ("image size", min(input_shape[1:])),
        ("classes", num_classes),
        ("batch size", batch_size),
    ):
        if value < 1:
            raise ConfigError(f"{label}: must be a whole number >= 1, not {value}")
    # Random weights: a summary never downloads pretrained ones.
    model = build_model(name, num_classes, seed=0, input_shape=input_shape)
    try:
        return summarize_model(model, input_shape, batch_size)
    except RuntimeError as exc:
        shape = "x".join(map(str, input_shape))
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        message = f"model: {name} cannot take {shape} inputs ({first})"
        raise ConfigError(message) from exc
