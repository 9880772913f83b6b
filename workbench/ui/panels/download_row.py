"""The Data panel's Download row: the button, a progress bar and Cancel."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QPushButton, QWidget

from workbench.core.data.registry import DownloadProgress


class DownloadRow(QWidget):
    """Download, or while one runs, its progress and Cancel instead."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.download_button = QPushButton("Download", objectName="downloadButton")
        self.cancel_button = QPushButton("Cancel", objectName="cancelDownloadButton")
        self.cancel_button.setVisible(False)
        self.cancel_button.setEnabled(False)  # nothing to cancel yet
        self.bar = QProgressBar(objectName="downloadProgress")
        self.bar.setVisible(False)
        self.bar.setTextVisible(True)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.download_button)
        row.addWidget(self.bar, 1)
        row.addWidget(self.cancel_button)

    def show_downloading(self, downloading: bool) -> None:
        """Swap the button for the bar and Cancel (or back)."""
        self.bar.setVisible(downloading)
        self.bar.setRange(0, 0)
        self.bar.setFormat("connecting…")
        self.cancel_button.setVisible(downloading)
        self.cancel_button.setEnabled(downloading)
        self.download_button.setVisible(not downloading)

    def show_progress(self, p: DownloadProgress) -> None:
        """Bytes of the current file, or a busy bar when its size is unknown."""
        if p.bytes_total:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(1000 * p.bytes_done / p.bytes_total))
        else:
            self.bar.setRange(0, 0)
        self.bar.setFormat(
            f"{p.file_index}/{p.file_count}: {p.bytes_done / 1e6:.1f} MB"
        )
