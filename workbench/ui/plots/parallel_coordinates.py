"""A sweep's trials as parallel coordinates (pyqtgraph).

One line per trial across an axis per swept setting and a last one for the
accuracy, coloured by accuracy (viridis: yellow is best); pruned trials
faded, those still training dashed. The positions come from
:mod:`workbench.core.tuning.coordinates`; here they are only drawn.

Lines of one colour share a single curve item (NaN breaks between them), so
200 trials are a handful of items, not 200.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

from workbench.core.tuning.coordinates import Axis, Line

COLOUR_STEPS = 8  # accuracy bands, each one curve item
FADED = QColor(150, 150, 150, 90)


class ParallelCoordinates(pg.PlotWidget):
    """The trials of a sweep across its settings; ``show_lines`` redraws."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent=parent, background="w")
        self.setObjectName("parallelCoordinates")
        plot = self.getPlotItem()
        plot.setTitle("trials: one line each, coloured by accuracy", size="10pt")
        plot.setMouseEnabled(x=False, y=False)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.hideAxis("left")
        bottom = plot.getAxis("bottom")
        bottom.setPen("k")
        bottom.setTextPen("k")
        plot.disableAutoRange()
        self._map = pg.colormap.get("viridis")
        self._axes: tuple[Axis, ...] = ()
        self._frame: list[pg.GraphicsObject] = []  # axis lines and their labels
        self.curves: dict[str, pg.PlotCurveItem] = {}  # by band: "band 3", "pruned"

    def colour(self, share: float) -> QColor:
        """The colour of an accuracy ``share`` of the way from worst to best."""
        step = min(COLOUR_STEPS - 1, max(0, int(share * COLOUR_STEPS)))
        return self._map.map(step / (COLOUR_STEPS - 1), mode="qcolor")

    def show_lines(self, axes: Sequence[Axis], lines: Sequence[Line]) -> None:
        """Draw ``lines`` over ``axes``, replacing what was drawn.

        The axes are redrawn only when they changed; each band's curve item is
        kept and given new data, so a sweep's next trial costs little.
        """
        plot = self.getPlotItem()
        if tuple(axes) != self._axes:
            self._draw_axes(axes)
        groups: dict[str, list[Line]] = {}
        accuracy = axes[-1] if axes else None
        for line in lines:
            groups.setdefault(self._group(line, accuracy), []).append(line)
        for group in set(self.curves) - set(groups):
            plot.removeItem(self.curves.pop(group))
        for group, members in groups.items():
            self._curve(group, members, len(axes))

    def _draw_axes(self, axes: Sequence[Axis]) -> None:
        plot = self.getPlotItem()
        for item in self._frame:
            plot.removeItem(item)
        self._frame = []
        self._axes = tuple(axes)
        plot.setXRange(-0.3, len(axes) - 0.7, padding=0)
        plot.setYRange(-0.12, 1.12, padding=0)
        plot.getAxis("bottom").setTicks([[(i, a.name) for i, a in enumerate(axes)]])
        for index, axis in enumerate(axes):
            self._axis_line(index, axis)

    def _group(self, line: Line, accuracy: Axis | None) -> str:
        if line.state == "pruned":
            return "pruned"
        if line.state == "running":
            return "running"
        if line.state != "complete" or accuracy is None:
            return "failed"
        share = accuracy.position(line.accuracy)
        share = 0.5 if math.isnan(share) else share
        return f"band {min(COLOUR_STEPS - 1, max(0, int(share * COLOUR_STEPS)))}"

    def _curve(self, group: str, members: Sequence[Line], count: int) -> None:
        # Each line's points, then a NaN: one item draws them all, unjoined.
        xs = np.tile(np.append(np.arange(count, dtype=float), np.nan), len(members))
        ys = np.concatenate(
            [np.append(np.asarray(m.positions, dtype=float), np.nan) for m in members]
        )
        item = self.curves.get(group)
        if item is not None:
            item.setData(xs, ys, connect="finite")
            return
        if group.startswith("band "):
            step = int(group.split()[1])
            pen = pg.mkPen(self.colour(step / COLOUR_STEPS), width=2)
        elif group == "running":
            pen = pg.mkPen(QColor(60, 60, 60), width=1, style=Qt.PenStyle.DashLine)
        else:
            pen = pg.mkPen(FADED, width=1)
        item = pg.PlotCurveItem(xs, ys, pen=pen, connect="finite")
        item.setZValue(-1 if group in ("pruned", "failed") else 0)
        self.getPlotItem().addItem(item)
        self.curves[group] = item

    def _axis_line(self, index: int, axis: Axis) -> None:
        plot = self.getPlotItem()
        line = pg.PlotCurveItem([index, index], [0, 1], pen=pg.mkPen("k", width=1))
        line.setZValue(-2)
        plot.addItem(line)
        self._frame.append(line)
        for position, text in axis.ticks():
            label = pg.TextItem(text, color="k", anchor=(0, 0.5))
            label.setPos(index + 0.03, position)
            plot.addItem(label)
            self._frame.append(label)
