"""The image gallery of the Evaluation tab: the validation images of one cell.

:class:`CellImages` shows a caption, a thumbnail per image with its confidence
(in the order given: hardest first), and *Open in canvas*, which emits the chosen
item's own image with how it was scored (a
:class:`~workbench.core.predict.ScoredImage`). Which images to list, and the
caption, are the panel's call.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSize, Qt, Signal, Slot
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from workbench.core.events import Evaluation
from workbench.core.predict import ScoredImage
from workbench.ui.widgets.input_preview import array_qimage

THUMB_SIDE = 56
# Thumbnails kept for the next epoch's gallery (about 13 kB each; a gallery
# lists at most 500).
MAX_CACHED_ICONS = 1000
_INDEX_ROLE = Qt.ItemDataRole.UserRole


def thumbnail(image: np.ndarray, side: int = THUMB_SIDE) -> QPixmap:
    """A stored uint8 image, (H, W) or (C, H, W), as a pixmap fitting ``side``.

    Enlarged nearest-neighbour (crisp pixels: 28x28 becomes exactly 56x56),
    shrunk smoothly; the aspect ratio is kept; colour stays red, green, blue.
    """
    picture = array_qimage(image)
    enlarge = side >= max(picture.width(), picture.height())
    mode = (
        Qt.TransformationMode.FastTransformation
        if enlarge
        else Qt.TransformationMode.SmoothTransformation
    )
    fitted = picture.scaled(side, side, Qt.AspectRatioMode.KeepAspectRatio, mode)
    return QPixmap.fromImage(fitted)


class CellImages(QWidget):
    """A caption, the thumbnails of some validation images, and *Open in canvas*."""

    image_opened = Signal(object)
    """A :class:`ScoredImage`: the stored image, its true class and its score."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._gallery_indices = np.zeros(0, dtype=np.int64)
        self._gallery_images: np.ndarray | None = None
        self._gallery_ev: Evaluation | None = None
        # Icons of the images last shown: every epoch lists the same validation
        # images again, so a gallery rebuilt each epoch decodes each only once.
        self._icons: dict[int, QIcon] = {}
        self._icons_of: np.ndarray | None = None

        self.caption = QLabel(objectName="galleryLabel")
        self.caption.setWordWrap(True)
        self.gallery = self._make_gallery()
        self.open_button = QPushButton(
            "Open in canvas", objectName="openInCanvasButton"
        )
        self.open_button.setToolTip(
            "Open the selected image in the drawing canvas (or double-click it)"
        )
        self.open_button.clicked.connect(self._on_open_button_clicked)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.gallery, 1)
        button_row = QHBoxLayout()
        button_row.addStretch(1)
        button_row.addWidget(self.open_button)
        layout.addLayout(button_row)

    def _make_gallery(self) -> QListWidget:
        gallery = QListWidget(objectName="sampleGallery")
        gallery.setViewMode(QListView.ViewMode.IconMode)
        gallery.setIconSize(QSize(THUMB_SIDE, THUMB_SIDE))
        gallery.setGridSize(QSize(THUMB_SIDE + 34, THUMB_SIDE + 44))
        gallery.setResizeMode(QListView.ResizeMode.Adjust)
        gallery.setMovement(QListView.Movement.Static)
        gallery.setUniformItemSizes(True)  # 500 items lay out without measuring each
        gallery.setWordWrap(True)
        gallery.setSelectionMode(QListWidget.SelectionMode.SingleSelection)
        gallery.currentItemChanged.connect(self._on_gallery_current_item_changed)
        gallery.itemDoubleClicked.connect(self._on_gallery_item_double_clicked)
        return gallery

    # Public API -----------------------------------------------------------

    def clear(self) -> None:
        """Remove every thumbnail; nothing can be opened."""
        self.gallery.clear()
        self._gallery_indices = np.zeros(0, dtype=np.int64)
        self._gallery_images = None
        self._gallery_ev = None
        self.open_button.setEnabled(False)

    def set_caption(self, text: str) -> None:
        """Show ``text`` above the thumbnails."""
        self.caption.setText(text)

    def show_images(
        self, indices: np.ndarray, ev: Evaluation, images: np.ndarray, title: str
    ) -> None:
        """Add a thumbnail per validation index, in order; select the first.

        Parameters
        ----------
        indices : numpy.ndarray
            Validation indices into ``ev`` and ``images``.
        ev : Evaluation
            The predictions whose confidences and losses the items show.
        images : numpy.ndarray
            uint8 validation images in the order of ``ev``: (N, H, W) gray,
            or (N, C, H, W) with C = 1 or 3 (red, green, blue).
        title : str
            Every item's second line, after its confidence (e.g. ``"3 → 5"``).
        """
        self.gallery.setUpdatesEnabled(False)  # one layout for all items
        try:
            for index in indices:
                i = int(index)
                confidence = float(ev.confidences[i])
                # The confidence first: long class names are cut, not it.
                item = QListWidgetItem(
                    self._icon(images, i), f"{confidence:.0%}\n{title}"
                )
                item.setData(_INDEX_ROLE, i)
                item.setToolTip(
                    f"{title}\nvalidation image {i}\nloss {float(ev.losses[i]):.3f}"
                    f"\nconfidence {confidence:.1%}"
                )
                self.gallery.addItem(item)
        finally:
            self.gallery.setUpdatesEnabled(True)
        self._gallery_indices = indices.astype(np.int64)
        self._gallery_images = images
        self._gallery_ev = ev
        if self.gallery.count():
            self.gallery.setCurrentRow(0)  # the hardest image, ready to open

    def _icon(self, images: np.ndarray, i: int) -> QIcon:
        if images is not self._icons_of or len(self._icons) >= MAX_CACHED_ICONS:
            self._icons, self._icons_of = {}, images
        icon = self._icons.get(i)
        if icon is None:
            pixmap = thumbnail(images[i])
            icon = QIcon(pixmap)
            # The same pixmap when selected: the style's blue tint would hide
            # the image; the highlighted text shows the selection.
            icon.addPixmap(pixmap, QIcon.Mode.Selected)
            self._icons[i] = icon
        return icon

    def indices(self) -> np.ndarray:
        """Return the validation indices of the thumbnails, in their order."""
        return self._gallery_indices.copy()

    def _emit_image(self, item: QListWidgetItem | None) -> None:
        ev, images = self._gallery_ev, self._gallery_images
        if item is None or images is None or ev is None:
            return
        i = int(item.data(_INDEX_ROLE))
        self.image_opened.emit(
            ScoredImage(
                image=np.array(images[i], dtype=np.uint8),
                label=int(ev.labels[i]),
                predicted=int(ev.predictions[i]),
                confidence=float(ev.confidences[i]),
                index=i,
                epoch=ev.epoch,
            )
        )

    # Handlers -------------------------------------------------------------

    @Slot(QListWidgetItem, QListWidgetItem)
    def _on_gallery_current_item_changed(
        self, current: QListWidgetItem | None, previous: QListWidgetItem | None
    ) -> None:
        self.open_button.setEnabled(current is not None)

    @Slot(QListWidgetItem)
    def _on_gallery_item_double_clicked(self, item: QListWidgetItem) -> None:
        self._emit_image(item)

    @Slot()
    def _on_open_button_clicked(self) -> None:
        self._emit_image(self.gallery.currentItem())
