"""Scrolling the settings column never changes the field under the pointer.

A real wheel is checked in a real X window by ``scripts/xvfb_mouse_check.py``.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QScrollArea,
    QSpinBox,
    QWidget,
)

from workbench.ui.widgets import wheel_guard


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


def test_no_field_takes_the_focus_from_the_wheel(qtbot, window):
    # Qt gives a real wheel's focus to a WheelFocus widget (Qt's default for
    # spin boxes and combos) before any event filter sees the wheel, so the
    # guard found the field focused and let the wheel change it. Sent events
    # skip that step, so the policy is what this test can check.
    late = QSpinBox()  # polished after the guard was installed
    qtbot.addWidget(late)
    late.show()
    fields = [
        *window.findChildren(QAbstractSpinBox),
        *window.findChildren(QComboBox),
        late,
    ]
    assert window.loader_panel.batch_spin in fields
    policies = {field.objectName(): field.focusPolicy() for field in fields}
    assert Qt.FocusPolicy.WheelFocus not in policies.values()
    assert policies["batchSizeSpin"] == Qt.FocusPolicy.StrongFocus
    assert late.focusPolicy() == Qt.FocusPolicy.StrongFocus


def test_fields_shown_before_the_guard_lose_their_wheel_focus_too(qtbot):
    app = QApplication.instance()
    installed = app.findChild(wheel_guard.WheelGuard)
    if installed is not None:
        app.removeEventFilter(installed)
        installed.setParent(None)
    early = QComboBox()
    qtbot.addWidget(early)
    early.show()
    assert early.focusPolicy() == Qt.FocusPolicy.WheelFocus
    wheel_guard.install(app)
    assert early.focusPolicy() == Qt.FocusPolicy.StrongFocus
