"""The window's layout: nothing moves with the run, and small screens work."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QPoint, QRect, QRectF
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QScrollArea, QWidget

from workbench.core.events import StepMetrics
from workbench.ui.main_window import MainWindow
from workbench.ui.widgets.draw_widgets import WrappingLabel

from .helpers import BACK_TO_IDLE, FAST, event_signal

pytestmark = pytest.mark.gui


def settle() -> None:
    """Let pending layout requests run (each level posts one to its parent)."""
    for _ in range(4):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        QApplication.processEvents()


def in_window(widget: QWidget, rect: QRect | None = None) -> QRect:
    """``rect`` (default: all of ``widget``) in the coordinates of its window."""
    rect = widget.rect() if rect is None else rect
    return rect.translated(widget.mapTo(widget.window(), QPoint(0, 0)))


def geometries(window: Any) -> dict[str, QRect]:
    """Where the columns, tabs, plots, freeze tree and run buttons are."""
    splitter = window.main_splitter
    shown = {f"column {i}": splitter.widget(i) for i in range(splitter.count())}
    shown["tabs"] = window.tabs
    shown |= {plot.objectName(): plot for plot in window.curves.plots}
    shown["freezeTree"] = window.freeze_panel.tree
    panel = window.training_panel
    for button in (panel.start_button, panel.pause_button, panel.stop_button):
        shown[button.objectName()] = button
    return {name: in_window(widget) for name, widget in shown.items()}


def test_nothing_moves_when_a_run_starts_pauses_and_finishes(qtbot, window):
    window.resize(1500, 920)
    window.apply_config(FAST.replace(max_steps=40, epochs=2))
    settle()
    idle = geometries(window)
    assert idle["column 1"].width() > 0  # the model column is on screen
    seen: dict[str, dict[str, QRect]] = {}
    locked: list[bool] = []

    def on_step(event: StepMetrics) -> None:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        settle()
        name = "running" if "running" not in seen else "resumed"
        seen.setdefault(name, geometries(window))
        locked.append(window.freeze_panel.lock_label.isVisibleTo(window))
        if event.global_step == 1:
            window.toggle_pause()

    event_signal(window, StepMetrics).connect(on_step)
    paused = {"check_params_cb": lambda state: state == "paused"}
    with qtbot.waitSignal(window.controller.state_changed, timeout=30_000, **paused):
        window.start()
    assert locked[0]  # the freeze tree said it is locked while the run trained
    settle()
    seen["paused"] = geometries(window)
    with qtbot.waitSignal(window.controller.run_finished, timeout=30_000):
        window.toggle_pause()
    qtbot.waitUntil(lambda: window.state == "idle")
    settle()
    seen["finished"] = geometries(window)
    assert window.current_run.global_step == 40
    assert set(seen) == {"running", "resumed", "paused", "finished"}
    for state, now in seen.items():
        moved = {k: (idle[k].getRect(), v.getRect()) for k, v in now.items()}
        moved = {k: v for k, v in moved.items() if v[0] != v[1]}
        assert not moved, f"{state}: {moved}"


def visible_rect(scroll: QScrollArea) -> QRect:
    """The part of the window a scroll area shows its content in."""
    return in_window(scroll.viewport())


def test_the_draw_tab_fits_a_1024x700_window(qtbot, window):
    window.resize(1024, 700)
    window.tabs.setCurrentWidget(window.draw_page)
    settle()
    shown = visible_rect(window.draw_page) & window.rect()
    canvas = window.draw_panel.canvas
    assert shown.contains(in_window(canvas)), (shown, in_window(canvas))
    bars = window.draw_panel.bars
    assert shown.contains(in_window(bars)), (shown, in_window(bars))
    # Every bar, at full height, lies inside the widget, with room to see it.
    assert len(bars.class_names()) == 10
    for index in range(10):
        rect = bars.bar_rect(index)
        assert QRectF(bars.rect()).contains(rect), (index, rect, bars.rect())
        assert rect.height() >= 80, rect
        assert rect.width() >= 8, rect
    # The tabs got their room first: the side columns gave it up.
    assert window.tabs.width() >= window.draw_panel.minimumSizeHint().width()
    # No wrapped text of the tab is cut: each label is as tall as its lines.
    for label in window.draw_panel.findChildren(WrappingLabel):
        if label.isVisible() and label.text():
            needed = label.heightForWidth(label.width())
            assert label.height() >= needed, (label.objectName(), label.text())


def scrolling_content(widget: QWidget) -> bool:
    """True inside a scroll area's viewport: such content may scroll out of sight."""
    parent = widget.parentWidget()
    while parent is not None:
        grand = parent.parentWidget()
        if isinstance(grand, QAbstractScrollArea) and parent is grand.viewport():
            return True
        parent = grand
    return False


