"""Every dialog the window opens goes through here, so tests can replace them.

``get_open_path``/``get_save_path`` return a path or None (cancelled),
``get_open_paths`` a list (empty: cancelled); they remember the folder per file
type in the window settings. Error boxes open
window-modal without blocking (``QDialog.open``), so a worker's error cannot stall
the event loop and tests need no dialog handling.
"""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QStandardPaths, Qt
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox, QWidget

from workbench.ui.window import state as window_state


def _kind(name_filter: str) -> str:
    """A settings key for a filter: its first pattern's suffix, e.g. ``pt``."""
    match = re.search(r"\*\.(\w+)", name_filter)
    return match.group(1) if match else "any"


def _remember(name_filter: str, path: str) -> None:
    window_state.set_last_folder(
        window_state.open_window_settings(), _kind(name_filter), Path(path).parent
    )


def get_open_path(parent: QWidget | None, title: str, name_filter: str) -> Path | None:
    """Ask for an existing file; None when cancelled."""
    settings = window_state.open_window_settings()
    start = window_state.last_folder(settings, _kind(name_filter))
    path, _ = QFileDialog.getOpenFileName(parent, title, start, name_filter)
    if not path:
        return None
    _remember(name_filter, path)
    return Path(path)


def get_open_paths(parent: QWidget | None, title: str, name_filter: str) -> list[Path]:
    """Ask for one or several existing files; an empty list when cancelled."""
    settings = window_state.open_window_settings()
    start = window_state.last_folder(settings, _kind(name_filter))
    paths, _ = QFileDialog.getOpenFileNames(parent, title, start, name_filter)
    if paths:
        _remember(name_filter, paths[0])
    return [Path(path) for path in paths]


def get_save_path(
    parent: QWidget | None, title: str, name_filter: str, *, name: str = ""
) -> Path | None:
    """Ask where to save (``name`` filled in); adds the filter's suffix if none."""
    settings = window_state.open_window_settings()
    start = window_state.last_folder(settings, _kind(name_filter))
    if name:
        start = str(Path(start, name)) if start else name
    path, _ = QFileDialog.getSaveFileName(parent, title, start, name_filter)
    if not path:
        return None
    result = Path(path)
    if not result.suffix and _kind(name_filter) != "any":
        result = result.with_suffix("." + _kind(name_filter))
    _remember(name_filter, str(result))
    return result


def get_directory(parent: QWidget | None, title: str, start: str = "") -> Path | None:
    """Ask for a folder; None when cancelled."""
    settings = window_state.open_window_settings()
    start = start or window_state.last_folder(settings, "folder")
    path = QFileDialog.getExistingDirectory(parent, title, start)
    if not path:
        return None
    window_state.set_last_folder(settings, "folder", path)
    return Path(path)


def get_export_folder(parent: QWidget | None, title: str, name: str) -> Path | None:
    """Ask for the folder an export goes to: a new name or an existing folder.

    A save dialog, so a name that does not exist yet is taken (the folder
    dialog refuses it); nothing is created here. It opens where the last export
    went, else in the user's documents, never in a data folder.
    """
    settings = window_state.open_window_settings()
    start = window_state.last_folder(settings, EXPORT_KIND) or str(_documents())
    dialog = QFileDialog(parent, title, str(Path(start, name)))
    dialog.setObjectName("exportFolderDialog")
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setFileMode(QFileDialog.FileMode.AnyFile)
    dialog.setOption(QFileDialog.Option.DontConfirmOverwrite)  # asked if not empty
    dialog.setLabelText(QFileDialog.DialogLabel.Accept, "Export")
    if not dialog.exec() or not dialog.selectedFiles():
        return None
    folder = Path(dialog.selectedFiles()[0])
    window_state.set_last_folder(settings, EXPORT_KIND, folder.parent)
    return folder


EXPORT_KIND = "export"


def _documents() -> Path:
    """The user's documents folder, or home where there is none."""
    documents = QStandardPaths.writableLocation(
        QStandardPaths.StandardLocation.DocumentsLocation
    )
    return Path(documents) if documents and Path(documents).is_dir() else Path.home()


