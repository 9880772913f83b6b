"""The Draw tab's keys: digits choose a label, Enter adds, Esc clears, Ctrl+Z undoes.

They work wherever the focus is in the window while the tab is shown, except
in a field the user types in. Window shortcuts of a hidden widget never fire,
so they are dead while another tab is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from workbench.ui.widgets.photo_view import OPEN_IMAGE_KEYS

DIGIT_KEYS = tuple(Qt.Key(Qt.Key.Key_0 + d) for d in range(10))
ENTER_KEYS = (
    QKeySequence(Qt.Key.Key_Return),
    QKeySequence(Qt.Key.Key_Enter),
    QKeySequence(Qt.KeyboardModifier.KeypadModifier | Qt.Key.Key_Enter),
)


def typing_in(widget: QWidget | None) -> bool:
    """True for a widget that takes typed text (digits and Enter are its own)."""
    if isinstance(widget, QComboBox):
        return widget.isEditable()
    return isinstance(widget, QLineEdit | QAbstractSpinBox | QTextEdit | QPlainTextEdit)


class DrawKeys(QObject):
    """The tab's window shortcuts; the plain ones are off while the user types.

    Parameters
    ----------
    panel : QWidget
        The tab: its shortcuts live (and die) with it.
    set_label, add, clear, undo, open_image : callable
        What digit ``d``, Enter, Esc, Undo and Open image do.
    """

    def __init__(
        self,
        panel: QWidget,
        *,
        set_label: Callable[[int], object],
        add: Callable[[], object],
        clear: Callable[[], object],
        undo: Callable[[], object],
        open_image: Callable[[], object],
    ) -> None:
        super().__init__(panel)
        self._panel = panel
        self._plain_keys: list[QShortcut] = []
        for digit, key in enumerate(DIGIT_KEYS):
            keys = [
                QKeySequence(key),
                QKeySequence(Qt.KeyboardModifier.KeypadModifier | key),
            ]
            self._plain_keys.append(
                self._window_shortcut(keys, lambda d=digit: set_label(d))
            )
        self._plain_keys.append(self._window_shortcut(ENTER_KEYS, add))
        self._plain_keys.append(
            self._window_shortcut([QKeySequence(Qt.Key.Key_Escape)], clear)
        )
        # A text field claims Undo for itself (ShortcutOverride): no switch needed.
        self._window_shortcut([QKeySequence(QKeySequence.StandardKey.Undo)], undo)
        self._window_shortcut([OPEN_IMAGE_KEYS], open_image)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_app_focus_changed)

    def _window_shortcut(
        self, keys: Iterable[QKeySequence], slot: Callable[[], object]
    ) -> QShortcut:
        shortcut = QShortcut(self._panel)
        shortcut.setKeys(list(keys))
        shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        shortcut.activated.connect(slot)
        return shortcut

    @Slot(QWidget, QWidget)
    def _on_app_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        typing = typing_in(new)
        for shortcut in self._plain_keys:
            shortcut.setEnabled(not typing)


def handle_key(
    event: QKeyEvent, set_label: Callable[[int], object], add: Callable[[], object]
) -> bool:
    """Digits and Enter that reach the panel itself; True when handled."""
    key = event.key()
    plain = not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
    if plain and key in DIGIT_KEYS:
        set_label(key - Qt.Key.Key_0)
        return True
    typing = typing_in(QApplication.focusWidget())
    if plain and not typing and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
        add()
        return True
    return False
