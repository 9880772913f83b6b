"""The probability bars of the "Draw a digit" tab.

:class:`ProbabilityBars` is a pyqtgraph bar chart of one predicted probability
per class, the most likely class in another colour with its value on top.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget


class ProbabilityBars(pg.PlotWidget):
    """A bar per class showing its predicted probability; the top bar stands out."""

    BAR_COLOR = QColor(120, 144, 176)
    TOP_COLOR = QColor(230, 120, 20)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent=parent, background="w")
        self.setObjectName("probabilityPlot")
        plot = self.getPlotItem()
        plot.setMouseEnabled(x=False, y=False)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.showGrid(x=False, y=True, alpha=0.25)
        plot.setLabel("left", "probability")
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            axis.setPen("k")
            axis.setTextPen("k")
        plot.getAxis("left").setTicks(
            [[(v, f"{v:g}") for v in (0, 0.25, 0.5, 0.75, 1)]]
        )
        plot.disableAutoRange()
        self._names: list[str] = []
        self._probs = np.zeros(0)
        # Created once and updated with setOpts: re-adding items per update is slow.
        self._bars = pg.BarGraphItem(
            x=np.zeros(0), height=np.zeros(0), width=0.7, pen=None, brushes=[]
        )
        plot.addItem(self._bars)
        self._top_label = pg.TextItem(anchor=(0.5, 1.0), color=self.TOP_COLOR)
        self._top_label.setVisible(False)
        plot.addItem(self._top_label)
        self.set_class_names([str(i) for i in range(10)])

    def bar_item(self) -> pg.BarGraphItem:
        """Return the single bar item (for tests)."""
        return self._bars

    def class_names(self) -> list[str]:
        """Return the class names shown under the bars."""
        return list(self._names)

    def set_class_names(self, names: Sequence[str]) -> None:
        """Set one bar per class, labelled with its name; all bars go to zero.

        Parameters
        ----------
        names : Sequence[str]
            Class names in class-index order.
        """
        self._names = [str(n) for n in names]
        n = len(self._names)
        plot = self.getPlotItem()
        plot.getAxis("bottom").setTicks([list(enumerate(self._names))])
        plot.setXRange(-0.6, max(n, 1) - 0.4, padding=0)
        plot.setYRange(0, 1.08, padding=0)
        self._probs = np.zeros(n)
        self._bars.setOpts(
            x=np.arange(n, dtype=float),
            height=self._probs.copy(),
            brushes=[self.BAR_COLOR] * n,
        )
        self._top_label.setVisible(False)

    @Slot(object)
    def set_probabilities(self, probs: Sequence[float]) -> None:
        """Show one probability per class and highlight the largest.

        Parameters
        ----------
        probs : Sequence[float]
            As many values in [0, 1] as there are class names.
        """
        values = np.asarray(probs, dtype=float).reshape(-1)
        if values.shape != self._probs.shape:
            raise ValueError(
                f"expected {len(self._probs)} probabilities, got {values.size}"
            )
        values = np.clip(np.nan_to_num(values, nan=0.0), 0.0, 1.0)
        self._probs = values
        brushes = [self.BAR_COLOR] * len(values)
        top = int(np.argmax(values)) if values.size else -1
        if top >= 0 and values[top] > 0:
            brushes[top] = self.TOP_COLOR
            self._top_label.setText(f"{values[top]:.0%}")
            self._top_label.setPos(top, values[top] + 0.01)
            self._top_label.setVisible(True)
        else:
            self._top_label.setVisible(False)
        self._bars.setOpts(height=values.copy(), brushes=brushes)

    @Slot()
    def clear_probabilities(self) -> None:
        """Set all bars to zero."""
        self.set_probabilities(np.zeros(len(self._names)))

    def probabilities(self) -> np.ndarray:
        """Return the probabilities shown, a copy.

        Returns
        -------
        numpy.ndarray
            float64, one value per class.
        """
        return self._probs.copy()
