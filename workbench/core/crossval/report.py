"""A score over the folds in words: its mean and 95% interval, within its range."""

from __future__ import annotations

import math

from workbench.core.crossval.group import SCORES
from workbench.core.crossval.stats import Estimate

# Accuracy and F1 are fractions: an interval reaching past 100% is cut there.
_RANGES = {"val_accuracy": (0.0, 1.0), "macro_f1": (0.0, 1.0)}


def interval(name: str, value: Estimate) -> tuple[float, float] | None:
    """The 95% interval of score ``name``, cut to the values it can take."""
    if value.low is None or value.high is None:
        return None
    low, high = _RANGES.get(name, (0.0, math.inf))
    return max(low, value.low), min(high, value.high)


def value_text(name: str, value: float) -> str:
    """``"96.38%"`` for a fraction, ``"0.0335"`` for a loss."""
    return f"{value:.4f}" if name == "val_loss" else f"{100 * value:.2f}%"


def estimate_text(name: str, value: Estimate) -> str:
    """``"validation accuracy 96.38% ± 1.02 (95% CI 95.36-97.40%, 5 folds)"``."""
    scale, digits = (1.0, 4) if name == "val_loss" else (100.0, 2)
    label = SCORES.get(name, name)
    folds = f"{value.count} fold" + ("" if value.count == 1 else "s")
    bounds = interval(name, value)
    if bounds is None or value.half_width is None:
        return f"{label} {value_text(name, value.mean)} ({folds})"
    low, high = (value_text(name, bound) for bound in bounds)
    return (
        f"{label} {value_text(name, value.mean)} ± "
        f"{scale * value.half_width:.{digits}f} (95% CI {low} to {high}, {folds})"
    )
