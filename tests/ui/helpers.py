"""Shared bits of the window tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.core.config import TrainConfig

# Small and quick: the bundled digits, a tiny batch, a handful of steps.
FAST = TrainConfig(
    dataset="digits", model="mlp", batch_size=64, max_steps=4, log_every=1, epochs=1
)


def bias_corrected_average(values: np.ndarray, beta: float) -> np.ndarray:
    """s_t = sum_{i<=t} (1 - b) b^(t-i) x_i / (1 - b^t), straight from the sum."""
    x = np.asarray(values, dtype=float)
    out = np.empty(len(x))
    for t in range(1, len(x) + 1):
        weights = (1 - beta) * beta ** (t - np.arange(1, t + 1))
        out[t - 1] = np.dot(weights, x[:t]) / (1 - beta**t)
    return out


def run_to_end(qtbot: Any, win: Any, timeout: int = 30_000) -> None:
    """Press Start and wait until the trainer thread has finished."""
    with qtbot.waitSignal(win.run_finished, timeout=timeout):
        win.training_panel.start_button.click()
