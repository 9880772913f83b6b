"""Every run's first step waits until the window has handled its start and painted.

The trainer holds its first step until the GUI thread has handled ``RunStarted``
and been through the repaints that handling asked for and what painting
posted in turn, two passes deep (``trainer_thread._CatchUp``: low-priority trips
through the event queue, so none overtakes a repaint request); all of it after
the window's own handlers, on each start in the same window, not only the first.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtWidgets import QWidget

from workbench.core import events as E
from workbench.ui import trainer_thread

from .helpers import FAST, run_to_end

pytestmark = pytest.mark.gui

_FOLLOW_UP = QEvent.Type(QEvent.registerEventType())
# How long the last follow-up gives a released trainer to show it was released.
_FOLLOW_UP_S = 0.3
# Passes through the event queue after the paint: what painting posted, and
# what that posted in turn (a plot's paint that lays out, then repaints).
_FOLLOW_UPS = 2


def _watch_release(session: Any) -> threading.Event:
    """Set once the trainer asks its run for what follows ``RunStarted``.

    That is the moment its wait for the GUI thread ended: the trainer thread
    emits ``RunStarted``, waits, then takes the next event (the first step).
    """
    released = threading.Event()
    train = session.train

    def watched(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for event in train(*args, **kwargs):
            if isinstance(event, E.RunStarted):
                released.clear()
                yield event
                released.set()
            else:
                yield event

    session.train = watched
    return released


class _StartView(QWidget):
    """A view the start repaints; its painting posts more work, as a plot's does.

    The last follow-up notes, for each run, whether the trainer was released
    before it ran (given ``_FOLLOW_UP_S`` to show it was).
    """

    def __init__(self, parent: QWidget, released: threading.Event) -> None:
        super().__init__(parent)
        self.released_before_shown: list[bool] = []  # one per run
        self._released = released
        self._repaint_asked = False
        self._follow_ups_left = 0
        self.setGeometry(0, 0, 24, 24)
        self.show()
        self.raise_()

    def on_event(self, event: object) -> None:
        """After the window's own handlers: ask for a repaint on each start."""
        if isinstance(event, E.RunStarted):
            self._repaint_asked = True
            self.update()

    def paintEvent(self, _event: QEvent) -> None:
        """Post the first follow-up of the start's repaint."""
        if self._repaint_asked:
            self._repaint_asked, self._follow_ups_left = False, _FOLLOW_UPS
            self._post_follow_up()

    def _post_follow_up(self) -> None:
        # Low priority, as Qt posts a widget's repaint request.
        QCoreApplication.postEvent(
            self, QEvent(_FOLLOW_UP), Qt.EventPriority.LowEventPriority.value
        )

    def event(self, event: QEvent) -> bool:
        """Run a follow-up; every other event as QWidget's."""
        if event.type() != _FOLLOW_UP:
            return super().event(event)
        self._follow_ups_left -= 1
        if self._follow_ups_left > 0:
            self._post_follow_up()
        elif self._follow_ups_left == 0:
            released = self._released.wait(_FOLLOW_UP_S)
            self.released_before_shown.append(released)
        return True


def test_every_runs_first_step_waits_for_the_starts_repaints_and_what_they_posted(
    qtbot, window, monkeypatch
):
    # Never give up waiting here: the last follow-up alone keeps the GUI 0.3 s.
    monkeypatch.setattr(trainer_thread, "CATCH_UP_MAX_S", 30.0)
    released = _watch_release(window.controller.session)
    view = _StartView(window, released)
    window.controller.event.connect(view.on_event)

    run_to_end(qtbot, window)  # a new run
    window.apply_config(FAST.replace(max_steps=6))
    run_to_end(qtbot, window)  # the same run, continued to step 6
    run_to_end(qtbot, window)  # nothing left of it: a new run

    # One repaint and its follow-ups per start. Released after one trip through
    # the event queue, by trips that overtake repaint requests, or on a start
    # that no longer waits, the trainer went on before the follow-ups had run.
    assert view.released_before_shown == [False, False, False]
