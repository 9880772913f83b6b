"""The data issues dialog's fixes: relabel, exclude, keep, undo, and their overlay.

:class:`FixesRow` is the row of buttons over the lists and the named
:class:`~workbench.core.data.fixes.Overlay` they edit (``fixes`` by default,
one per dataset, in the user's data folder: the images are never touched).
Each change is saved at once, whole or not at all: a save that fails takes the
change back in memory too, so what the dialog shows is what the file holds.
Which images a change is about is the dialog's to say (its selected rows).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from PySide6.QtCore import Signal, Slot
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QPushButton, QWidget

from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.fixes import Fix, Overlay, image_key
from workbench.ui import dialogs

log = logging.getLogger(__name__)

DEFAULT_NAME = "fixes"  # the overlay the window makes and uses
LIKELY = "likely"  # a relabel to each row's own likely class
SHORTCUTS = {
    LIKELY: "Ctrl+R",
    "relabel": "Ctrl+Shift+R",
    "exclude": "Del",
    "keep": "Ctrl+K",
    "undo": "Ctrl+Z",
}


def fix_note(fix: Fix | None) -> str:
    """What a row's Fix column says: ``→ dog``, ``excluded``, ``kept`` or nothing."""
    if fix is None:
        return ""
    if fix.action == "relabel":
        return f"→ {fix.label}"
    return "excluded" if fix.action == "exclude" else "kept"


def fixes_text(overlay: Overlay) -> str:
    """``Fixes 'fixes': 3 relabelled, 1 excluded, 2 kept`` (those in effect)."""
    effect = [fix.action for fix in overlay.in_effect().values()]
    return (
        f"Fixes {overlay.name!r}: {effect.count('relabel')} relabelled, "
        f"{effect.count('exclude')} excluded, {effect.count('keep')} kept"
    )


def _button(text: str, name: str, tip: str, key: str) -> QPushButton:
    button = QPushButton(text, objectName=name)
    button.setShortcut(QKeySequence(SHORTCUTS[key]))
    shortcut = button.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
    button.setToolTip(f"{tip} ({shortcut})")
    return button


