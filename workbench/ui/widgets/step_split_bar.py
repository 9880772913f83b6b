"""Where each step's time goes, drawn: a stacked bar now, a strip of the recent past.

The bar splits the latest logged step time into the engine's phases (data,
copy, forward, backward, optimizer, other); under it each column of the strip
is one earlier log interval, so a loader that starts to lag shows as its
colour growing. Painted by hand: a few rectangles a log step, and it keeps its
colours when the panel around it is disabled during a run.
"""

from __future__ import annotations

from collections import deque

from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from workbench.core.train.step_clock import PHASES, split_text

# One colour a phase, told apart in colour-blind palettes too (Okabe-Ito).
PHASE_COLOURS = {
    "data": QColor("#E69F00"),
    "copy": QColor("#56B4E9"),
    "forward": QColor("#009E73"),
    "backward": QColor("#0072B2"),
    "optimizer": QColor("#CC79A7"),
    "other": QColor("#999999"),
}
HISTORY = 120  # log intervals the strip keeps
_BAR_H, _GAP, _STRIP_H = 14, 4, 28


class StepSplitBar(QWidget):
    """The latest step's split as a stacked bar, with the recent ones under it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("stepSplitBar")
        self._latest: tuple[float, ...] = ()
        self._history: deque[tuple[float, ...]] = deque(maxlen=HISTORY)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setToolTip("Where each training step's time goes: not measured yet")

    def sizeHint(self) -> QSize:
        return QSize(200, _BAR_H + _GAP + _STRIP_H)

    def minimumSizeHint(self) -> QSize:
        return QSize(80, _BAR_H + _GAP + _STRIP_H)

    def add(self, phases: tuple[float, ...], keep: bool = True) -> None:
        """A logged interval's split (seconds a step in each phase).

        ``keep``: also a column of the strip of recent intervals.
        """
        if len(phases) != len(PHASES) or sum(phases) <= 0:
            return
        self._latest = phases
        if keep:
            self._history.append(phases)
        self.setToolTip(split_text(phases))
        self.update()

    def clear(self) -> None:
        """A new run: nothing measured yet."""
        self._latest = ()
        self._history.clear()
        self.setToolTip("Where each training step's time goes: not measured yet")
        self.update()

    def shares(self) -> tuple[float, ...]:
        """Each phase's share of the latest step; () before the first."""
        total = sum(self._latest)
        return tuple(p / total for p in self._latest) if total > 0 else ()

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        width = float(self.width())
        painter.fillRect(QRectF(0, 0, width, _BAR_H), QColor("#e8e8e8"))
        if self._latest:
            _stack_across(painter, self._latest, QRectF(0, 0, width, _BAR_H))
        strip = QRectF(0, _BAR_H + _GAP, width, _STRIP_H)
        painter.fillRect(strip, QColor("#f2f2f2"))
        column = width / HISTORY
        start = HISTORY - len(self._history)
        for i, phases in enumerate(self._history):
            x = (start + i) * column
            _stack_up(painter, phases, QRectF(x, strip.top(), column, _STRIP_H))
        painter.end()


def _stack_across(painter: QPainter, phases: tuple[float, ...], rect: QRectF) -> None:
    """Phases left to right, each as wide as its share."""
    total = sum(phases)
    x = rect.left()
    for name, seconds in zip(PHASES, phases, strict=True):
        w = rect.width() * seconds / total
        painter.fillRect(QRectF(x, rect.top(), w, rect.height()), PHASE_COLOURS[name])
        x += w


def _stack_up(painter: QPainter, phases: tuple[float, ...], rect: QRectF) -> None:
    """Phases bottom to top, each as tall as its share."""
    total = sum(phases)
    y = rect.bottom()
    for name, seconds in zip(PHASES, phases, strict=True):
        h = rect.height() * seconds / total
        y -= h
        painter.fillRect(QRectF(rect.left(), y, rect.width(), h), PHASE_COLOURS[name])


def legend_html() -> str:
    """The phases' colours as one line of rich text, for a label under the bar."""
    return " ".join(
        f"<span style='color:{PHASE_COLOURS[name].name()}'>■</span>&nbsp;{name}"
        for name in PHASES
    )


__all__ = ["PHASE_COLOURS", "StepSplitBar", "legend_html"]
