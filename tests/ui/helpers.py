"""Shared bits of the window tests."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from workbench.core.config import TrainConfig

# Small and quick: the bundled digits, a tiny batch, a handful of steps.
FAST = TrainConfig(
    dataset="digits", model="mlp", batch_size=64, max_steps=4, log_every=1, epochs=1
)

# waitSignal(window.controller.state_changed, **BACK_TO_IDLE): the run or task ended.
BACK_TO_IDLE = {"check_params_cb": lambda state: state == "idle"}


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
    with qtbot.waitSignal(win.controller.run_finished, timeout=timeout):
        win.training_panel.start_button.click()


class _EventRelay(QObject):
    """Re-emits the controller's events of one type (tests wait on one kind)."""

    emitted = Signal(object)

    def __init__(self, controller: Any, kind: type) -> None:
        super().__init__(controller)
        self._kind = kind
        controller.event.connect(self._on_controller_event)

    @Slot(object)
    def _on_controller_event(self, event: Any) -> None:
        if isinstance(event, self._kind):
            self.emitted.emit(event)


_relays: list[_EventRelay] = []  # kept alive for the signals handed out


def event_signal(window: Any, kind: type) -> Any:
    """A signal emitted with each ``kind`` event the window's run controller emits.

    Connected after the window's own handlers, so the window has shown the
    event by the time it fires.
    """
    relay = _EventRelay(window.controller, kind)
    _relays.append(relay)
    return relay.emitted