def folded(widget: QWidget) -> bool:
    """True inside a splitter column folded to nothing (the splitter parks it)."""
    while widget is not None and not widget.isWindow():
        if widget.width() == 0 or widget.height() == 0:
            return True
        widget = widget.parentWidget()
    return False


def overflowing(window: Any) -> list[str]:
    """Visible widgets that reach outside the window or their unscrollable column."""
    bad = []
    frame = window.rect()
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or widget.isWindow() or scrolling_content(widget):
            continue
        if folded(widget):
            continue
        rect = in_window(widget)
        if not frame.contains(rect):
            bad.append(f"{widget.objectName() or type(widget).__name__} {rect}")
    for scroll in window.findChildren(QScrollArea):
        content = scroll.widget()
        if scroll.isVisible() and content.width() > scroll.viewport().width():
            if scroll.horizontalScrollBar().isVisible():
                continue  # it scrolls sideways: nothing is cut off
            bad.append(f"{scroll.objectName()}: content cut at the right")
    return bad


def test_at_the_minimum_size_nothing_is_wider_than_the_window(qtbot, window):
    window.resize(200, 200)
    settle()
    minimum = window.minimumSize()
    assert window.size() == minimum
    assert minimum.width() <= 800  # it fits an 800x600 screen
    assert minimum.height() <= 600
    assert window.minimumSizeHint().boundedTo(minimum) == window.minimumSizeHint()
    assert overflowing(window) == []
    # Texts that change with a run (status, progress, speed) do not widen it.
    with qtbot.waitSignal(
        window.controller.state_changed, timeout=30_000, **BACK_TO_IDLE
    ):
        window.start()
    window.set_status("A status line far longer than any window is wide. " * 5)
    settle()
    assert window.size() == minimum
    # Every widget still gets its minimum width: nothing is squeezed into it.
    assert window.minimumSizeHint().boundedTo(minimum) == window.minimumSizeHint()
    assert overflowing(window) == []


def test_a_first_window_fits_the_screen(qtbot):
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    available = win.screen().availableGeometry()
    assert win.width() <= available.width()
    assert win.height() <= available.height()
    qtbot.waitUntil(lambda: not win.data_panel.is_busy(), timeout=30_000)
    win.close()


def test_columns_saved_on_a_bigger_screen_leave_the_tabs_room(qtbot):
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    win.resize(1600, 1000)  # larger than the test screen, like a big monitor
    win.main_splitter.setSizes([450, 400, 742])
    settle()
    qtbot.waitUntil(lambda: not win.data_panel.is_busy(), timeout=30_000)
    win.close()

    again = MainWindow()
    qtbot.addWidget(again)
    again.show()
    settle()
    available = again.screen().availableGeometry()
    assert again.width() <= available.width()
    # The saved widths did not squeeze the tabs: they share the window like new.
    fresh = MainWindow()
    qtbot.addWidget(fresh)
    fresh.resize(again.size())
    fresh.show()
    settle()
    assert again.main_splitter.sizes() == fresh.main_splitter.sizes()
    assert again.tabs.width() >= again.width() // 3
    assert overflowing(again) == []
    qtbot.waitUntil(lambda: not again.data_panel.is_busy(), timeout=30_000)
    qtbot.waitUntil(lambda: not fresh.data_panel.is_busy(), timeout=30_000)
    again.close()
    fresh.close()


def test_the_view_menu_unfolds_and_folds_the_model_column(qtbot, window):
    window.resize(1024, 700)
    settle()
    splitter = window.main_splitter
    assert splitter.sizes()[1] == 0  # folded: the tabs keep their room
    action = window.commands.model_column
    view_menu = action.associatedObjects()[-1]
    view_menu.aboutToShow.emit()
    assert not action.isChecked()
    action.trigger()
    settle()
    assert splitter.sizes()[1] >= window.freeze_panel.minimumSizeHint().width()
    assert window.freeze_panel.isVisible()
    view_menu.aboutToShow.emit()
    assert action.isChecked()
    action.trigger()
    settle()
    assert splitter.sizes()[1] == 0
