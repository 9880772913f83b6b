"""Live plots that stay smooth for millions of points.

One ``PlotDataItem`` per series, created once; ``append`` writes into a numpy
buffer that doubles when full and marks the plot dirty. One single-shot timer
shared by every live plot (armed by the first new point, so an idle window never
wakes) hands the filled parts of all dirty plots to pyqtgraph in one tick
(pyqtgraph ``examples/scrollingPlots.py``). Curves downsample (peak mode) and clip
to the visible range.

The paint budget is shared: the interval to the next frame is ``COST_FACTOR``
times what the last frame cost, its updates and the paints they caused in every
plot together, so drawing takes at most ``1 / COST_FACTOR`` of the GUI thread
however many plots there are and however often points arrive. A frame updates
its plots one per tick, ``STAGGER_MS`` apart, so their paints never add up to
one long block of the GUI thread. Logging every
step then costs the window about what logging every 10th did: a repaint redraws
a plot's axes and grid (10-20 ms on a busy 2-core machine), so the live curves
advance at a few frames a second there, and at 4 where painting is cheap.
"""

from __future__ import annotations

import html
import math
import time
import weakref
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QPointF, Qt, QTimer, Slot
from PySide6.QtGui import QPaintEvent, QShowEvent
from PySide6.QtWidgets import QGraphicsItem, QWidget
from shiboken6 import isValid

from workbench.ui.plots.stepped_view import SteppedViewBox
from workbench.ui.plots.view_grid import ViewGrid

pg.setConfigOptions(antialias=False, background="w", foreground="k")

LEGEND_PER_ROW = 3  # series named per line under a plot's title
GRID_ALPHA = 0.2  # opacity of the major grid lines, as showGrid(alpha=...) had it
# At most 4 frames a second: a loss curve that moves four times a second reads
# as live, and each frame takes the GUI thread from a CPU run's trainer.
MIN_INTERVAL_MS = 250
MAX_INTERVAL_MS = 2000
# Refresh at most this often relative to its cost: 100x cost = at most 1% of the
# GUI thread for every plot together. The paints hold the GIL in pyqtgraph's
# Python code, which slows a training thread about twice that share, and on 2
# cores the GUI thread's time comes out of one of the trainer's two OpenMP
# threads, which the other then waits for. The cost counts every paint a refresh
# causes, not only the first (``bench/gui_bench.py`` prints the GUI thread's share).
COST_FACTOR = 100
# A frame draws its plots one at a time, this far apart: the GUI thread is
# blocked by one plot's paint at a time (10-40 ms on a busy 2-core machine), not
# by all of them at once (the accuracy plot joins the others at every epoch end).
STAGGER_MS = 20


@dataclass
class _Series:
    name: str
    curve: pg.PlotDataItem
    xs: np.ndarray
    ys: np.ndarray
    n: int = 0
    dirty: bool = False
    fmt: str = "{:.4g}"
    symbol: str | None = None  # None: a line only (a lone point still shows)
    lone: bool = False  # drawn as one point with a symbol

    def append(self, x: float, y: float) -> None:
        if self.n == len(self.xs):
            self.xs = np.resize(self.xs, 2 * len(self.xs))
            self.ys = np.resize(self.ys, 2 * len(self.ys))
        self.xs[self.n] = x
        self.ys[self.n] = y
        self.n += 1
        self.dirty = True

    def extend(self, xs: np.ndarray, ys: np.ndarray) -> None:
        need = self.n + len(xs)
        if need > len(self.xs):
            size = max(need, 2 * len(self.xs))
            self.xs = np.resize(self.xs, size)
            self.ys = np.resize(self.ys, size)
        self.xs[self.n : need] = xs
        self.ys[self.n : need] = ys
        self.n = need
        self.dirty = True

    def clear(self) -> None:
        self.n = 0
        self.dirty = True

    def value_near(self, x: float) -> tuple[float, float] | None:
        if self.n == 0:
            return None
        xs = self.xs[: self.n]
        i = int(np.searchsorted(xs, x))
        if i >= self.n or (i > 0 and abs(xs[i - 1] - x) <= abs(xs[i] - x)):
            i -= 1
        return float(xs[i]), float(self.ys[i])


def no_scale_factor(plot: pg.PlotItem) -> None:
    """No "(x0.001)" on the axes: a loss of 0.0004 reads as 0.0004, not 0.4.

    pyqtgraph scales an axis without units by a power of 1000 and writes the
    factor in the label, which reads as if the values were scaled by it.
    """
    for name in ("left", "bottom"):
        plot.getAxis(name).enableAutoSIPrefix(False)


