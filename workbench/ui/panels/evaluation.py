"""The "Evaluation" tab: confusion matrix per epoch, per-class scores, hard images.

Pure display of :class:`~workbench.core.events.Evaluation` events: the matrix of
the epoch chosen with a slider, one accuracy bar per class beside it, under
them a table of each class's precision, recall and F1 with their macro and
weighted averages, and a gallery of the validation images in the clicked
cell, hardest (highest loss) first. Only the latest epochs keep their per-image
data (see :attr:`EvaluationPanel.KEEP_SAMPLE_EPOCHS`); older ones, and epochs
restored from a checkpoint with :meth:`EvaluationPanel.set_history`, keep just
the matrix.

This module keeps the epochs and decides what is shown; the widgets that show it
are :class:`~workbench.ui.plots.confusion_matrix.ConfusionMatrix`,
:class:`~workbench.ui.plots.class_accuracy.ClassAccuracyChart`,
:class:`~workbench.ui.widgets.class_scores_table.ClassScoresTable` and
:class:`~workbench.ui.widgets.cell_images.CellImages`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QSlider,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from workbench.core.data.registry import class_names
from workbench.core.events import Evaluation
from workbench.core.predict import ScoredImage
from workbench.ui.formatting import percent, plural
from workbench.ui.plots.class_accuracy import ClassAccuracyChart
from workbench.ui.plots.confusion_matrix import ConfusionMatrix
from workbench.ui.widgets.cell_images import CellImages
from workbench.ui.widgets.class_scores_table import ClassScoresTable
from workbench.ui.widgets.lazy_view import hidden_in_shown_window


def _accuracy(matrix: np.ndarray) -> float:
    total = int(matrix.sum())
    return float(np.trace(matrix)) / total if total else float("nan")


@dataclass
class _Epoch:
    """What the panel keeps of one epoch: the matrix, and maybe per-image data."""

    matrix: np.ndarray
    evaluation: Evaluation | None = None
    images: np.ndarray | None = None


class EvaluationPanel(QWidget):
    """Confusion matrix per epoch, per-class accuracy and scores, a cell's images.

    Feed it :class:`~workbench.core.events.Evaluation` events with
    :meth:`add_evaluation`; a click on a matrix cell lists that cell's validation
    images, hardest first, and *Open in canvas* emits the selected one.
    """

    open_in_canvas = Signal(object)
    """A :class:`~workbench.core.predict.ScoredImage`: the image as it was scored."""

    MAX_GALLERY = 500
    """Most images the gallery shows; a bigger cell shows its hardest ones."""

    KEEP_SAMPLE_EPOCHS = 10
    """Epochs (the newest) that keep per-image predictions; older keep the matrix."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("evaluationPanel")
        self._epochs: dict[int, _Epoch] = {}
        self._order: list[int] = []  # epochs in slider order
        self._shown: int | None = None
        self._selected: tuple[int, int] | None = None
        self._names: list[str] = []
        # Data arrived while the tab was hidden: the widgets show older data.
        self.stale = False

        self.matrix_widget = ConfusionMatrix()
        self.matrix_widget.cell_clicked.connect(self._on_matrix_cell_clicked)
        self.accuracy_plot = ClassAccuracyChart()
        self.scores_table = ClassScoresTable()

        self.epoch_slider = QSlider(Qt.Orientation.Horizontal)
        self.epoch_slider.setObjectName("epochSlider")
        self.epoch_slider.setPageStep(1)
        self.epoch_slider.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.epoch_slider.setToolTip("Replay the confusion matrix of each epoch")
        self.epoch_slider.valueChanged.connect(self._on_epoch_slider_value_changed)
        self.epoch_label = QLabel(objectName="epochLabel")
        self.epoch_label.setMinimumWidth(240)

        self.cell_images = CellImages()
        self.cell_images.image_opened.connect(self._on_cell_images_image_opened)
        # The gallery's list and button, for callers that drive them directly.
        self.gallery = self.cell_images.gallery
        self.open_button = self.cell_images.open_button

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        charts = QWidget()
        charts_layout = QHBoxLayout(charts)
        charts_layout.setContentsMargins(0, 0, 0, 0)
        charts_layout.addWidget(self.matrix_widget, 3)
        charts_layout.addWidget(self.accuracy_plot, 2)
        # The scores under the charts, as wide as the tab: beside the matrix,
        # the recall and F1 columns scrolled out of sight at 1500 px.
        per_class = QSplitter(Qt.Orientation.Vertical, objectName="perClassSplitter")
        per_class.addWidget(charts)
        per_class.addWidget(self.scores_table)
        # A splitter shares its height by size hint times stretch: the table's
        # hint is ten classes, and 5:6 keeps them all in view at 950 px high.
        per_class.setStretchFactor(0, 5)
        per_class.setStretchFactor(1, 6)
        per_class.setChildrenCollapsible(False)
        top_layout.addWidget(per_class, 1)
        slider_row = QHBoxLayout()
        slider_row.addWidget(self.epoch_slider, 1)
        slider_row.addWidget(self.epoch_label)
        top_layout.addLayout(slider_row)

        # A splitter so users trade matrix size for gallery rows (the window can
        # save its state like its other splitters).
        self.splitter = QSplitter(
            Qt.Orientation.Vertical, objectName="evaluationSplitter"
        )
        self.splitter.addWidget(top)
        self.splitter.addWidget(self.cell_images)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.splitter)
        self._show(None)

    # Public API -----------------------------------------------------------

    def set_class_names(self, names: Sequence[str]) -> None:
        """Name the classes on the axes, bars and gallery items.

        Parameters
        ----------
        names : Sequence[str]
            Class names in class-index order; classes beyond them show their index.
        """
        names = [str(n) for n in names]
        if names != self._names:  # the window names them before every epoch
            self._names = names
            self._refresh()

    @Slot(object, object)
    def add_evaluation(self, ev: Evaluation, images: np.ndarray | None) -> None:
        """Add (or replace, for the same epoch) an epoch and show the newest one.

        Parameters
        ----------
        ev : Evaluation
            The epoch's validation predictions.
        images : numpy.ndarray or None
            uint8 validation images in the order of ``ev``, (N, H, W) gray or
            (N, C, H, W) with C = 1 or 3, any size (kept by reference, not
            copied: the same array for every epoch costs nothing); None when
            they are not available (the gallery then stays empty).

        Raises
        ------
        ValueError
            If ``images`` does not hold one image per prediction.
        """
        if images is not None and (
            images.ndim not in (3, 4)
            or (images.ndim == 4 and images.shape[1] not in (1, 3))
            or len(images) != len(ev.labels)
        ):
            raise ValueError(
                f"images of shape {images.shape} for {len(ev.labels)} predictions"
            )
        matrix = ev.confusion()
        matrix.flags.writeable = False
        self._epochs[ev.epoch] = _Epoch(matrix, ev, images)
        self._order = sorted(self._epochs)
        # Per-image data of old epochs is what costs memory; their matrix is tiny.
        with_samples = [
            e for e in self._order if self._epochs[e].evaluation is not None
        ]
        for epoch in with_samples[: -self.KEEP_SAMPLE_EPOCHS]:
            self._epochs[epoch].evaluation = None
            self._epochs[epoch].images = None
        self._show(self._order[-1])

    def set_history(self, matrices: Sequence[np.ndarray]) -> None:
        """Replace everything with matrices of past epochs 0..len-1, no images.

        Parameters
        ----------
        matrices : Sequence[numpy.ndarray]
            int (C, C) confusion matrices, row = true, column = predicted, one per
            epoch in order (e.g. from a checkpoint). An :meth:`add_evaluation` for
            the last epoch may follow and adds its per-image data.

        Raises
        ------
        ValueError
            If a matrix is not square.
        """
        epochs: dict[int, _Epoch] = {}
        for epoch, m in enumerate(matrices):
            matrix = np.array(m, dtype=np.int64)
            if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
                raise ValueError(f"epoch {epoch}: matrix of shape {matrix.shape}")
            matrix.flags.writeable = False
            epochs[epoch] = _Epoch(matrix)
        self._epochs = epochs
        self._order = sorted(epochs)
        self._show(self._order[-1] if self._order else None)

    @Slot()
    def clear(self) -> None:
        """Forget every epoch and the selected cell (a new run starts)."""
        self._epochs = {}
        self._order = []
        self._selected = None
        self._show(None)

    def shown_epoch(self) -> int | None:
        """Return the 0-based epoch whose matrix is shown, or None if none is."""
        return self._shown

    def shown_matrix(self) -> np.ndarray | None:
        """Return the shown epoch's confusion matrix (read-only), or None."""
        return None if self._shown is None else self._epochs[self._shown].matrix

    @Slot(int, int)
    def select_cell(self, true: int, predicted: int) -> None:
        """List the images of cell (``true``, ``predicted``), as a click does.

        The selection stays when the slider moves to another epoch.

        Parameters
        ----------
        true, predicted : int
            Row (true class) and column (predicted class) of the cell.

        Raises
        ------
        IndexError
            If the cell is outside the shown matrix.
        """
        matrix = self.shown_matrix()
        if matrix is None:
            return
        n = matrix.shape[0]
        if not (0 <= true < n and 0 <= predicted < n):
            raise IndexError(f"cell ({true}, {predicted}) of a {n}x{n} matrix")
        self._selected = (true, predicted)
        self.matrix_widget.set_selected(self._selected)
        self._refresh_gallery()

    def selected_cell(self) -> tuple[int, int] | None:
        """Return the selected cell (true, predicted), or None."""
        return self._selected

    def gallery_indices(self) -> np.ndarray:
        """Return the validation indices of the gallery's images, in its order.

        At most :attr:`MAX_GALLERY`: for a bigger cell these are its hardest
        (highest-loss) images, so the count is then below the cell's count.
        """
        return self.cell_images.indices()

    def bar_item(self) -> pg.BarGraphItem:
        """Return the single per-class accuracy bar item (for tests)."""
        return self.accuracy_plot.bar_item()

    # Showing --------------------------------------------------------------

    def _show(self, epoch: int | None) -> None:
        self._shown = epoch
        slider = self.epoch_slider
        slider.blockSignals(True)  # _show is already running: no second refresh
        try:
            slider.setRange(0, max(len(self._order) - 1, 0))
            if epoch is not None:
                slider.setValue(self._order.index(epoch))
        finally:
            slider.blockSignals(False)
        slider.setEnabled(len(self._order) > 1)
        self._refresh()

    def showEvent(self, event: QShowEvent) -> None:
        """Draw what arrived while the tab was hidden."""
        super().showEvent(event)
        if self.stale:
            self._refresh()

    def _refresh(self) -> None:
        if hidden_in_shown_window(self):
            # A hidden tab: keep the data, draw it when shown (showEvent).
            self.stale = True
            return
        self.stale = False
        matrix = self.shown_matrix()
        n = 0 if matrix is None else matrix.shape[0]
        names = class_names(self._names, n)
        if self._selected is not None and max(self._selected) >= n:
            self._selected = None
        self.matrix_widget.set_matrix(matrix, names)
        self.matrix_widget.set_selected(self._selected)
        self.accuracy_plot.set_matrix(matrix, names)
        self.scores_table.set_matrix(matrix, names)
        if matrix is None or self._shown is None:
            self.epoch_label.setText("no evaluation yet")
        else:
            self.epoch_label.setText(
                f"epoch {self._shown + 1} of {self._order[-1] + 1} · "
                f"val accuracy {percent(_accuracy(matrix))}"
            )
        self._refresh_gallery()

    def _refresh_gallery(self) -> None:
        self.cell_images.clear()
        self.cell_images.set_caption(self._fill_gallery())

    def _fill_gallery(self) -> str:
        """Fill the gallery for the selected cell; return the label's text."""
        matrix = self.shown_matrix()
        if matrix is None or self._shown is None:
            return ""
        if self._selected is None:
            return "Click a cell of the matrix to see its images, hardest first."
        t, p = self._selected
        names = class_names(self._names, matrix.shape[0])
        where = f"true {names[t]}, predicted {names[p]}"
        count = int(matrix[t, p])
        entry = self._epochs[self._shown]
        ev = entry.evaluation
        if ev is None:
            return (
                f"{plural(count, 'image')}: {where}. The per-image predictions "
                f"of epoch {self._shown + 1} are not kept (only the latest epochs "
                "of this session have them)."
            )
        if entry.images is None:
            return (
                f"{plural(count, 'image')}: {where}. "
                "The validation images are not available."
            )
        if count == 0:
            return f"no images: {where}."
        indices = ev.cell(t, p)[: self.MAX_GALLERY]
        self.cell_images.show_images(
            indices, ev, entry.images, f"{names[t]} → {names[p]}"
        )
        if count > len(indices):
            return f"showing the {len(indices):,} hardest of {count:,}: {where}."
        return f"{plural(count, 'image')}: {where}, hardest first."

    # Handlers -------------------------------------------------------------

    @Slot(int, int)
    def _on_matrix_cell_clicked(self, true: int, predicted: int) -> None:
        self.select_cell(true, predicted)

    @Slot(int)
    def _on_epoch_slider_value_changed(self, value: int) -> None:
        if 0 <= value < len(self._order):
            self._shown = self._order[value]
            self._refresh()

    @Slot(object)
    def _on_cell_images_image_opened(self, scored: ScoredImage) -> None:
        self.open_in_canvas.emit(scored)
