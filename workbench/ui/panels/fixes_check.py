"""The Data panel's Use fixes: a run trains with the dataset's fixes, or without.

Checked, the config gets the overlay's fixes in effect (``fixes``) and its name
(``fixes_name``), as ``train --fixes NAME`` does; unchecked, none. A config
that brings its own fixes (a run's, for Reproduce) is shown checked and keeps
them as recorded, even when the overlay changed since, until the user toggles
the box, chooses other data or saves new fixes. A damaged overlay disables
the box, its tooltip saying why.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSignalBlocker, Signal, Slot
from PySide6.QtWidgets import QCheckBox, QWidget

from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.fixes import Overlay
from workbench.core.data.registry import FOLDER
from workbench.ui.issue_fixes import DEFAULT_NAME

Entries = tuple[tuple[str, str, str], ...]

_ABOUT = (
    "Fixes are made in Data ▸ Find data issues… (or with the fixes command) and "
    "kept apart from your images, which are never changed."
)


def _counts(entries: Entries) -> str:
    actions = [action for _key, action, _label in entries]
    return f"{actions.count('relabel')} relabelled, {actions.count('exclude')} excluded"


class FixesCheck(QCheckBox):
    """Use fixes 'NAME' (N): the overlay of the data shown, or a config's own."""

    changed = Signal()  # the fixes a run would use changed (not while applying)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Use fixes", parent, objectName="useFixesCheck")
        self.name = DEFAULT_NAME
        self.overlay_entries: Entries = ()
        self.error = ""  # why the overlay cannot be used
        self._own: Entries | None = None  # a config's own fixes, kept as given
        self._own_data: dict[str, Any] | None = None  # the data they are for
        self._data: dict[str, Any] = {}
        self._locked = False  # a run uses the data
        self.toggled.connect(self._on_toggled)
        self._show()

    def show_data(self, dataset: str, data_dir: str | None) -> None:
        """Read the overlay of the data the panel shows (the box as it was)."""
        self._data = {"dataset": dataset, "data_dir": data_dir}
        self._read()
        self._show()

    def apply(self, cfg: TrainConfig) -> None:
        """Show ``cfg``'s fixes: checked when it has some, kept as given."""
        self.name = cfg.fixes_name or DEFAULT_NAME
        self._data = {"dataset": cfg.dataset, "data_dir": cfg.data_dir}
        self._own = cfg.fixes or None
        self._own_data = dict(self._data) if cfg.fixes else None
        self._read()
        with QSignalBlocker(self):
            self.setChecked(bool(cfg.fixes))
        self._show()

    def set_locked(self, locked: bool) -> None:
        """Not changeable while a run uses the data."""
        self._locked = locked
        self._show()

    @Slot()
    def refresh(self) -> None:
        """The overlay was saved: read it again, and use it if checked."""
        self.name, self._own = DEFAULT_NAME, None
        before = self.values()
        self._read()
        self._show()
        if self.values() != before:
            self.changed.emit()

    def values(self) -> dict[str, Any]:
        """``fixes`` and ``fixes_name`` for the config."""
        if not self.isChecked():
            return {"fixes": (), "fixes_name": ""}
        own = self._own if self._own_data == self._data else None
        return {
            "fixes": own if own is not None else self.overlay_entries,
            "fixes_name": self.name,
        }

    def _read(self) -> None:
        self.overlay_entries, self.error = (), ""
        if self._data.get("dataset") == FOLDER and not self._data.get("data_dir"):
            self.error = "choose the image folder first"
            return
        try:
            cfg = TrainConfig().replace(**self._data)
            self.overlay_entries = Overlay.open(self.name, cfg).config_entries()
        except ConfigError as exc:
            self.error = str(exc).split("\n")[0]

    def _show(self) -> None:
        entries = self.values()["fixes"] if self.isChecked() else self.overlay_entries
        own = self.isChecked() and entries is not self.overlay_entries
        self.setText(f"Use fixes {self.name!r} ({len(entries)})")
        if self.error and not own:
            if self.isChecked():
                with QSignalBlocker(self):
                    self.setChecked(False)
            self.setEnabled(False)
            self.setText(f"Use fixes {self.name!r}")
            self.setToolTip(f"Cannot use the fixes: {self.error}")
            return
        self.setEnabled(not self._locked)
        if own:
            tip = (
                f"This config's own {len(entries)} fixes ({_counts(entries)}), as "
                f"its run recorded them: Reproduce uses these. The overlay "
                f"{self.name!r} now has {len(self.overlay_entries)}; uncheck and "
                "check to use those."
            )
            if self.error:
                tip += f" (The overlay cannot be used: {self.error})"
        else:
            tip = (
                f"Train with the fixes {self.name!r} of this data: "
                f"{_counts(entries)}. {_ABOUT}"
            )
        self.setToolTip(tip)

    @Slot(bool)
    def _on_toggled(self, _checked: bool) -> None:
        self._own = None  # the user's choice: the overlay as it is now
        self._read()
        self._show()
        self.changed.emit()
