"""The "Evaluation" tab: confusion matrix per epoch, per-class accuracy, hard images.

Pure display of :class:`~workbench.core.events.Evaluation` events: the matrix of
the epoch chosen with a slider, one accuracy bar per class beside it, and a
gallery of the validation images in the clicked cell, hardest (highest loss)
first. Only the latest epochs keep their per-image data (see
:attr:`EvaluationPanel.KEEP_SAMPLE_EPOCHS`); older ones, and epochs restored from
a checkpoint with :meth:`EvaluationPanel.set_history`, keep just the matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QHelpEvent,
    QIcon,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QSlider,
    QSplitter,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from workbench.core.events import Evaluation
from workbench.ui.formatting import gray_pixmap

THUMB_SIDE = 56
_INDEX_ROLE = Qt.ItemDataRole.UserRole

# Colour ramps (light -> dark): greens for the diagonal, oranges/reds for errors,
# so right and wrong read apart at a glance even for colour-weak users (the two
# ramps also differ in lightness at equal share).
_GREENS = ((237, 248, 233), (116, 196, 118), (0, 90, 50))
_REDS = ((255, 240, 225), (253, 141, 60), (165, 15, 21))
_ZERO = QColor(250, 250, 250)
_ABSENT = QColor(236, 236, 236)
_SELECTED = QColor(25, 95, 210)


def _ramp(stops: tuple[tuple[int, int, int], ...], t: float) -> QColor:
    """Colour at ``t`` in [0, 1] along a piecewise-linear ramp."""
    t = min(max(t, 0.0), 1.0) * (len(stops) - 1)
    k = min(int(t), len(stops) - 2)
    f = t - k
    a, b = stops[k], stops[k + 1]
    return QColor(*(round(a[c] + (b[c] - a[c]) * f) for c in range(3)))


def cell_color(count: int, row_total: int, diagonal: bool) -> QColor:
    """Fill of a matrix cell: colour family by right/wrong, intensity by row share."""
    if row_total <= 0:
        return _ABSENT
    if count <= 0:
        return _ZERO
    share = count / row_total
    if diagonal:
        return _ramp(_GREENS, 0.15 + 0.85 * share)
    # Errors are usually a few percent of a row: the square root spreads the small
    # shares apart, a row share of 30% is already the darkest, and a small floor
    # keeps a single mistake visible without making it as loud as a pattern.
    return _ramp(_REDS, 0.08 + 0.92 * min(1.0, (share / 0.3) ** 0.5))


def _text_color(fill: QColor) -> QColor:
    luma = 0.299 * fill.red() + 0.587 * fill.green() + 0.114 * fill.blue()
    return QColor(255, 255, 255) if luma < 150 else QColor(30, 30, 30)


def _plural(count: int, word: str = "image") -> str:
    return f"{count:,} {word}" + ("" if count == 1 else "s")


def _accuracy(matrix: np.ndarray) -> float:
    total = int(matrix.sum())
    return float(np.trace(matrix)) / total if total else float("nan")


def _per_class_accuracy(matrix: np.ndarray) -> np.ndarray:
    totals = matrix.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, np.diag(matrix) / totals, np.nan)


def _names_for(names: Sequence[str], count: int) -> list[str]:
    """``count`` class names: the given ones first, then class indices."""
    return [names[i] if i < len(names) else str(i) for i in range(count)]


class _Grid(NamedTuple):
    """Geometry of the matrix widget: grid origin and cell side, and the margins."""

    x0: int
    y0: int
    cell: int
    n: int
    names_w: int
    header_h: int
    rotated: bool


@dataclass
class _Epoch:
    """What the panel keeps of one epoch: the matrix, and maybe per-image data."""

    matrix: np.ndarray
    evaluation: Evaluation | None = None
    images: np.ndarray | None = None


class ConfusionMatrix(QWidget):
    """Heat map of a confusion matrix; rows are true classes, columns predicted.

    Every cell shows its count. A click (or Enter on the keyboard cursor, moved
    with the arrow keys) emits :attr:`cell_clicked` with ``(true, predicted)``.
    """

    cell_clicked = Signal(int, int)

    EMPTY_TEXT = "The confusion matrix appears after the first epoch."

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("confusionMatrix")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(220, 220)
        self._matrix: np.ndarray | None = None
        self._names: list[str] = []
        self._selected: tuple[int, int] | None = None
        self._cursor = (0, 0)

    def sizeHint(self) -> QSize:
        """Square-ish: the cells read best when they are square."""
        return QSize(440, 440)

    def set_matrix(self, matrix: np.ndarray | None, names: Sequence[str]) -> None:
        """Show ``matrix`` (int, (C, C)) with ``names`` on both axes; None: empty."""
        self._matrix = matrix
        n = 0 if matrix is None else matrix.shape[0]
        self._names = _names_for(names, n)
        if n and max(self._cursor) >= n:
            self._cursor = (0, 0)
        self.update()

    def set_selected(self, cell: tuple[int, int] | None) -> None:
        """Outline ``cell`` (true, predicted) as the selected one; None: no outline."""
        self._selected = cell
        if cell is not None:
            self._cursor = cell
        self.update()

    def selected(self) -> tuple[int, int] | None:
        """Return the outlined cell, if any."""
        return self._selected

    def cursor_cell(self) -> tuple[int, int]:
        """Return the keyboard cursor's cell."""
        return self._cursor

    # Geometry -------------------------------------------------------------

    def _grid(self) -> _Grid:
        """Where the grid, the names and the titles go at the current size."""
        n = 0 if self._matrix is None else self._matrix.shape[0]
        fm = self.fontMetrics()
        line = fm.height()
        names_w = max((fm.horizontalAdvance(name) for name in self._names), default=0)
        left = names_w + 8 + line + 6  # row names, then the rotated "true"

        def fit(header_h: int) -> tuple[int, int, int, int]:
            avail_w = self.width() - left - 4
            avail_h = self.height() - header_h - 4
            # Whole pixels per cell keep the grid lines crisp and the cells equal.
            cell = max(4, min(avail_w, avail_h) // max(n, 1))
            x0 = left + max(0, (avail_w - cell * n) // 2)
            y0 = header_h + max(0, (avail_h - cell * n) // 2)
            return x0, y0, cell, header_h

        x0, y0, cell, header_h = fit(2 * line + 8)
        # Column names wider than a cell stand up (like rotated axis labels in
        # plotting libraries) rather than being cut to a letter or two.
        rotated = names_w > cell - 4
        if rotated:
            x0, y0, cell, header_h = fit(line + names_w + 10)
        return _Grid(x0, y0, cell, n, names_w + 8, header_h, rotated)

    def cell_rect(self, true: int, predicted: int) -> QRect:
        """Rectangle of cell (``true``, ``predicted``); empty if nothing is shown."""
        x0, y0, cell, n = self._grid()[:4]
        if not (0 <= true < n and 0 <= predicted < n):
            return QRect()
        return QRect(x0 + predicted * cell, y0 + true * cell, cell, cell)

    def cell_at(self, pos: QPoint) -> tuple[int, int] | None:
        """Return the cell (true, predicted) under ``pos``, or None."""
        x0, y0, cell, n = self._grid()[:4]
        if n == 0 or pos.x() < x0 or pos.y() < y0:
            return None
        predicted, true = (pos.x() - x0) // cell, (pos.y() - y0) // cell
        if true >= n or predicted >= n:
            return None
        return true, predicted

    def cell_tooltip(self, true: int, predicted: int) -> str:
        """E.g. ``"true 3, predicted 5: 12 images (1.2% of the 3s)"``."""
        if self._matrix is None:
            return ""
        count = int(self._matrix[true, predicted])
        total = int(self._matrix[true].sum())
        share = f"{100 * count / total:.1f}%" if total else "no images"
        name = self._names[true]
        return (
            f"true {name}, predicted {self._names[predicted]}: "
            f"{_plural(count)} ({share} of the {name}s)"
        )

    # Events ---------------------------------------------------------------

    def event(self, event: QEvent) -> bool:
        """Tooltips name the cell under the mouse."""
        if event.type() == QEvent.Type.ToolTip:
            assert isinstance(event, QHelpEvent)
            cell = self.cell_at(event.pos())
            if cell is None:
                QToolTip.hideText()
                event.ignore()
            else:
                QToolTip.showText(event.globalPos(), self.cell_tooltip(*cell), self)
            return True
        return super().event(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        """Select the cell under a left click."""
        cell = self.cell_at(event.position().toPoint())
        if event.button() != Qt.MouseButton.LeftButton or cell is None:
            super().mousePressEvent(event)
            return
        self._cursor = cell
        self.cell_clicked.emit(*cell)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Arrow keys move the cursor; Enter, Return or Space select its cell."""
        n = 0 if self._matrix is None else self._matrix.shape[0]
        moves = {
            Qt.Key.Key_Left: (0, -1),
            Qt.Key.Key_Right: (0, 1),
            Qt.Key.Key_Up: (-1, 0),
            Qt.Key.Key_Down: (1, 0),
        }
        key = event.key()
        if n and key in moves:
            dt, dp = moves[key]
            t, p = self._cursor
            self._cursor = (min(max(t + dt, 0), n - 1), min(max(p + dp, 0), n - 1))
            self.update()
        elif n and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.cell_clicked.emit(*self._cursor)
        else:
            super().keyPressEvent(event)

    # Painting -------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        """Draw the cells, their counts, the axis names and the selection."""
        painter = QPainter(self)
        try:
            if self._matrix is None or self._matrix.shape[0] == 0:
                painter.setPen(self.palette().placeholderText().color())
                painter.drawText(
                    self.rect(),
                    Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                    self.EMPTY_TEXT,
                )
                return
            self._paint_cells(painter)
            self._paint_axes(painter)
            self._paint_outlines(painter)
        finally:
            painter.end()

    def _count_font(self, cell: int) -> QFont:
        """Return the largest font (up to 14 px) whose widest count fits a cell."""
        assert self._matrix is not None
        widest = str(int(self._matrix.max(initial=0)))
        font = QFont(self.font())
        size = min(14, max(6, int(cell * 0.34)))
        while size > 6:
            font.setPixelSize(size)
            if QFontMetrics(font).horizontalAdvance(widest) <= cell - 4:
                break
            size -= 1
        font.setPixelSize(size)
        return font

    def _paint_cells(self, painter: QPainter) -> None:
        assert self._matrix is not None
        x0, y0, cell, n = self._grid()[:4]
        totals = self._matrix.sum(axis=1)
        painter.setFont(self._count_font(cell))
        for t in range(n):
            for p in range(n):
                count = int(self._matrix[t, p])
                fill = cell_color(count, int(totals[t]), t == p)
                # 1 px gap: the background shows through as the grid lines.
                rect = QRect(x0 + p * cell, y0 + t * cell, cell - 1, cell - 1)
                painter.fillRect(rect, fill)
                # Zeros in grey: present (every cell has a count) but quiet.
                pen = QColor(175, 175, 175) if count == 0 else _text_color(fill)
                painter.setPen(pen)
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, str(count))

    def _paint_axes(self, painter: QPainter) -> None:
        grid = self._grid()
        x0, y0, cell, n = grid[:4]
        fm = self.fontMetrics()
        line = fm.height()
        painter.setFont(self.font())
        painter.setPen(self.palette().windowText().color())
        right_v = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        left_v = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        for i, name in enumerate(self._names):
            row = QRect(x0 - grid.names_w, y0 + i * cell, grid.names_w - 6, cell)
            painter.drawText(row, right_v, name)
            if grid.rotated:
                painter.save()
                # Reads bottom-to-top, ending just above its column.
                painter.translate(x0 + i * cell + cell / 2, y0 - 4)
                painter.rotate(-90)
                painter.drawText(QRect(0, -line // 2, grid.names_w, line), left_v, name)
                painter.restore()
            else:
                col = QRect(x0 + i * cell, y0 - line - 4, cell, line)
                painter.drawText(col, Qt.AlignmentFlag.AlignCenter, name)
        bold = QFont(self.font())
        bold.setBold(True)
        painter.setFont(bold)
        header = QRect(x0, y0 - grid.header_h + 2, cell * n, line)
        painter.drawText(header, Qt.AlignmentFlag.AlignCenter, "predicted")
        painter.save()
        # Rotated so "true" reads bottom-to-top along the rows.
        painter.translate(x0 - grid.names_w - 6, y0 + cell * n / 2)
        painter.rotate(-90)
        painter.drawText(
            QRect(-cell * n // 2, -line, cell * n, line),
            Qt.AlignmentFlag.AlignCenter,
            "true",
        )
        painter.restore()

    def _paint_outlines(self, painter: QPainter) -> None:
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if self.hasFocus():
            painter.setPen(QPen(QColor(20, 20, 20), 1, Qt.PenStyle.DashLine))
            painter.drawRect(self.cell_rect(*self._cursor).adjusted(2, 2, -3, -3))
        if self._selected is not None:
            painter.setPen(QPen(_SELECTED, 3))
            painter.drawRect(self.cell_rect(*self._selected).adjusted(1, 1, -2, -2))


class EvaluationPanel(QWidget):
    """Confusion matrix per epoch, per-class accuracy and the images of a cell.

    Feed it :class:`~workbench.core.events.Evaluation` events with
    :meth:`add_evaluation`; a click on a matrix cell lists that cell's validation
    images, hardest first, and *Open in canvas* emits the selected one.
    """

    open_in_canvas = Signal(object)
    """float32 (28, 28) image in [0, 1], white ink on black."""

    MAX_GALLERY = 500
    """Most images the gallery shows; a bigger cell shows its hardest ones."""

    KEEP_SAMPLE_EPOCHS = 10
    """Epochs (the newest) that keep per-image predictions; older keep the matrix."""

    BAR_COLOR = QColor(65, 150, 85)
    MAX_BAR_LABELS = 20  # more classes: the value labels would overlap

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("evaluationPanel")
        self._epochs: dict[int, _Epoch] = {}
        self._order: list[int] = []  # epochs in slider order
        self._shown: int | None = None
        self._selected: tuple[int, int] | None = None
        self._names: list[str] = []
        self._gallery_indices = np.zeros(0, dtype=np.int64)
        self._gallery_images: np.ndarray | None = None

        self.matrix_widget = ConfusionMatrix()
        self.matrix_widget.cell_clicked.connect(self._on_matrix_cell_clicked)
        self.accuracy_plot = self._make_accuracy_plot()

        self.epoch_slider = QSlider(Qt.Orientation.Horizontal)
        self.epoch_slider.setObjectName("epochSlider")
        self.epoch_slider.setPageStep(1)
        self.epoch_slider.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.epoch_slider.setToolTip("Replay the confusion matrix of each epoch")
        self.epoch_slider.valueChanged.connect(self._on_epoch_slider_value_changed)
        self.epoch_label = QLabel(objectName="epochLabel")
        self.epoch_label.setMinimumWidth(240)

        self.gallery_label = QLabel(objectName="galleryLabel")
        self.gallery_label.setWordWrap(True)
        self.gallery = self._make_gallery()
        self.open_button = QPushButton(
            "Open in canvas", objectName="openInCanvasButton"
        )
        self.open_button.setToolTip(
            "Open the selected image in the drawing canvas (or double-click it)"
        )
        self.open_button.clicked.connect(self._on_open_button_clicked)

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        charts = QHBoxLayout()
        charts.addWidget(self.matrix_widget, 3)
        charts.addWidget(self.accuracy_plot, 2)
        top_layout.addLayout(charts, 1)
        slider_row = QHBoxLayout()
        slider_row.addWidget(self.epoch_slider, 1)
        slider_row.addWidget(self.epoch_label)
        top_layout.addLayout(slider_row)

        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addWidget(self.gallery_label)
        bottom_layout.addWidget(self.gallery, 1)
        button_row = QHBoxLayout()
        button_row.addStretch(1)
        button_row.addWidget(self.open_button)
        bottom_layout.addLayout(button_row)

        # A splitter so users trade matrix size for gallery rows (the window can
        # save its state like its other splitters).
        self.splitter = QSplitter(
            Qt.Orientation.Vertical, objectName="evaluationSplitter"
        )
        self.splitter.addWidget(top)
        self.splitter.addWidget(bottom)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.splitter)
        self._show(None)

    def _make_accuracy_plot(self) -> pg.PlotWidget:
        plot_widget = pg.PlotWidget(background="w")
        plot_widget.setObjectName("perClassAccuracy")
        plot_widget.setMinimumWidth(180)
        plot = plot_widget.getPlotItem()
        plot.setTitle("per-class accuracy", size="10pt", color="k")
        plot.setMouseEnabled(x=False, y=False)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        # No grid: the bars carry their values, and pyqtgraph's grid would clip
        # the "0" label at the bottom edge.
        plot.setLabel("left", "accuracy (%)")
        plot.setLabel("bottom", "true class")
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            axis.setPen("k")
            axis.setTextPen("k")
            axis.enableAutoSIPrefix(False)  # no "(x0.001)" on an empty axis
        left = plot.getAxis("left")
        left.setTicks([[(v, str(v)) for v in (0, 25, 50, 75, 100)]])
        # Five fixed labels: all through pyqtgraph's crowding and edge checks.
        left.setStyle(hideOverlappingLabels=False, textFillLimits=[(0, 0.95)])
        plot.disableAutoRange()
        # Headroom above 100 for the value labels; from 0 so bar heights compare.
        plot.setYRange(-0.5, 112, padding=0)
        # Created once and updated with setOpts: re-adding items per update is slow.
        self._bars = pg.BarGraphItem(
            x=np.zeros(0), height=np.zeros(0), width=0.7, pen=None, brush=self.BAR_COLOR
        )
        plot.addItem(self._bars)
        # Accuracies are often all within a few percent, which bars from 0 cannot
        # show: each bar carries its value (recreated only when the classes change).
        self._bar_labels: list[pg.TextItem] = []
        self._bar_names: list[str] = []
        plot.getViewBox().sigResized.connect(self._on_accuracy_view_resized)
        return plot_widget

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

    def set_class_names(self, names: Sequence[str]) -> None:
        """Name the classes on the axes, bars and gallery items.

        Parameters
        ----------
        names : Sequence[str]
            Class names in class-index order; classes beyond them show their index.
        """
        self._names = [str(n) for n in names]
        self._refresh()

    @Slot(object, object)
    def add_evaluation(self, ev: Evaluation, images: np.ndarray | None) -> None:
        """Add (or replace, for the same epoch) an epoch and show the newest one.

        Parameters
        ----------
        ev : Evaluation
            The epoch's validation predictions.
        images : numpy.ndarray or None
            uint8 (N, 28, 28) validation images in the order of ``ev`` (kept by
            reference, not copied: the same array for every epoch costs nothing);
            None when they are not available (the gallery then stays empty).

        Raises
        ------
        ValueError
            If ``images`` does not hold one image per prediction.
        """
        if images is not None and (images.ndim != 3 or len(images) != len(ev.labels)):
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
        return self._gallery_indices.copy()

    def bar_item(self) -> pg.BarGraphItem:
        """Return the single per-class accuracy bar item (for tests)."""
        return self._bars

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

    def _refresh(self) -> None:
        matrix = self.shown_matrix()
        n = 0 if matrix is None else matrix.shape[0]
        names = _names_for(self._names, n)
        if self._selected is not None and max(self._selected) >= n:
            self._selected = None
        self.matrix_widget.set_matrix(matrix, names)
        self.matrix_widget.set_selected(self._selected)
        self._update_bars(matrix, names)
        if matrix is None or self._shown is None:
            self.epoch_label.setText("no evaluation yet")
        else:
            self.epoch_label.setText(
                f"epoch {self._shown + 1} of {self._order[-1] + 1} · "
                f"val accuracy {_accuracy(matrix):.1%}"
            )
        self._refresh_gallery()

    def _update_bars(self, matrix: np.ndarray | None, names: list[str]) -> None:
        n = len(names)
        accuracy = np.zeros(0) if matrix is None else _per_class_accuracy(matrix)
        # An absent class (NaN) gets no bar rather than breaking the plot.
        self._bars.setOpts(
            x=np.arange(n, dtype=float), height=np.nan_to_num(accuracy * 100, nan=0.0)
        )
        plot = self.accuracy_plot.getPlotItem()
        self._bar_names = names
        self._update_bar_ticks()
        plot.setXRange(-0.6, max(n, 1) - 0.4, padding=0)
        self._update_bar_labels(accuracy)
        lines = [
            f"{name}: {'no images' if np.isnan(a) else f'{a:.1%}'}"
            for name, a in zip(names, accuracy, strict=True)
        ]
        self.accuracy_plot.setToolTip("\n".join(["Accuracy per true class", *lines]))

    def _update_bar_ticks(self) -> None:
        """Class names under the bars, shortened to what a bar's width holds."""
        names = self._bar_names
        plot = self.accuracy_plot.getPlotItem()
        per_bar = plot.getViewBox().width() / max(len(names), 1) - 4
        fm = self.accuracy_plot.fontMetrics()
        labels = []
        for i, name in enumerate(names):
            text = fm.elidedText(name, Qt.TextElideMode.ElideRight, int(per_bar))
            # Not even a letter and the ellipsis: the class index says more.
            labels.append(text if text == name or len(text) >= 2 else str(i))
        plot.getAxis("bottom").setTicks([list(enumerate(labels))])

    def _update_bar_labels(self, accuracy: np.ndarray) -> None:
        n = len(accuracy) if len(accuracy) <= self.MAX_BAR_LABELS else 0
        plot = self.accuracy_plot.getPlotItem()
        if len(self._bar_labels) != n:
            for label in self._bar_labels:
                plot.removeItem(label)
            self._bar_labels = [
                pg.TextItem(anchor=(0.5, 1.0), color=(40, 40, 40)) for _ in range(n)
            ]
            font = QFont(self.font())
            font.setPointSizeF(max(6.0, font.pointSizeF() - 2))
            for label in self._bar_labels:
                label.setFont(font)
                plot.addItem(label)
        for i, (label, a) in enumerate(zip(self._bar_labels, accuracy, strict=True)):
            label.setText("-" if np.isnan(a) else f"{100 * a:.1f}")
            label.setPos(i, 0.0 if np.isnan(a) else 100 * a)

    def _refresh_gallery(self) -> None:
        self.gallery.clear()
        self._gallery_indices = np.zeros(0, dtype=np.int64)
        self._gallery_images = None
        self.open_button.setEnabled(False)
        self.gallery_label.setText(self._fill_gallery())
        if self.gallery.count():
            self.gallery.setCurrentRow(0)  # the hardest image, ready to open

    def _fill_gallery(self) -> str:
        """Fill the gallery for the selected cell; return the label's text."""
        matrix = self.shown_matrix()
        if matrix is None or self._shown is None:
            return ""
        if self._selected is None:
            return "Click a cell of the matrix to see its images, hardest first."
        t, p = self._selected
        names = _names_for(self._names, matrix.shape[0])
        where = f"true {names[t]}, predicted {names[p]}"
        count = int(matrix[t, p])
        entry = self._epochs[self._shown]
        ev = entry.evaluation
        if ev is None:
            return (
                f"{_plural(count)}: {where}. The per-image predictions of epoch "
                f"{self._shown + 1} are not kept (only the latest epochs of this "
                "session have them)."
            )
        if entry.images is None:
            return (
                f"{_plural(count)}: {where}. The validation images are not available."
            )
        if count == 0:
            return f"no images: {where}."
        indices = ev.cell(t, p)[: self.MAX_GALLERY]
        self._fill_items(indices, ev, entry.images, f"{names[t]} → {names[p]}")
        if count > len(indices):
            return f"showing the {len(indices):,} hardest of {count:,}: {where}."
        return f"{_plural(count)}: {where}, hardest first."

    def _fill_items(
        self, indices: np.ndarray, ev: Evaluation, images: np.ndarray, title: str
    ) -> None:
        self.gallery.setUpdatesEnabled(False)  # one layout for all items
        try:
            for index in indices:
                i = int(index)
                confidence = float(ev.confidences[i])
                pixmap = gray_pixmap(images[i], 2)
                icon = QIcon(pixmap)
                # The same pixmap when selected: the style's blue tint would hide
                # the digit; the highlighted text shows the selection.
                icon.addPixmap(pixmap, QIcon.Mode.Selected)
                item = QListWidgetItem(icon, f"{title}\n{confidence:.0%}")
                item.setData(_INDEX_ROLE, i)
                item.setToolTip(
                    f"validation image {i}\nloss {float(ev.losses[i]):.3f}\n"
                    f"confidence {confidence:.1%}"
                )
                self.gallery.addItem(item)
        finally:
            self.gallery.setUpdatesEnabled(True)
        self._gallery_indices = indices.astype(np.int64)
        self._gallery_images = images

    def _emit_image(self, item: QListWidgetItem | None) -> None:
        if item is None or self._gallery_images is None:
            return
        image = self._gallery_images[int(item.data(_INDEX_ROLE))]
        self.open_in_canvas.emit(image.astype(np.float32) / 255.0)

    # Handlers -------------------------------------------------------------

    @Slot(int, int)
    def _on_matrix_cell_clicked(self, true: int, predicted: int) -> None:
        self.select_cell(true, predicted)

    @Slot(object)
    def _on_accuracy_view_resized(self, view: object) -> None:
        self._update_bar_ticks()

    @Slot(int)
    def _on_epoch_slider_value_changed(self, value: int) -> None:
        if 0 <= value < len(self._order):
            self._shown = self._order[value]
            self._refresh()

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
