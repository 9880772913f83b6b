"""Shared bits of the window tests."""

from __future__ import annotations

from typing import Any

from workbench.core.config import TrainConfig

# Small and quick: the bundled digits, a tiny batch, a handful of steps.
FAST = TrainConfig(
    dataset="digits", model="mlp", batch_size=64, max_steps=4, log_every=1, epochs=1
)


def run_to_end(qtbot: Any, win: Any, timeout: int = 30_000) -> None:
    """Press Start and wait until the trainer thread has finished."""
    with qtbot.waitSignal(win.run_finished, timeout=timeout):
        win.training_panel.start_button.click()
