"""What is in a checkpoint, in lines a person can read (the `inspect` command)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch

from workbench.core.config import ConfigError, TrainConfig
from workbench.core.distributed.reshard import saved_world_size
from workbench.core.models.state_dict_match import StateDiff
from workbench.core.training_run import MetricHistory


def _shape(tensor: torch.Tensor) -> str:
    return "x".join(str(d) for d in tensor.shape) or "scalar"


def _percent(value: Any) -> str:
    if not isinstance(value, int | float) or math.isnan(value):
        return "n/a"
    return f"{100 * value:.2f}%"


def _number(value: Any, spec: str) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "n/a"
    return format(value, spec)


def tensor_lines(state: dict[str, torch.Tensor]) -> list[str]:
    """One line per tensor (name, shape, dtype, elements) and a total."""
    width = max((len(n) for n in state), default=0)
    lines = [
        f"  {name:<{width}}  {_shape(t):>14}  {str(t.dtype).removeprefix('torch.'):8}"
        f"  {t.numel():>10,}"
        for name, t in state.items()
    ]
    total = sum(t.numel() for t in state.values())
    lines.append(f"  {len(state)} tensors, {total:,} values")
    return lines


def checkpoint_lines(
    path: Path, state: dict[str, torch.Tensor], payload: dict[str, Any] | None
) -> list[str]:
    """The report ``inspect`` prints for one file."""
    size = path.stat().st_size
    lines = [f"file: {path} ({size / 1e6:.2f} MB)"]
    if payload is None:
        lines.append("kind: a plain state_dict (weights only: no config, no progress)")
        lines.append("tensors:")
        return lines + tensor_lines(state)
    lines.append(
        f"format: ptcore-workbench checkpoint, version {payload['format_version']}"
        f" (torch {payload.get('torch_version', '?')}, "
        f"workbench {payload.get('workbench_version', '?')})"
    )
    try:
        cfg = TrainConfig.from_dict(payload["config"])
    except (ConfigError, TypeError) as exc:
        lines.append(f"config: unusable ({exc})")
        cfg = None
    if cfg is not None:
        fields = cfg.to_dict()
        fields.pop("schema_version", None)
        fields.pop("frozen", None)
        lines.append("config: " + ", ".join(f"{k}={v}" for k, v in fields.items()))
        steps_per_epoch = None
        order = payload.get("data_order")
        history = payload.get("history") or {}
        lines.append(
            f"progress: {payload['epoch']} of {cfg.resolved_epochs} epochs done, "
            f"{payload.get('batch_in_epoch', 0)} batches into the next; "
            f"global step {payload['global_step']:,}"
        )
        count = saved_world_size(payload)
        lines.append(f"trained by: {count} process{'es' if count != 1 else ''}")
        if order is not None:
            count = len(order["order"])
            steps_per_epoch = math.ceil(count / cfg.batch_size)
            lines.append(
                f"data order: stored for epoch {order['epoch'] + 1} "
                f"({count:,} samples, {steps_per_epoch} batches an epoch)"
            )
        # Read as a resume reads it (load_checkpoint checked that it parses).
        epochs = MetricHistory.from_dict(history).epochs
        if epochs:
            last = epochs[-1]
            lines.append(
                f"last epoch ({last.epoch + 1}): val accuracy "
                f"{_percent(last.val_accuracy)}, val loss "
                f"{last.val_loss:.4f}, train accuracy "
                f"{_percent(last.train_accuracy)}"
            )
        lines.append(f"logged steps: {len(history.get('steps') or [])}")
    frozen = payload.get("frozen") or []
    lines.append(
        f"frozen: {len(frozen)} tensors"
        + (
            f" ({', '.join(frozen[:6])}{', ...' if len(frozen) > 6 else ''})"
            if frozen
            else ""
        )
    )
    optimizer = payload.get("optimizer_state")
    if optimizer:
        lines.append(
            f"optimizer: state for {len(optimizer.get('state', {}))} tensors, "
            f"lr {_number(optimizer['param_groups'][0].get('lr'), '.3g')}"
        )
    scheduler = payload.get("scheduler_state")
    if scheduler:
        lines.append(
            f"scheduler: step {scheduler.get('last_epoch', '?')} of "
            f"{scheduler.get('total_steps', '?')}"
        )
    rng = payload.get("rng") or {}
    lines.append(f"random states: {', '.join(sorted(rng)) or 'none'}")
    lines.append("tensors (model_state):")
    return lines + tensor_lines(state)


def diff_lines(diff: StateDiff, model_name: str, num_classes: int) -> list[str]:
    """The ``--against-model`` report."""
    lines = [f"against {model_name} with {num_classes} classes: {diff.summary()}"]
    lines += [f"  {line}" for line in diff.lines()]
    if diff.partial:
        lines.append(
            "  a partial load keeps the matching tensors and reinitialises the rest "
            "(train --init-from PATH --init-partial)"
        )
    return lines
