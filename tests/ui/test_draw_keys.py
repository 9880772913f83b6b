"""The Draw tab's keys: wherever the focus is while the tab is shown, never elsewhere.

Offscreen, keys reach only the active window, so each test activates it first;
keys are sent to the widget that has the focus, as a real key press is.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QSpinBox

from workbench.core.data.my_digits import MyDigits

pytestmark = pytest.mark.gui


def activate(qtbot, window) -> None:
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5_000)


def focus(qtbot, widget) -> None:
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus, timeout=2_000)


def press(key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    """A key press where the focus is."""
    QTest.keyClick(QApplication.focusWidget(), key, modifier)


def draw_stroke(canvas, x: int) -> None:
    QTest.mousePress(canvas, Qt.LeftButton, Qt.NoModifier, QPoint(x, 60))
    QTest.mouseMove(canvas, QPoint(x + 10, 140))
    QTest.mouseRelease(canvas, Qt.LeftButton, Qt.NoModifier, QPoint(x + 10, 220))


def tab_action(window, name: str) -> QAction:
    return window.findChild(QAction, name)


def test_ctrl_2_gives_the_canvas_the_focus_and_the_keys_work_at_once(qtbot, window):
    activate(qtbot, window)
    panel, canvas = window.draw_panel, window.draw_panel.canvas
    batch_spin = window.findChild(QSpinBox, "batchSizeSpin")
    focus(qtbot, batch_spin)  # the user was typing in the settings column

    tab_action(window, "showDrawAction").trigger()  # Ctrl+2
    assert window.tabs.currentWidget() is window.draw_page
    qtbot.waitUntil(canvas.hasFocus, timeout=2_000)
    assert QApplication.focusWidget() is canvas

    draw_stroke(canvas, 80)
    draw_stroke(canvas, 160)
    press(Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert canvas.stroke_count() == 1
    press(Qt.Key.Key_4)
    assert panel.label_combo.currentData() == 4
    press(Qt.Key.Key_Return)
    assert [s.label for s in MyDigits().samples()] == [4]
    assert canvas.is_empty()

    # Focus anywhere else in the window: the keys still work while the tab shows.
    draw_stroke(canvas, 80)
    for elsewhere in (window.tabs.tabBar(), panel.clear_button, batch_spin):
        focus(qtbot, elsewhere)
        panel.set_label(0)
        press(Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        if elsewhere is batch_spin:
            # A field one types in keeps its digits (and its Enter and Undo).
            value = batch_spin.value()
            press(Qt.Key.Key_7)
            assert panel.label_combo.currentData() == 0
            assert batch_spin.value() != value
            press(Qt.Key.Key_Return)
            assert len(MyDigits()) == 1
            assert canvas.stroke_count() == 1  # Undo is the field's own too
            continue
        assert canvas.is_empty()
        draw_stroke(canvas, 80)
        press(Qt.Key.Key_7)
        assert panel.label_combo.currentData() == 7
        press(Qt.Key.Key_Escape)
        assert canvas.is_empty()
        draw_stroke(canvas, 80)


def test_the_draw_keys_are_dead_while_another_tab_is_shown(qtbot, window):
    activate(qtbot, window)
    panel, canvas = window.draw_panel, window.draw_panel.canvas
    tab_action(window, "showDrawAction").trigger()
    draw_stroke(canvas, 80)
    panel.set_label(2)
    tab_action(window, "showCurvesAction").trigger()  # Ctrl+1
    epochs_spin = window.findChild(QSpinBox, "epochsSpin")
    for target in (window.tabs.tabBar(), epochs_spin):
        focus(qtbot, target)
        press(Qt.Key.Key_5)
        press(Qt.Key.Key_Escape)
        press(Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        press(Qt.Key.Key_Return)
        assert panel.label_combo.currentData() == 2
        assert canvas.stroke_count() == 1
        assert len(MyDigits()) == 0
    assert not canvas.hasFocus()


def test_typing_in_the_draw_tabs_own_fields_edits_them(qtbot, window):
    activate(qtbot, window)
    panel, canvas = window.draw_panel, window.draw_panel.canvas
    tab_action(window, "showDrawAction").trigger()
    draw_stroke(canvas, 80)
    panel.set_label(1)
    focus(qtbot, panel.epochs_spin)
    panel.epochs_spin.selectAll()
    press(Qt.Key.Key_3)
    press(Qt.Key.Key_5)
    press(Qt.Key.Key_Return)
    assert panel.epochs_spin.value() == 35
    assert panel.label_combo.currentData() == 1
    assert len(MyDigits()) == 0  # Enter in a field adds nothing
    assert not canvas.is_empty()


def test_open_in_canvas_gives_the_canvas_the_focus(qtbot, window):
    from .helpers import FAST, run_to_end

    activate(qtbot, window)
    window.apply_config(FAST.replace(max_steps=None, epochs=1))
    run_to_end(qtbot, window)
    evaluation = window.evaluation_panel
    tab_action(window, "showEvaluationAction").trigger()
    evaluation.select_cell(0, 0)
    focus(qtbot, evaluation.gallery)
    evaluation.open_button.click()
    assert window.tabs.currentWidget() is window.draw_page
    qtbot.waitUntil(window.draw_panel.canvas.hasFocus, timeout=2_000)
    # The true label is preset: one key adds the image to my digits.
    press(Qt.Key.Key_Enter, Qt.KeyboardModifier.KeypadModifier)
    assert [s.label for s in MyDigits().samples()] == [0]
