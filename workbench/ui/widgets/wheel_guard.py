"""Spin boxes and combos take the mouse wheel only when they have the focus.

Qt's default lets the wheel change whichever spin box or combo passes under the
pointer, so scrolling the settings column set Batch size from 256 to 1 on its
way down. With the guard, a wheel over an unfocused field scrolls the page
around it instead; click the field (or Tab to it) to wheel its value.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QWidget

_GUARDED = (QAbstractSpinBox, QComboBox)


def _take_no_wheel_focus(widget: QWidget) -> None:
    # Qt gives a real (spontaneous) wheel's focus to a WheelFocus field before
    # any event filter sees the wheel, so the field would have it by then.
    if widget.focusPolicy() == Qt.FocusPolicy.WheelFocus:
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)


class WheelGuard(QObject):
    """An application event filter: unfocused fields pass the wheel on."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.Polish and isinstance(watched, _GUARDED):
            _take_no_wheel_focus(watched)
        elif (
            kind == QEvent.Type.Wheel
            and isinstance(watched, _GUARDED)
            and not watched.hasFocus()
        ):
            # Not accepted: Qt offers the wheel to the parents (the scroll area).
            event.ignore()
            return True
        return False


def install(app: QCoreApplication) -> WheelGuard:
    """Guard every spin box and combo of ``app``, once however often called."""
    guard = app.findChild(WheelGuard)
    if guard is None:
        guard = WheelGuard(app)
        app.installEventFilter(guard)
        for widget in QApplication.allWidgets():  # those polished before
            if isinstance(widget, _GUARDED):
                _take_no_wheel_focus(widget)
    return guard
