"""Grid lines of a live plot, painted straight onto its view.

pyqtgraph draws a plot's grid as part of each axis: the lines go into the
axis's recorded picture, and a cached axis (``LivePlot`` caches them, or every
frame replays the pictures) renders that picture, as large as the whole view,
into a new pixmap whenever its range changes: most of a plot's stall at an
epoch end. :class:`ViewGrid` paints the same lines (the axes' own tick values,
with pyqtgraph's fading per tick level) at every paint, one ``drawLines`` call
per level: no picture, no pixmap. A repaint in which both ranges changed takes
about half as long, one in which only the curve changed a little longer
(``bench/plot_paint_bench.py``).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QLineF, QRectF
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QStyleOptionGraphicsItem, QWidget


class ViewGrid(pg.GraphicsObject):
    """Grid lines at the ticks of a plot's bottom and left axes.

    Add it to the plot's view box with ``ignoreBounds=True``: it lives in view
    coordinates and spans whatever range the view shows.

    Parameters
    ----------
    plot : pyqtgraph.PlotItem
        The plot whose axes give the tick values.
    alpha : float
        Opacity of the major lines, 0..1, as in ``PlotItem.showGrid``.
    """

    def __init__(self, plot: pg.PlotItem, alpha: float) -> None:
        super().__init__()
        self._plot = plot
        self._alpha = alpha
        self._levels: list[tuple[int, list[QLineF]]] | None = None  # see levels()
        self.setZValue(-1000)  # under the curves

    def boundingRect(self) -> QRectF:
        """The view's range: the grid covers what is shown."""
        return self._plot.getViewBox().viewRect()

    def viewRangeChanged(self) -> None:
        """pyqtgraph calls this when the view's range changes: a new extent."""
        self.prepareGeometryChange()

    def viewTransformChanged(self) -> None:
        """pyqtgraph calls this when the view's range or size changes."""
        self._levels = None
        self.update()

    def levels(self) -> list[tuple[int, list[QLineF]]]:
        """The grid lines in view coordinates, by tick level, with its alpha.

        Worked out once per range and size: most repaints (a new point inside
        the range) draw the same lines again.
        """
        if self._levels is None:
            self._levels = self._work_out_levels()
        return self._levels

    def _work_out_levels(self) -> list[tuple[int, list[QLineF]]]:
        view = self._plot.getViewBox()
        rect = view.viewRect()
        size = view.size()
        out: list[tuple[int, list[QLineF]]] = []
        for name, pixels in (("bottom", size.width()), ("left", size.height())):
            axis = self._plot.getAxis(name)
            vertical = name == "bottom"
            lo, hi = (
                (rect.left(), rect.right()) if vertical else (rect.top(), rect.bottom())
            )
            if pixels <= 0 or not hi > lo:
                continue
            for level, (_spacing, values) in enumerate(axis.tickValues(lo, hi, pixels)):
                # pyqtgraph's own fading (AxisItem.generateDrawSpecs): minor
                # levels fainter, crowded levels fainter still.
                crowding = min(max(0.05 * pixels / (len(values) + 1), 0.0), 1.0)
                alpha = int(255 / (level + 1) * self._alpha * crowding)
                shown = [v for v in values if lo <= v <= hi]
                if vertical:
                    lines = [QLineF(v, rect.top(), v, rect.bottom()) for v in shown]
                else:
                    lines = [QLineF(rect.left(), v, rect.right(), v) for v in shown]
                out.append((alpha, lines))
        return out

    def paint(
        self,
        painter: QPainter,
        _option: QStyleOptionGraphicsItem,
        _widget: QWidget | None = None,
    ) -> None:
        """One-pixel lines, whatever the view's scale; one call per level."""
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        color = QColor(self._plot.getAxis("left").pen().color())
        for alpha, lines in self.levels():
            color.setAlpha(alpha)
            painter.setPen(QPen(color, 0))  # width 0: cosmetic, one device pixel
            painter.drawLines(lines)
