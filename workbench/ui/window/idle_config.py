"""The panels' settings for a tool that needs the run idle (finder, doctor, ...)."""

from __future__ import annotations

from typing import Any, Protocol

from workbench.core.config import ConfigError, TrainConfig
from workbench.ui.run_controller import RunState


class IdleWindow(Protocol):
    """What :func:`config_when_idle` uses of the window."""

    controller: Any

    def current_config(self) -> TrainConfig: ...
    def set_status(self, text: str) -> None: ...


def config_when_idle(
    window: IdleWindow, needs_it: str, cannot: str
) -> TrainConfig | None:
    """The panels' config; None, said in the status bar, while a run is not
    idle (``Stop or finish the run first: <needs_it>``) or when the panels'
    settings are invalid (``Cannot <cannot>: <why>``)."""
    if window.controller.state is not RunState.IDLE:
        window.set_status(f"Stop or finish the run first: {needs_it}")
        return None
    try:
        return window.current_config()
    except ConfigError as exc:
        window.set_status(f"Cannot {cannot}: {exc}")
        return None
