"""A sweep's search space: which settings vary, over what, checked before any run.

Each dimension names a config field (or ``frozen_blocks``: how many leading
blocks of the model are frozen) and what it may take: a rate range on a log
scale (``lr``, ``weight_decay``), or a list of choices. A trial's values become
a :class:`~workbench.core.config.TrainConfig` through :meth:`SearchSpace.apply`,
so every trial is validated like any run's settings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from workbench.core.config import (
    AUGMENTATIONS,
    OPTIMIZERS,
    SCHEDULES,
    ConfigError,
    TrainConfig,
)
from workbench.core.data.registry import dataset_info
from workbench.core.models.builtins import build_on_meta
from workbench.core.train.freezing import parameter_blocks

LOG_FIELDS = ("lr", "weight_decay")
CHOICE_FIELDS: dict[str, type] = {
    "batch_size": int,
    "epochs": int,
    "optimizer": str,
    "schedule": str,
    "model": str,
    "frozen_blocks": int,
}
ALLOWED: dict[str, Sequence[Any]] = {
    "optimizer": OPTIMIZERS,
    "schedule": SCHEDULES,
}
FIELDS = (*LOG_FIELDS, *CHOICE_FIELDS, "augment")


class Suggester(Protocol):
    """What a trial offers (Optuna's ``Trial`` has these)."""

    def suggest_float(
        self, name: str, low: float, high: float, *, log: bool
    ) -> float: ...
    def suggest_categorical(self, name: str, choices: Sequence[Any]) -> Any: ...


@dataclass(frozen=True)
class LogRange:
    """A rate between ``low`` and ``high``, drawn evenly on a log scale."""

    low: float
    high: float


@dataclass(frozen=True)
class Choices:
    """One of ``values``."""

    values: tuple[Any, ...]


@dataclass(frozen=True)
class SearchSpace:
    """The dimensions a sweep varies; everything else stays as the base config."""

    dimensions: Mapping[str, LogRange | Choices]

    @classmethod
    def parse(cls, raw: Mapping[str, Sequence[Any]]) -> SearchSpace:
        """``{"lr": [1e-4, 1e-1], "batch_size": [64, 128]}`` checked into a space.

        Raises ConfigError naming the first dimension that cannot work.
        """
        if not raw:
            raise ConfigError(
                "the sweep varies nothing: give at least one --sweep-FIELD"
            )
        dimensions: dict[str, LogRange | Choices] = {}
        for name, values in raw.items():
            dimensions[name] = _dimension(name, list(values))
        return cls(dimensions)

    def to_raw(self) -> dict[str, list[Any]]:
        """The space as :meth:`parse` reads it (a study records it so)."""
        return {
            name: [dim.low, dim.high] if isinstance(dim, LogRange) else list(dim.values)
            for name, dim in self.dimensions.items()
        }

    def suggest(self, trial: Suggester) -> dict[str, Any]:
        """The trial's value of each dimension (augment: each choice on or off)."""
        params: dict[str, Any] = {}
        for name, dim in self.dimensions.items():
            if isinstance(dim, LogRange):
                params[name] = trial.suggest_float(name, dim.low, dim.high, log=True)
            elif name == "augment":
                for choice in dim.values:
                    params[f"augment_{choice}"] = trial.suggest_categorical(
                        f"augment_{choice}", (False, True)
                    )
            else:
                params[name] = trial.suggest_categorical(name, dim.values)
        return params

    def current(self, base: TrainConfig) -> dict[str, Any]:
        """``base``'s own values as a trial's (trial 0 is the user's settings)."""
        params: dict[str, Any] = {}
        for name, dim in self.dimensions.items():
            if name == "augment":
                for choice in dim.values:  # type: ignore[union-attr]
                    params[f"augment_{choice}"] = choice in base.augment
            elif name == "frozen_blocks":
                params[name] = 0 if not base.frozen else None
            else:
                params[name] = getattr(base, name)
        # A value outside the space cannot be enqueued: the sampler draws it.
        return {
            k: v
            for k, v in params.items()
            if v is not None and _inside(self.dimensions, k, v)
        }

    def apply(self, base: TrainConfig, params: Mapping[str, Any]) -> TrainConfig:
        """``base`` with a trial's values (validated as any run's settings)."""
        changes: dict[str, Any] = {}
        augment = set(base.augment)
        for key, value in params.items():
            if key.startswith("augment_"):
                choice = key.removeprefix("augment_")
                (augment.add if value else augment.discard)(choice)
            elif key != "frozen_blocks":
                changes[key] = value
        if "augment" in self.dimensions:
            changes["augment"] = tuple(a for a in AUGMENTATIONS if a in augment)
        cfg = base.replace(**changes)
        if "frozen_blocks" in params:
            cfg = cfg.replace(frozen=frozen_patterns(cfg, int(params["frozen_blocks"])))
        return cfg


def frozen_patterns(cfg: TrainConfig, n: int) -> tuple[str, ...]:
    """Freeze patterns for the first ``n`` parameter blocks of ``cfg``'s model."""
    if n <= 0:
        return ()
    info = dataset_info(cfg.dataset) if cfg.dataset != "folder" else None
    shape = (
        info.image_shape if info is not None else (3, cfg.image_size, cfg.image_size)
    )
    classes = info.num_classes if info is not None else 2
    model = build_on_meta(cfg.model, classes, shape, cfg.weights)
    blocks = parameter_blocks(model)
    if n >= len(blocks):
        raise ConfigError(
            f"frozen_blocks {n}: {cfg.model} has {len(blocks)} blocks, and its last "
            "(the head) must train"
        )
    return tuple(f"{block}.*" for block in blocks[:n])


def _inside(dimensions: Mapping[str, LogRange | Choices], key: str, value: Any) -> bool:
    if key.startswith("augment_"):
        return True
    dim = dimensions[key]
    if isinstance(dim, LogRange):
        return dim.low <= value <= dim.high
    return value in dim.values


def _dimension(name: str, values: list[Any]) -> LogRange | Choices:
    if name not in FIELDS:
        raise ConfigError(
            f"cannot sweep {name!r}: the fields a sweep varies are {', '.join(FIELDS)}"
        )
    if not values:
        raise ConfigError(f"--sweep-{_flag(name)} needs values")
    if name in LOG_FIELDS:
        return _log_range(name, values)
    if name == "augment":
        unknown = [v for v in values if v not in AUGMENTATIONS]
        if unknown:
            raise ConfigError(
                f"--sweep-augment: {unknown[0]!r} is not one of "
                f"{', '.join(AUGMENTATIONS)}"
            )
        return Choices(tuple(dict.fromkeys(values)))
    kind = CHOICE_FIELDS[name]
    try:
        typed = [kind(v) for v in values]
    except (TypeError, ValueError):
        raise ConfigError(
            f"--sweep-{_flag(name)}: {values!r} are not all {kind.__name__} values"
        ) from None
    allowed = ALLOWED.get(name)  # models: checked as each trial's config is
    if allowed is not None:
        bad = [v for v in typed if v not in allowed]
        if bad:
            raise ConfigError(
                f"--sweep-{_flag(name)}: {bad[0]!r} is not one of {', '.join(allowed)}"
            )
    if kind is int and any(v < (0 if name == "frozen_blocks" else 1) for v in typed):
        raise ConfigError(
            f"--sweep-{_flag(name)}: {typed} must be whole numbers above 0"
        )
    return Choices(tuple(dict.fromkeys(typed)))


def _log_range(name: str, values: list[Any]) -> LogRange:
    flag = f"--sweep-{_flag(name)}"
    if len(values) != 2:
        raise ConfigError(f"{flag} takes a range: LOW HIGH, not {len(values)} values")
    try:
        low, high = float(values[0]), float(values[1])
    except (TypeError, ValueError):
        raise ConfigError(f"{flag}: {values!r} are not numbers") from None
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ConfigError(f"{flag}: the range must be finite")
    if low <= 0 or high <= 0:
        raise ConfigError(
            f"{flag} {low:g} {high:g}: a log-scale range cannot reach 0 or below "
            "(give e.g. 1e-6 for almost none)"
        )
    if low >= high:
        raise ConfigError(f"{flag} {low:g} {high:g}: the range is empty or inverted")
    return LogRange(low, high)


def _flag(name: str) -> str:
    return name.replace("_", "-")