class FixesRow(QWidget):
    """Relabel to likely, Relabel to…, Exclude, Keep as labelled, Undo; the counts.

    ``requested(action, label)`` when a button asks for a fix of the selected
    rows (``action`` :data:`LIKELY` for each row's likely class); the dialog
    answers with :meth:`record`. ``saved`` after each change written.
    """

    requested = Signal(str, str)
    saved = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.overlay: Overlay | None = None
        self.config: TrainConfig | None = None
        self._notes: dict[str, str] = {}
        self.likely_button = _button(
            "Relabel to likely",
            "fixLikelyButton",
            "Relabel the selected images to the class the held-out models see",
            LIKELY,
        )
        self.relabel_menu = QMenu(self)
        self.relabel_menu.setObjectName("fixRelabelMenu")
        self.relabel_menu.triggered.connect(self._on_relabel_menu_triggered)
        self.relabel_button = _button(
            "Relabel to…",
            "fixRelabelButton",
            "Relabel the selected images to a class you choose",
            "relabel",
        )
        # A button with a menu would open it on a click but not on its shortcut.
        self.relabel_button.clicked.connect(self._on_relabel_button_clicked)
        self.exclude_button = _button(
            "Exclude",
            "fixExcludeButton",
            "Leave the selected images out of training and validation",
            "exclude",
        )
        self.keep_button = _button(
            "Keep as labelled",
            "fixKeepButton",
            "Looked at and right as labelled (takes back an earlier fix of them)",
            "keep",
        )
        self.undo_button = _button(
            "Undo", "fixUndoButton", "Take back the last fix", "undo"
        )
        self.likely_button.clicked.connect(self._on_likely_button_clicked)
        self.exclude_button.clicked.connect(self._on_exclude_button_clicked)
        self.keep_button.clicked.connect(self._on_keep_button_clicked)
        self.undo_button.clicked.connect(self.undo)
        self.summary = QLabel(objectName="fixesSummary")
        self.summary.setWordWrap(True)  # a damaged file's path: not a wider dialog
        self.summary.setToolTip(
            "Fixes are kept apart from your images, which are never changed; a run "
            "uses them when the Data panel's Use fixes is checked"
        )
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for button in self.action_buttons():
            row.addWidget(button)
        row.addWidget(self.undo_button)
        row.addWidget(self.summary, 1)
        self.set_selection(0, likely=False)

    def action_buttons(self) -> tuple[QPushButton, ...]:
        """The buttons that fix the selected rows."""
        return (
            self.likely_button,
            self.relabel_button,
            self.exclude_button,
            self.keep_button,
        )

    # ------------------------------------------------------------------ state

    def open(self, cfg: TrainConfig, class_names: Sequence[str]) -> None:
        """Edit ``cfg``'s dataset's overlay (a damaged one: shown, not edited)."""
        self.config = cfg
        self.relabel_menu.clear()
        for name in class_names:
            self.relabel_menu.addAction(name).setData(name)
        try:
            self.overlay = Overlay.open(DEFAULT_NAME, cfg)
        except ConfigError as exc:
            self.overlay = None
            self.summary.setText(f"Fixes cannot be made: {exc}")
        self._show_state()

    def set_selection(self, rows: int, *, likely: bool) -> None:
        """``rows`` selected; ``likely``: they have a likely class to relabel to."""
        usable = self.overlay is not None and rows > 0
        for button in self.action_buttons():
            button.setEnabled(usable)
        self.likely_button.setEnabled(usable and likely)

    def note(self, file: str) -> str:
        """The Fix column of image ``file`` (as the lists name it)."""
        return self._notes.get(file, "")

    def _show_state(self) -> None:
        overlay = self.overlay
        self._notes = (
            {}
            if overlay is None
            else {fix.file: fix_note(fix) for fix in overlay.in_effect().values()}
        )
        self.undo_button.setEnabled(overlay is not None and bool(overlay.fixes))
        if overlay is not None:
            self.summary.setText(fixes_text(overlay))
        if overlay is None or not overlay.fixes:
            self.undo_button.setToolTip("Take back the last fix (none yet)")
        else:
            last = overlay.fixes[-1]
            said = f"{fix_note(last)} {last.file}".replace("→", "relabelled →")
            self.undo_button.setToolTip(f"Take back the last fix: {said} (Ctrl+Z)")

    # ------------------------------------------------------------------ changes

    def record(self, fixes: Sequence[tuple[str, str, str]]) -> bool:
        """Add ``(file, action, label)`` fixes in order and save; False if not saved.

        A file that cannot be read (for its key) or a save that fails is shown
        as a message and nothing is added.
        """
        overlay, cfg = self.overlay, self.config
        if overlay is None or cfg is None or not fixes:
            return False
        try:
            made = [
                Fix(image_key(cfg, file), file, action, label)
                for file, action, label in fixes
            ]
        except OSError as exc:
            self._fail("Could not fix the images", f"Cannot read an image: {exc}")
            return False
        before = list(overlay.fixes)
        for fix in made:
            overlay.add(fix)
        return self._save(before)

    @Slot()
    def undo(self) -> None:
        """Take the last fix back and save (restored if the save fails)."""
        overlay = self.overlay
        if overlay is None or not overlay.fixes:
            return
        before = list(overlay.fixes)
        overlay.undo()
        self._save(before)

    def _save(self, before: list[Fix]) -> bool:
        overlay = self.overlay
        assert overlay is not None
        try:
            path = overlay.save()
        except OSError as exc:
            overlay.fixes = before  # nothing half-saved: as the file still is
            self._show_state()
            self._fail(
                "Could not save the fixes",
                f"Cannot save fixes {overlay.name!r}: {exc.strerror or exc}. "
                "Nothing was changed.",
            )
            return False
        log.info("fixes saved: %s (%d fixes)", path, len(overlay.fixes))
        self._show_state()
        self.saved.emit()
        return True

    def _fail(self, title: str, message: str) -> None:
        log.warning("%s: %s", title, message)
        dialogs.show_error(self.window(), title, message)

    # ------------------------------------------------------------------ handlers

    @Slot()
    def _on_likely_button_clicked(self) -> None:
        self.requested.emit(LIKELY, "")

    @Slot()
    def _on_relabel_button_clicked(self) -> None:
        if self.relabel_button.isEnabled():
            self.relabel_menu.popup(
                self.relabel_button.mapToGlobal(self.relabel_button.rect().bottomLeft())
            )

    @Slot(object)
    def _on_relabel_menu_triggered(self, action: object) -> None:
        self.requested.emit("relabel", str(action.data()))  # type: ignore[attr-defined]

    @Slot()
    def _on_exclude_button_clicked(self) -> None:
        self.requested.emit("exclude", "")

    @Slot()
    def _on_keep_button_clicked(self) -> None:
        self.requested.emit("keep", "")
