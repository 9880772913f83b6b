"""Scrolling the settings column never changes the field under the pointer."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QScrollArea, QWidget


def wheel_down(widget: QWidget) -> QWheelEvent:
    """One notch of the wheel, down, over the middle of ``widget``; the event."""
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(
        centre,
        QPointF(widget.mapToGlobal(centre.toPoint())),
        QPoint(0, 0),
        QPoint(0, -120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)
    return event


def test_the_wheel_passes_an_unfocused_field_on_to_the_column(qtbot, window):
    window.resize(1024, 500)  # the settings column scrolls
    window.show()
    qtbot.waitExposed(window)
    column = window.findChild(QScrollArea, "settingsScroll")
    spin = window.loader_panel.batch_spin
    combo = window.training_panel.optimizer_combo
    before = (spin.value(), combo.currentIndex())
    for field in (spin, combo):
        assert not field.hasFocus()
        # Left unaccepted: Qt offers a real wheel to the field's parents, up
        # to the column (a sent event stops at its receiver, so the test
        # offers it to the column itself).
        assert not wheel_down(field).isAccepted()
    assert (spin.value(), combo.currentIndex()) == before
    scrolled = column.verticalScrollBar().value()
    wheel_down(column.viewport())
    assert column.verticalScrollBar().value() > scrolled


def test_a_focused_field_takes_the_wheel(qtbot, window):
    window.show()
    window.activateWindow()
    qtbot.waitActive(window)
    spin = window.loader_panel.batch_spin
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus)
    before = spin.value()
    wheel_down(spin)
    assert spin.value() < before
