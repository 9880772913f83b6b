"""A view box whose automatic range moves in steps, not with every new point.

pyqtgraph's auto range fits the data exactly, so a live curve changes the view
at every frame, and each change makes both axes rebuild their ticks, labels and
grid: most of a frame's paint, in the GUI thread. Here the range stays while
the data fits it, grows with room to spare when the data leaves it, and fits
the data again when the data has shrunk to a small part of it (a new run). The
axes' cached pixmaps then serve most frames. Zooming, panning and the
auto-range button work as in pyqtgraph.
"""

from __future__ import annotations

import math

import pyqtgraph as pg

# Room added on the side the data left by, as a share of the data's span: a
# growing curve (x: steps, epochs) steps at 1.5x, 2.25x, ... of its length.
# Values (y) get none (an accuracy axis would pass 100%).
HEADROOM = (0.5, 0.0)
# The data spanning less than this share of the range refits it (a new run).
REFIT_BELOW = 0.4

Range = tuple[float, float]


def stepped_range(
    current: Range,
    target: Range,
    fresh: bool,
    headroom: float = HEADROOM[0],
    padding: float = 0.0,
) -> Range:
    """The range to show: ``current`` while the data fits it.

    ``target`` is pyqtgraph's fit: the data's bounds widened by ``padding`` of
    their span on each side (a padding that grows with the data, so the test of
    fit uses the data's own bounds).
    """
    lo, hi = target
    c_lo, c_hi = current
    span = hi - lo
    if fresh or not (span > 0 and math.isfinite(span)):
        return target
    pad = padding * span / (1 + 2 * padding)
    out_lo, out_hi = lo + pad < c_lo, hi - pad > c_hi
    if not (out_lo or out_hi):
        return current if span >= REFIT_BELOW * (c_hi - c_lo) else target
    new_lo = lo - headroom * span if out_lo else min(lo, c_lo)
    new_hi = hi + headroom * span if out_hi else max(hi, c_hi)
    # Room never crosses zero: a loss or an accuracy has no negative values.
    if lo + pad >= 0 > new_lo:
        new_lo = 0.0
    if hi - pad <= 0 < new_hi:
        new_hi = 0.0
    return new_lo, new_hi


class SteppedViewBox(pg.ViewBox):
    """``pg.ViewBox`` whose auto range follows :func:`stepped_range`.

    Fits are exact from when auto range is switched on (a new plot, a cleared
    one, the "A" button) until new data follows a fit (:meth:`data_changed`):
    pyqtgraph may fit twice for one change (first to the points a zoom had
    clipped to, then to all), and both must be exact. Later fits step.
    """

    def __init__(self, *args, **kwargs) -> None:
        self._fresh = [True, True]
        self._fitted = [False, False]
        super().__init__(*args, **kwargs)

    def data_changed(self) -> None:
        """New points arrived: after an exact fit, the next ones step."""
        self._fresh = [
            fresh and not fitted
            for fresh, fitted in zip(self._fresh, self._fitted, strict=True)
        ]

    def enableAutoRange(self, axis=None, enable=True, x=None, y=None):
        self._fresh, self._fitted = [True, True], [False, False]
        super().enableAutoRange(axis, enable, x, y)

    def setRange(self, rect=None, xRange=None, yRange=None, **kwargs):
        if self._updatingRange:  # called by updateAutoRange with the data's fit
            xRange, yRange = self._stepped(0, xRange), self._stepped(1, yRange)
        super().setRange(rect, xRange, yRange, **kwargs)

    def _stepped(self, axis: int, target):
        """The range ``axis`` shows for the data's fit ``target`` (None: unset)."""
        if target is None:
            return None
        stepped = stepped_range(
            tuple(self.viewRange()[axis]),
            tuple(target),
            self._fresh[axis],
            HEADROOM[axis],
            self.suggestPadding(axis),
        )
        self._fitted[axis] = True
        return stepped
