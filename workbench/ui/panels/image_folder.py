"""The Data panel's image folder: the folder field, and the Check data row.

:class:`FolderField` is the folder with Browse; it remembers the folder across
sessions (window settings), also while another dataset is shown.
:class:`DataCheckRow` holds Check data, a progress bar and Cancel. It runs the
check (a :class:`~workbench.ui.data_check_view.FolderChecker`), writes a one-line
summary into the panel's label with a "Show report" link, and opens the
report window. Before a run on an image folder, :meth:`DataCheckRow.request_start`
checks first: ``start_cleared`` once the folder can train, the report with the
reason when it cannot.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QWidget,
)

from workbench.core.config import IMAGE_SIZE_RANGE
from workbench.core.data.folder_check import DataReport
from workbench.ui import dialogs
from workbench.ui.data_check_view import (
    DataCheckDialog,
    Fixes,
    FolderChecker,
    summary_line,
)
from workbench.ui.window import state as window_state

BLOCKED = (
    "The run did not start: the data check found errors (listed below). Fix them, "
    "or choose another folder, and press Start again."
)

# (folder or None, image size, whether the panel shows the image folder now)
Target = tuple[str | None, int, bool]
# Window settings key: the image folder last chosen.
IMAGE_FOLDER_KEY = "data/image_folder"


def image_size_spin() -> QSpinBox:
    """The side images are brought to (CIFAR-10 and image folders)."""
    spin = QSpinBox(objectName="imageSizeSpin")
    spin.setRange(*IMAGE_SIZE_RANGE)
    spin.setSingleStep(8)
    spin.setSuffix(" px")
    spin.setToolTip(
        "The side of the square images the model sees: each image is resized "
        "so its shorter side has this many pixels, then centre-cropped"
    )
    return spin


def validation_share_spin() -> QSpinBox:
    """The share of an image folder held out for validation, in percent."""
    spin = QSpinBox(objectName="validationShareSpin")
    spin.setRange(1, 50)
    spin.setSuffix(" %")
    spin.setValue(20)
    spin.setToolTip(
        "The share of each class held out for validation; used when the "
        "folder has no train/ and val/ folders of its own"
    )
    return spin


class FolderField(QWidget):
    """The image folder: a path to type or paste, and Browse.

    ``chosen(folder)`` when the user picks or types one (not on :meth:`set_folder`).
    """

    chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.edit = QLineEdit(objectName="imageFolderEdit")
        self.edit.setPlaceholderText("a folder of class folders")
        self.edit.setToolTip(
            "One folder per class holding its images (cat/, dog/, ...), or train/ "
            "and val/ (or test/), each holding the class folders"
        )
        self.edit.editingFinished.connect(self._on_edit_finished)
        self.button = QPushButton("Browse…", objectName="imageFolderButton")
        self.button.setToolTip("Choose the folder of class folders")
        self.button.clicked.connect(self.browse)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.button)
        remembered = window_state.open_window_settings().value(IMAGE_FOLDER_KEY, "")
        self.edit.setText(str(remembered or ""))

    def folder(self) -> str | None:
        """The folder shown, or None when empty."""
        return self.edit.text().strip() or None

    def set_folder(self, folder: str | None) -> None:
        """Show ``folder`` (a config's); ``chosen`` is not emitted."""
        self.edit.setText(folder or "")
        self.edit.setModified(False)

    @Slot()
    def browse(self) -> None:
        """Ask for the folder (a folder dialog)."""
        folder = dialogs.get_directory(
            self, "Image folder (one folder per class)", self.edit.text()
        )
        if folder is not None:
            self._choose(str(folder))

    def _choose(self, folder: str) -> None:
        self.edit.setText(folder)
        window_state.open_window_settings().setValue(IMAGE_FOLDER_KEY, folder)
        self.chosen.emit(folder)

    @Slot()
    def _on_edit_finished(self) -> None:
        if self.edit.isModified():
            self.edit.setModified(False)
            self._choose(self.edit.text().strip())


class DataCheckRow(QWidget):
    """Check data, progress and Cancel; the summary goes to ``summary_label``.

    ``target()`` says which folder and image size to check, and whether the
    panel shows the image folder (only then is the summary written);
    ``fixes()`` the config's ``fixes`` and ``fixes_name`` a run of the shown
    folder uses (Use fixes), which the check applies.
    """

    start_cleared = Signal()  # Start was asked for and the data may train
    classes_found = Signal()  # a check of the shown folder ended

    def __init__(
        self,
        summary_label: QLabel,
        target: Callable[[], Target],
        fixes: Callable[[], dict[str, Any]] = dict,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._label = summary_label
        self._target = target
        self._fixes = fixes
        self.check_button = QPushButton("Check data", objectName="checkDataButton")
        self.check_button.setToolTip(
            "Decode every image once: images per class and every problem with "
            "its file (Start checks too)"
        )
        self.check_button.clicked.connect(self.check_data)
        self.check_bar = QProgressBar(objectName="checkProgress")
        self.check_bar.setVisible(False)
        self.cancel_button = QPushButton("Cancel", objectName="cancelCheckButton")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.check_button)
        layout.addWidget(self.check_bar, 1)
        layout.addWidget(self.cancel_button)
        layout.addStretch(0)
        self.checker = FolderChecker(self)
        self.checker.checked.connect(self._on_checker_checked)
        self.checker.failed.connect(self._on_checker_failed)
        self.checker.cancelled.connect(self._on_checker_cancelled)
        self.checker.progressed.connect(self._on_checker_progressed)
        self._after: set[str] = set()  # when the check ends: "show", "start"
        self._dialog: DataCheckDialog | None = None
        summary_label.linkActivated.connect(self._on_label_link_activated)

    # ---------------------------------------------------------------- asking

    def check_quietly(self) -> None:
        """Check the shown folder for the summary line; no dialog."""
        folder, size, shown = self._target()
        if not shown:
            return
        self._after.discard("start")  # a Start waited for another folder or size
        if folder is None:
            self._label.setText(
                "Choose the folder that holds one folder of images per class"
            )
            return
        if not Path(folder).expanduser().is_dir():
            self._label.setText(f"No such folder: {folder}")
            return
        report = self.checker.check(folder, size, *self._fixes_of(shown))
        if report is not None:
            self._show_summary(report)
        else:
            self._show_checking(f"Checking {folder}…")

    @Slot()
    def check_data(self) -> None:
        """Check the image folder and show its report (Check data, Data menu)."""
        folder, size, shown = self._target()
        if folder is None:
            self._label.setText("Choose the image folder first (Browse…)")
            return
        report = self.checker.check(folder, size, *self._fixes_of(shown))
        if report is not None:
            self._show_summary(report)
            self.report_dialog().show_report(report)
        else:
            self._after.add("show")
            self._show_checking(f"Checking {folder}…")

    @Slot()
    def request_start(self) -> None:
        """Start was pressed: a run on the image folder checks it first.

        ``start_cleared`` at once when the panel shows another dataset (or no
        folder: the config's own check says why), once the check passed
        (warnings allowed) for a folder; with errors the report says why not.
        """
        folder, size, shown = self._target()
        if not shown or folder is None:
            self.start_cleared.emit()
            return
        report = self.checker.check(folder, size, *self._fixes_of(shown))
        if report is None:
            self._after.add("start")
            self._show_checking("Checking the image folder before the run…")
            return
        self._show_summary(report)
        if report.can_train:
            self.start_cleared.emit()
        else:
            self.report_dialog().show_report(report, BLOCKED)

    def report_dialog(self) -> DataCheckDialog:
        """The window showing the data check's report (made on first use)."""
        if self._dialog is None:
            self._dialog = DataCheckDialog(self)
        return self._dialog

    def last_report(self) -> DataReport | None:
        """The last report of the target folder and size (maybe stale)."""
        folder, size, _shown = self._target()
        return self.checker.last(folder, size) if folder else None

    def shutdown(self, timeout_ms: int = 5000) -> None:
        """Cancel the check and wait for its thread."""
        self.checker.shutdown(timeout_ms)

    def _fixes_of(self, shown: bool) -> tuple[Fixes, str]:
        """The fixes a run of the target uses: Use fixes' for the shown folder."""
        values = self._fixes() if shown else {}
        return tuple(values.get("fixes", ())), str(values.get("fixes_name", ""))

    # ---------------------------------------------------------------- showing

    def _is_target(self, report: DataReport) -> bool:
        folder, _size, shown = self._target()
        return (
            shown
            and folder is not None
            and Path(folder).expanduser() == Path(report.root)
        )

    def _show_summary(self, report: DataReport) -> None:
        if not self._is_target(report):
            return
        self._label.setText(
            f'{html.escape(summary_line(report))} · <a href="report">Show report</a>'
        )
        self._label.setToolTip(report.lines()[-1])

    def _show_checking(self, text: str) -> None:
        self._label.setText(text)
        self.check_bar.setRange(0, 0)
        self.check_bar.setFormat("listing files…")
        self._show_controls(True)

    def _show_controls(self, checking: bool) -> None:
        self.check_bar.setVisible(checking)
        self.cancel_button.setVisible(checking)
        self.check_button.setVisible(not checking)

    # ---------------------------------------------------------------- slots

    @Slot(str)
    def _on_label_link_activated(self, _link: str) -> None:
        report = self.last_report()
        if report is not None:
            self.report_dialog().show_report(report)

    @Slot()
    def _on_cancel_clicked(self) -> None:
        self.checker.cancel()
        self._after.clear()
        self._label.setText("Cancelling the check…")

    @Slot(int, int)
    def _on_checker_progressed(self, done: int, total: int) -> None:
        self.check_bar.setRange(0, max(total, 1))
        self.check_bar.setValue(done)
        self.check_bar.setFormat(f"{done:,}/{total:,} images")

    @Slot(object)
    def _on_checker_checked(self, report: DataReport) -> None:
        self._show_controls(False)
        after, self._after = self._after, set()
        self._show_summary(report)
        if self._is_target(report):
            self.classes_found.emit()
        if "start" in after:
            self.request_start()  # the report is fresh now: start or say why not
        elif "show" in after:
            self.report_dialog().show_report(report)

    @Slot(str, str)
    def _on_checker_failed(self, message: str, details: str) -> None:
        self._show_controls(False)
        self._after.clear()
        self._label.setText(f"The check failed: {message}")
        dialogs.show_error(self, "Data check failed", message, details)

    @Slot()
    def _on_checker_cancelled(self) -> None:
        self._show_controls(False)
        self._label.setText("Check cancelled")