def show_error(
    parent: QWidget | None, title: str, message: str, details: str = ""
) -> QMessageBox:
    """A critical message box with ``details`` (a traceback) behind "Show Details"."""
    box = QMessageBox(
        QMessageBox.Icon.Critical, title, message, QMessageBox.StandardButton.Ok, parent
    )
    box.setObjectName("errorDialog")
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if details:
        box.setDetailedText(details)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


def show_report(
    parent: QWidget | None, title: str, html: str, *, ok: bool
) -> QMessageBox:
    """An outcome (rich text) in a box that opens without blocking."""
    icon = QMessageBox.Icon.Information if ok else QMessageBox.Icon.Warning
    box = QMessageBox(icon, title, html, QMessageBox.StandardButton.Ok, parent)
    box.setObjectName("reportDialog")
    box.setStyleSheet("QLabel#qt_msgbox_label { min-width: 36em; }")  # a line each
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


def ask_resume(parent: QWidget | None, title: str, text: str) -> str:
    """Offer to resume an interrupted run: ``resume``, ``later`` or ``dismiss``."""
    box = QMessageBox(QMessageBox.Icon.Question, title, text, parent=parent)
    box.setObjectName("resumeDialog")
    resume = box.addButton("Resume", QMessageBox.ButtonRole.AcceptRole)
    box.addButton("Not now", QMessageBox.ButtonRole.RejectRole)
    dismiss = box.addButton("Forget it", QMessageBox.ButtonRole.DestructiveRole)
    box.setDefaultButton(resume)
    box.exec()
    clicked = box.clickedButton()
    if clicked is resume:
        return "resume"
    return "dismiss" if clicked is dismiss else "later"


def confirm_partial_load(
    parent: QWidget | None,
    title: str,
    summary: str,
    details: str,
    *,
    load_by_default: bool = True,
) -> bool:
    """Ask before loading only the tensors that fit; ``details`` lists them all.

    ``load_by_default``: False when so little fits that Enter should cancel.
    """
    box = QMessageBox(QMessageBox.Icon.Warning, title, summary, parent=parent)
    box.setObjectName("partialLoadDialog")
    box.setInformativeText(
        "Load the tensors that fit and reinitialise the rest? Show Details lists "
        "every difference."
    )
    box.setDetailedText(details)
    load = box.addButton("Load what fits", QMessageBox.ButtonRole.AcceptRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(load if load_by_default else cancel)
    box.exec()
    return box.clickedButton() is load


def ask_switch_architecture(
    parent: QWidget | None, text: str, details: str, *, can_load_partly: bool
) -> str:
    """The weights were saved from another model: "switch", "partial" or "cancel".

    Switching is the default; loading what fits is offered only when it can.
    """
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "The weights are from another model",
        text,
        parent=parent,
    )
    box.setObjectName("switchArchitectureDialog")
    box.setDetailedText(details)
    switch = box.addButton("Switch the model", QMessageBox.ButtonRole.AcceptRole)
    partial = None
    if can_load_partly:
        partial = box.addButton("Load what fits", QMessageBox.ButtonRole.ActionRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(switch)
    box.exec()
    clicked = box.clickedButton()
    if clicked is switch:
        return "switch"
    return "partial" if partial is not None and clicked is partial else "cancel"


def get_text(
    parent: QWidget | None, title: str, label: str, text: str = ""
) -> str | None:
    """Ask for one line of text, ``text`` filled in; None when cancelled."""
    value, accepted = QInputDialog.getText(parent, title, label, text=text)
    return value if accepted else None


def confirm(parent: QWidget | None, title: str, text: str) -> bool:
    """Ask a yes/no question; No is the default (the question may destroy data)."""
    box = QMessageBox(QMessageBox.Icon.Question, title, text, parent=parent)
    box.setObjectName("confirmDialog")
    box.setStandardButtons(
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No
    )
    box.setDefaultButton(QMessageBox.StandardButton.No)
    return box.exec() == QMessageBox.StandardButton.Yes


def get_item(
    parent: QWidget | None, title: str, label: str, items: list[str]
) -> str | None:
    """Pick one of ``items`` (or type another); None when cancelled."""
    value, accepted = QInputDialog.getItem(parent, title, label, items, 0, True)
    return value if accepted and value else None