class LivePlot(pg.PlotWidget):
    """A plot of named series fed point by point; hovering shows the values."""

    def __init__(
        self,
        title: str,
        x_label: str,
        y_label: str,
        parent: QWidget | None = None,
        *,
        x_name: str = "x",
        legend: bool = True,
        y_limits: tuple[float, float] | None = None,
    ) -> None:
        super().__init__(parent, viewBox=SteppedViewBox())
        self._x_name = x_name
        self._empty_range = ((0.0, 1.0), y_limits or (0.0, 1.0))
        if y_limits is not None:
            # An accuracy per epoch: the view never shows negative epochs or
            # 150 %, zoomed or auto-ranged.
            self.getPlotItem().getViewBox().setLimits(
                xMin=0.0, yMin=y_limits[0], yMax=y_limits[1]
            )
            self.setRange(xRange=(0.0, 1.0), yRange=y_limits, padding=0)
        self._series: dict[str, _Series] = {}
        self._title = title
        self._legend = legend  # False: one series, the title names it
        self.setTitle(title)
        self.setLabel("bottom", x_label)
        self.setLabel("left", y_label)
        no_scale_factor(self.getPlotItem())
        # The grid on the view, not in the axes: see view_grid.py.
        self.grid = ViewGrid(self.getPlotItem(), GRID_ALPHA)
        self.getPlotItem().getViewBox().addItem(self.grid, ignoreBounds=True)
        for name in ("left", "bottom"):
            # An axis's picture (ticks and labels) replayed at every frame cost
            # most of a repaint: cached as a pixmap it is drawn again only when
            # its range changes, pixel for pixel the same.
            self.getPlotItem().getAxis(name).setCacheMode(
                QGraphicsItem.CacheMode.DeviceCoordinateCache
            )
        self.setMenuEnabled(False)
        self.setMinimumHeight(120)
        self._hover_line = pg.InfiniteLine(
            angle=90,
            pen=pg.mkPen((120, 120, 120), style=pg.QtCore.Qt.PenStyle.DashLine),
        )
        self._hover_line.setVisible(False)
        self.addItem(self._hover_line, ignoreBounds=True)
        self._hover_text = pg.TextItem(
            anchor=(0, 0), color=(20, 20, 20), fill=pg.mkBrush(255, 255, 255, 220)
        )
        self._hover_text.setZValue(100)
        self._hover_text.setVisible(False)
        self.addItem(self._hover_text, ignoreBounds=True)
        self.scene().sigMouseMoved.connect(self._on_scene_mouse_moved)
        self.refresh_cost_s = 0.0
        # What the last refresh's drawing cost: every paint between it and the
        # refresh before it (a refresh that moves the range paints the plot
        # twice: its data area, then again with the axes' new ticks).
        self.paint_cost_s = 0.0
        self.painted_s = 0.0  # paints since the last refresh, summed
        self._stopped = False
        self._hint: pg.TextItem | None = None

    # ------------------------------------------------------------------ series

    def add_series(
        self,
        name: str,
        color: str | tuple[int, ...],
        *,
        width: float = 1.5,
        symbol: str | None = None,
        fmt: str = "{:.4g}",
        capacity: int = 1024,
        style: Qt.PenStyle = Qt.PenStyle.SolidLine,
        z: float | None = None,
    ) -> None:
        """Create the curve of series ``name`` (once; fed by :meth:`append`).

        ``style`` (e.g. dashed) and ``z`` (a lower value draws beneath the other
        curves) set apart secondary curves such as overlaid past runs.
        """
        curve = self.plot(
            [],
            [],
            name=name,
            pen=pg.mkPen(color, width=width, style=style),
            symbol=symbol,
            symbolBrush=color,  # also for a lone point's symbol (see refresh)
            symbolPen=None,
            symbolSize=6,
        )
        curve.setDownsampling(auto=True, method="peak")
        # One min/max pair per pixel column draws the same envelope as pyqtgraph's
        # default five, at about half the painting cost (two 1M-point curves).
        curve.opts["autoDownsampleFactor"] = 1.0
        curve.setClipToView(True)
        # The engine rejects non-finite losses, so every value is finite.
        curve.setSkipFiniteCheck(True)
        if z is not None:
            curve.setZValue(z)
        self._series[name] = _Series(
            name, curve, np.empty(capacity), np.empty(capacity), fmt=fmt, symbol=symbol
        )
        self._show_legend()

    def remove_series(self, name: str) -> None:
        """Remove series ``name``, its curve and its legend entry (if present)."""
        series = self._series.pop(name, None)
        if series is not None:
            self.removeItem(series.curve)
            self._show_legend()

    def legend_text(self) -> str:
        """The legend under the title as it reads: the series' names, in order."""
        return "   ".join(self._series) if self._legend else ""

    def _show_legend(self) -> None:
        """Name each series under the title, in its line's colour and style.

        Above the data, not in a box inside the view: wherever such a box sits,
        some run's curves pass beneath it (accuracy climbs to the top right,
        loss starts at the top left, overlaid runs go anywhere).
        """
        if not self._legend:
            return
        entries = []
        for series in self._series.values():
            pen = series.curve.opts["pen"]
            dashed = pen.style() != Qt.PenStyle.SolidLine
            line = "\u2505\u2505" if dashed else "\u2501\u2501"
            entries.append(
                f'<span style="color:{pen.color().name()}">{line}</span>&nbsp;'
                f"{html.escape(series.name)}"
            )
        rows = [
            "&nbsp;&nbsp;&nbsp;".join(entries[i : i + LEGEND_PER_ROW])
            for i in range(0, len(entries), LEGEND_PER_ROW)
        ]
        legend = "<br>".join(rows)
        self.setTitle(
            f"<b>{html.escape(self._title)}</b><br>"
            f'<span style="font-size:8pt">{legend}</span>'
        )

    def has_series(self, name: str) -> bool:
        """Whether series ``name`` exists."""
        return name in self._series

    def series_names(self) -> list[str]:
        """Every series, in the order they were added."""
        return list(self._series)

    def append(self, name: str, x: float, y: float) -> None:
        """Add one point; drawn at the next refresh. Non-finite points are skipped.

        The curves skip pyqtgraph's finite check for speed, so a NaN (an empty
        validation split) or an inf (an fp16 overflow) must not reach them.
        """
        if not (math.isfinite(x) and math.isfinite(y)):
            return
        self._series[name].append(x, y)
        if not self._stopped:
            refresher().schedule(self)

    def extend(self, name: str, xs: np.ndarray, ys: np.ndarray) -> None:
        """Add many points at once (history); non-finite points are skipped."""
        xs, ys = np.asarray(xs, float), np.asarray(ys, float)
        keep = np.isfinite(xs) & np.isfinite(ys)
        self._series[name].extend(xs[keep], ys[keep])
        if not self._stopped:
            refresher().schedule(self)

    def replace(self, name: str, xs: np.ndarray, ys: np.ndarray) -> None:
        """Replace every point of series ``name`` (e.g. smoothed anew)."""
        self._series[name].clear()
        self.extend(name, xs, ys)

    def clear_data(self) -> None:
        """Empty every series (the curves stay); the axes follow the next data.

        A zoom into the last run (which turns auto range off) must not leave the
        next run's first points outside the view, or the axes at the old range.
        """
        for series in self._series.values():
            series.clear()
        # Not the last run's axes while the next one starts: an empty view.
        x_range, y_range = self._empty_range
        self.setRange(xRange=x_range, yRange=y_range, padding=0)
        self.enableAutoRange()
        self.refresh()

    def set_empty_hint(self, text: str) -> None:
        """Show ``text`` in the middle of the plot while no series has a point."""
        if self._hint is None:
            view = self.getPlotItem().getViewBox()
            self._hint = pg.TextItem(anchor=(0.5, 0.5), color=(110, 110, 110))
            self._hint.setObjectName("emptyHint")
            # A child of the view box, not of its data: it stays centred in pixels.
            self._hint.setParentItem(view)
            view.sigResized.connect(self._on_view_resized)
            self._on_view_resized(view)
        self._hint.setText(text)
        # Centre each line, not only the block (the text width is its widest line).
        document = self._hint.textItem.document()
        option = document.defaultTextOption()
        option.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        document.setDefaultTextOption(option)
        self._hint.textItem.setTextWidth(document.idealWidth())
        self._update_hint()

    def empty_hint(self) -> str:
        """The hint shown now ("" when there is none or the plot has data)."""
        if self._hint is None or not self._hint.isVisible():
            return ""
        return self._hint.toPlainText()

    def _update_hint(self) -> None:
        if self._hint is not None:
            self._hint.setVisible(not any(s.n for s in self._series.values()))

    @Slot(object)
    def _on_view_resized(self, view: pg.ViewBox) -> None:
        if self._hint is not None:
            self._hint.setPos(view.width() / 2, view.height() / 2)

    def point_count(self, name: str) -> int:
        """Points in series ``name``."""
        return self._series[name].n

    def data(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the x and y values of series ``name``."""
        s = self._series[name]
        return s.xs[: s.n].copy(), s.ys[: s.n].copy()

    def last(self, name: str) -> float | None:
        """The newest y value of series ``name``."""
        s = self._series[name]
        return float(s.ys[s.n - 1]) if s.n else None

    # ------------------------------------------------------------------ drawing

    def showEvent(self, event: QShowEvent) -> None:
        """Draw what arrived while hidden."""
        super().showEvent(event)
        self.refresh()

    def paintEvent(self, event: QPaintEvent) -> None:
        """Paint, and add what it cost to ``painted_s`` (it sets the interval)."""
        started = time.perf_counter()
        super().paintEvent(event)
        self.painted_s += time.perf_counter() - started

    @Slot()
    def refresh(self) -> bool:
        """Hand changed series to pyqtgraph now; whether any had changed."""
        dirty = [s for s in self._series.values() if s.dirty]
        if not dirty:
            return False
        self.paint_cost_s, self.painted_s = self.painted_s, 0.0
        started = time.perf_counter()
        view = self.getPlotItem().getViewBox()
        view.data_changed()
        for s in dirty:
            # Views of the buffers: no copy; later appends write past ``n`` only.
            s.curve.setData(s.xs[: s.n], s.ys[: s.n])
            s.dirty = False
            # A line through one point draws nothing: a lone point gets a dot (the
            # first validation epoch, a one-step run).
            lone = s.n == 1 and s.symbol is None
            if lone != s.lone:
                s.lone = lone
                s.curve.setSymbol("o" if lone else s.symbol)
        # Fit the range now, not when the paint starts: a range changed during
        # a paint makes the axes paint the whole plot a second time.
        view.prepareForPaint()
        self._update_hint()
        self.refresh_cost_s = time.perf_counter() - started
        return True

    @property
    def dirty(self) -> bool:
        """Whether some series has points the curves do not show yet."""
        return any(s.dirty for s in self._series.values())

    def stop_updates(self) -> None:
        """Stop refreshing (the window is closing)."""
        self._stopped = True
        refresher().forget(self)

    def hover_text_at(self, x: float) -> str:
        """What hovering at data coordinate ``x`` shows."""
        parts = []
        x_shown = None
        for s in self._series.values():
            hit = s.value_near(x)
            if hit is None:
                continue
            if x_shown is None:
                x_shown = hit[0]
            parts.append(f"{s.name}: {s.fmt.format(hit[1])}")
        if x_shown is None:
            return ""
        x_text = f"{x_shown:,.0f}" if float(x_shown).is_integer() else f"{x_shown:.2f}"
        return f"{self._x_name} {x_text}\n" + "\n".join(parts)

    @Slot(object)
    def _on_scene_mouse_moved(self, pos: QPointF) -> None:
        view = self.getPlotItem().getViewBox()
        if not view.sceneBoundingRect().contains(pos):
            self._hover_line.setVisible(False)
            self._hover_text.setVisible(False)
            return
        point = view.mapSceneToView(pos)
        text = self.hover_text_at(point.x())
        if not text:
            return
        self._hover_line.setPos(point.x())
        self._hover_line.setVisible(True)
        self._hover_text.setText(text)
        (x0, x1), (_, y1) = view.viewRange()
        # Keep the label inside the view: left of the cursor on the right half.
        anchor_x = 1 if point.x() > (x0 + x1) / 2 else 0
        self._hover_text.setAnchor((anchor_x, 0))
        self._hover_text.setPos(point.x(), y1)
        self._hover_text.setVisible(True)


class Refresher(QObject):
    """The one timer that refreshes every dirty live plot (see the module doc)."""

    def __init__(self) -> None:
        super().__init__()
        # Weak: a plot that is gone (its window closed) is simply not refreshed.
        self._pending: weakref.WeakSet[LivePlot] = weakref.WeakSet()
        self.frames = 0  # ticks that refreshed at least one plot
        self.frame_cost_s = 0.0  # what the last such tick cost, paints included
        # Single-shot, armed by the first new point: an idle window never wakes the
        # GUI thread (each wake-up takes the GIL from a training thread).
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(MIN_INTERVAL_MS)
        self._timer.timeout.connect(self.tick)
        # The next plot of a frame (see STAGGER_MS); its cost adds to the frame's.
        self._stagger = QTimer(self)
        self._stagger.setSingleShot(True)
        self._stagger.setInterval(STAGGER_MS)
        self._stagger.timeout.connect(self.tick)
        self._frame: list[LivePlot] = []  # the frame's plots still to draw
        self._frame_cost_s = 0.0  # of the plots of the frame drawn so far
        self._frame_drawn = False

    def interval(self) -> int:
        """Milliseconds from a new point to the tick that draws it, at most."""
        return self._timer.interval()

    def is_armed(self) -> bool:
        """Whether a tick is due."""
        return self._timer.isActive() or self._stagger.isActive()

    def frame_pending(self) -> bool:
        """Whether the frame under way has plots still to draw (next tick)."""
        return self._stagger.isActive()

    def schedule(self, plot: LivePlot) -> None:
        """Draw ``plot``'s new points at the next tick."""
        self._pending.add(plot)
        if not self._timer.isActive():
            self._timer.start()

    def forget(self, plot: LivePlot) -> None:
        """Do not draw ``plot`` any more (it is closing)."""
        self._pending.discard(plot)
        self._frame = [p for p in self._frame if p is not plot]

    @Slot()
    def tick(self) -> None:
        """Refresh the frame's next dirty, visible plot; the rest follow, then rest.

        A frame takes every plot pending when it starts; points that arrive
        meanwhile wait for the next frame. The interval to the next frame
        follows this one's cost, every plot's update and paint together.
        """
        self._stagger.stop()
        if not self._frame:
            self._frame, self._pending = list(self._pending), weakref.WeakSet()
        drawn: LivePlot | None = None
        while self._frame and drawn is None:
            plot = self._frame.pop(0)
            # Hidden plots keep their data dirty and draw it when shown again.
            if _drawable(plot) and plot.refresh():
                drawn = plot
        if drawn is not None:
            self._frame_drawn = True
            # A plot costs its update plus its painting, measured on the paints
            # its last update caused (this update's paints come later).
            self._frame_cost_s += drawn.refresh_cost_s + drawn.paint_cost_s
        self._frame = [p for p in self._frame if _drawable(p) and p.dirty]
        if self._frame:
            self._stagger.start()
            return
        if len(self._pending) and not self._timer.isActive():
            self._timer.start()  # points that came during the frame
        if not self._frame_drawn:
            return
        cost_s, self._frame_cost_s, self._frame_drawn = self._frame_cost_s, 0.0, False
        self.frames += 1
        self.frame_cost_s = cost_s
        cost_ms = 1000 * cost_s
        interval = int(
            min(MAX_INTERVAL_MS, max(MIN_INTERVAL_MS, COST_FACTOR * cost_ms))
        )
        if interval != self._timer.interval():
            self._timer.setInterval(interval)


def _drawable(plot: LivePlot) -> bool:
    """Not deleted (its window gone) and on screen."""
    return isValid(plot) and plot.isVisible()


_refresher: Refresher | None = None


def refresher() -> Refresher:
    """The shared refresher (created in the GUI thread with the first plot)."""
    global _refresher  # one per process, like the QApplication
    if _refresher is None or not isValid(_refresher):
        _refresher = Refresher()
    return _refresher


# How much the smoothed loss curve keeps of its past at each point
# (TensorBoard-style): the live curve and overlaid past runs use the same.
LOSS_SMOOTHING = 0.8


def ema(values: np.ndarray, beta: float = 0.9) -> np.ndarray:
    """Bias-corrected exponential moving average (as TensorBoard smooths)."""
    return Smoother(beta).feed(values)


class Smoother:
    """The bias-corrected exponential moving average, one point at a time."""

    def __init__(self, beta: float = 0.9) -> None:
        self.beta = beta
        self.reset()

    def reset(self) -> None:
        """Forget every point."""
        self._acc = 0.0
        self._count = 0

    def __call__(self, value: float) -> float:
        """Add ``value``; the smoothed value so far."""
        self._acc = self.beta * self._acc + (1 - self.beta) * value
        self._count += 1
        # beta**count underflows to 0.0 for long runs: the correction is then 1.
        return self._acc / (1 - self.beta**self._count)

    def feed(self, values: np.ndarray) -> np.ndarray:
        """Add many values; their smoothed values."""
        return np.fromiter((self(float(v)) for v in values), float, len(values))
