"""The per-class accuracy bars of the Evaluation tab.

:class:`ClassAccuracyChart` draws, for the confusion matrix it is given, the share
of each true class predicted right: one bar per class, its value written on top
(with the decimals a bar's width holds, or not at all when even "100" would run
into its neighbour's), the class names under the bars shortened to what a bar's
width holds.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QColor, QFont, QFontMetrics
from PySide6.QtWidgets import QWidget


def _per_class_accuracy(matrix: np.ndarray) -> np.ndarray:
    totals = matrix.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, np.diag(matrix) / totals, np.nan)


class ClassAccuracyChart(pg.PlotWidget):
    """Accuracy per true class of a confusion matrix: a bar each, values on top."""

    BAR_COLOR = QColor(65, 150, 85)
    MAX_BAR_LABELS = 20  # more classes: the value labels would overlap
    LABEL_GAP = 3  # pixels at least between two neighbouring value labels

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent=parent, background="w")
        self.setObjectName("perClassAccuracy")
        self.setMinimumWidth(180)
        plot = self.getPlotItem()
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
        self._accuracy = np.zeros(0)
        self._label_font = QFont(self.font())
        self._label_font.setPointSizeF(max(6.0, self._label_font.pointSizeF() - 2))
        plot.getViewBox().sigResized.connect(self._on_view_box_resized)

    def bar_item(self) -> pg.BarGraphItem:
        """Return the single bar item (for tests)."""
        return self._bars

    def set_matrix(self, matrix: np.ndarray | None, names: list[str]) -> None:
        """Show the per-class accuracy of ``matrix``; None: no bars.

        Parameters
        ----------
        matrix : numpy.ndarray or None
            int (C, C) confusion matrix, row = true, column = predicted.
        names : list[str]
            One name per class (C of them; none for None).
        """
        n = len(names)
        accuracy = np.zeros(0) if matrix is None else _per_class_accuracy(matrix)
        # An absent class (NaN) gets no bar rather than breaking the plot.
        self._bars.setOpts(
            x=np.arange(n, dtype=float), height=np.nan_to_num(accuracy * 100, nan=0.0)
        )
        plot = self.getPlotItem()
        self._bar_names = names
        self._update_bar_ticks()
        plot.setXRange(-0.6, max(n, 1) - 0.4, padding=0)
        self._accuracy = accuracy
        self._update_bar_labels()
        lines = [
            f"{name}: {'no images' if np.isnan(a) else f'{a:.1%}'}"
            for name, a in zip(names, accuracy, strict=True)
        ]
        self.setToolTip("\n".join(["Accuracy per true class", *lines]))

    def _update_bar_ticks(self) -> None:
        """Class names under the bars, shortened to what a bar's width holds."""
        names = self._bar_names
        plot = self.getPlotItem()
        per_bar = plot.getViewBox().width() / max(len(names), 1) - 4
        fm = self.fontMetrics()
        labels = []
        for i, name in enumerate(names):
            text = fm.elidedText(name, Qt.TextElideMode.ElideRight, int(per_bar))
            # Not even a letter and the ellipsis: the class index says more.
            labels.append(text if text == name or len(text) >= 2 else str(i))
        plot.getAxis("bottom").setTicks([list(enumerate(labels))])

    def bar_labels(self) -> list[pg.TextItem]:
        """The value labels shown over the bars (for tests)."""
        return [label for label in self._bar_labels if label.isVisible()]

    def _label_texts(self, accuracy: np.ndarray) -> list[str]:
        """Values with the most decimals (1 or 0) that fit a bar; none: no room."""
        n = len(accuracy)
        # The x range spans n + 0.2 bar pitches (see set_matrix).
        pitch = self.getPlotItem().getViewBox().width() / (n + 0.2)
        metrics = QFontMetrics(self._label_font)
        for decimals in (1, 0):
            texts = [
                "-" if np.isnan(a) else f"{100 * a:.{decimals}f}" for a in accuracy
            ]
            widest = max(metrics.horizontalAdvance(t) for t in texts)
            if widest + self.LABEL_GAP <= pitch:
                return texts
        return []

    def _update_bar_labels(self) -> None:
        accuracy = self._accuracy
        n = len(accuracy) if len(accuracy) <= self.MAX_BAR_LABELS else 0
        plot = self.getPlotItem()
        if len(self._bar_labels) != n:
            for label in self._bar_labels:
                plot.removeItem(label)
            self._bar_labels = [
                pg.TextItem(anchor=(0.5, 1.0), color=(40, 40, 40)) for _ in range(n)
            ]
            for label in self._bar_labels:
                label.setFont(self._label_font)
                plot.addItem(label)
        # Too narrow for even "100" side by side: no labels (the tooltip has them).
        texts = self._label_texts(accuracy) if n else []
        # Past MAX_BAR_LABELS classes there are no labels (n = 0) to place.
        for i, (label, a) in enumerate(
            zip(self._bar_labels, accuracy[:n], strict=True)
        ):
            label.setVisible(bool(texts))
            label.setText(texts[i] if texts else "")
            label.setPos(i, 0.0 if np.isnan(a) else 100 * a)

    @Slot(object)
    def _on_view_box_resized(self, view: object) -> None:
        self._update_bar_ticks()
        self._update_bar_labels()
