"""Past runs drawn over the live plots, to compare a run with earlier ones.

Each selected run adds one curve to the loss plot (its loss against the global
step, smoothed as the live "smoothed" curve is, also when that smoothing
changes) and one to the accuracy plot (its validation accuracy against epochs,
``global_step / steps_per_epoch`` as the window plots its own). Overlay curves
are dashed, thinner and drawn beneath the live series, which they never touch.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import Qt

from workbench.core.events import EpochMetrics
from workbench.core.runs.folder import METRICS_FILE
from workbench.core.runs.listing import RunSummary, read_metrics
from workbench.ui.plots.live_plot import LOSS_SMOOTHING, LivePlot, ema

# Distinct from the live colours (blues for loss, orange/green for accuracy).
PALETTE: tuple[tuple[int, int, int], ...] = (
    (148, 103, 189),  # purple
    (214, 39, 40),  # red
    (140, 86, 75),  # brown
    (227, 119, 194),  # pink
    (23, 190, 207),  # cyan
    (188, 189, 34),  # olive
    (127, 127, 127),  # grey
    (31, 119, 180),  # blue
)
MAX_NAME = 40


@dataclass(frozen=True)
class RunCurves:
    """The points a run contributes to the overlay."""

    loss_steps: np.ndarray
    loss: np.ndarray  # raw: smoothed when drawn, by the smoothing of the moment
    val_epochs: np.ndarray
    val_accuracy: np.ndarray  # percent


def steps_per_epoch(epochs: Sequence[EpochMetrics]) -> float:
    """Steps in one epoch, from the epochs a run logged.

    The first epoch that is followed by a later one ran to its end, so its
    ``global_step / (epoch + 1)`` is exact; a run with only one epoch record
    (or only partial ones) uses its last record; 1 when nothing fits.
    """
    valid = [(e.epoch, float(e.global_step)) for e in epochs]
    full = [
        (epoch, step)
        for (epoch, step), (after, _) in itertools.pairwise(valid)
        if after > epoch
    ]
    for epoch, step in full or valid[-1:]:
        if step > 0:
            return step / (epoch + 1)
    return 1.0


def _finite_pairs(
    pairs: Iterable[tuple[float, float]],
) -> tuple[np.ndarray, np.ndarray]:
    finite = [(x, y) for x, y in pairs if math.isfinite(x) and math.isfinite(y)]
    xs = np.array([x for x, _ in finite], dtype=float)
    return xs, np.array([y for _, y in finite], dtype=float)


def run_curves(run: RunSummary) -> RunCurves:
    """Read a run's metrics into overlay curves (a torn last line is skipped)."""
    metrics = read_metrics(run.folder)
    steps, losses = _finite_pairs((s.global_step, s.loss) for s in metrics["step"])
    order = np.argsort(steps, kind="stable")  # a resumed run may repeat steps
    steps, losses = steps[order], losses[order]
    per_epoch = steps_per_epoch(metrics["epoch"])
    epochs, accuracy = _finite_pairs(
        (e.global_step, e.val_accuracy) for e in metrics["epoch"]
    )
    return RunCurves(steps, losses, epochs / per_epoch, 100 * accuracy)


class RunOverlay:
    """Draws selected past runs on the window's loss and accuracy plots.

    Parameters
    ----------
    loss_plot : LivePlot
        The plot of loss against the global step.
    accuracy_plot : LivePlot
        The plot of accuracy against epochs.
    smoothing : float
        EMA factor for the overlaid loss (raw losses of several runs are noise).
    """

    def __init__(
        self,
        loss_plot: LivePlot,
        accuracy_plot: LivePlot,
        *,
        smoothing: float = LOSS_SMOOTHING,
    ) -> None:
        self.loss_plot = loss_plot
        self.accuracy_plot = accuracy_plot
        self.smoothing = smoothing
        self._runs: list[RunSummary] = []
        self._names: list[str] = []  # the curve of self._runs[i] is self._names[i]
        # Re-reading a long run's metrics on every selection change would stall
        # the GUI: cache by file size and mtime (a live run's file grows).
        self._cache: dict[str, tuple[tuple[int, int], RunCurves]] = {}

    def show(self, runs: Sequence[RunSummary]) -> None:
        """Replace the overlaid runs by ``runs`` (empty: none).

        Parameters
        ----------
        runs : Sequence[RunSummary]
            The runs to draw, each in the next palette colour.
        """
        self.clear()
        self._runs = list(runs)
        for index, run in enumerate(self._runs):
            curves = self._curves(run)
            name = self._unique_name(run)
            color = PALETTE[index % len(PALETTE)]
            dashed = Qt.PenStyle.DashLine
            self.loss_plot.add_series(name, color, width=1.5, style=dashed, z=-1)
            self.loss_plot.extend(name, curves.loss_steps, self._smoothed(curves))
            self.accuracy_plot.add_series(
                name,
                color,
                width=1.5,
                style=dashed,
                z=-1,
                symbol="t",  # a one-epoch run is a single point
                fmt="{:.2f}%",
            )
            self.accuracy_plot.extend(name, curves.val_epochs, curves.val_accuracy)
            self._names.append(name)
        # Keep only what is shown: a million-step run holds megabytes of points.
        self._cache = {r.id: self._cache[r.id] for r in self._runs}
        self.loss_plot.refresh()
        self.accuracy_plot.refresh()

    def set_smoothing(self, smoothing: float) -> None:
        """Smooth every overlaid run's loss by ``smoothing`` (all points anew).

        Parameters
        ----------
        smoothing : float
            EMA factor, as the live curve's.
        """
        if smoothing == self.smoothing:
            return
        self.smoothing = smoothing
        for run, name in zip(self._runs, self._names, strict=True):
            curves = self._curves(run)
            self.loss_plot.replace(name, curves.loss_steps, self._smoothed(curves))
        self.loss_plot.refresh()

    def _smoothed(self, curves: RunCurves) -> np.ndarray:
        return ema(curves.loss, self.smoothing) if len(curves.loss) else curves.loss

    def clear(self) -> None:
        """Remove every overlay curve; the live series stay."""
        for name in self._names:
            self.loss_plot.remove_series(name)
            self.accuracy_plot.remove_series(name)
        self._names = []
        self._runs = []

    def redraw(self) -> None:
        """Draw the same runs again (after the window emptied every series)."""
        self.show(list(self._runs))

    def runs(self) -> list[RunSummary]:
        """The runs shown, in palette order."""
        return list(self._runs)

    def curve_names(self) -> list[str]:
        """The overlay series' names (one per run, in each of the two plots)."""
        return list(self._names)

    def _curves(self, run: RunSummary) -> RunCurves:
        path = run.folder.path / METRICS_FILE
        try:
            stat = path.stat()
            key = (stat.st_size, stat.st_mtime_ns)
        except OSError:
            key = (-1, -1)
        cached = self._cache.get(run.id)
        if cached is not None and cached[0] == key:
            return cached[1]
        curves = run_curves(run)
        self._cache[run.id] = (key, curves)
        return curves

    def _unique_name(self, run: RunSummary) -> str:
        title = run.title
        if len(title) > MAX_NAME:
            title = title[: MAX_NAME - 1] + "…"
        name = title
        # Never collide with a live series ("loss") or a namesake run.
        if self._taken(name):
            name = f"{title} ({run.id[-4:]})"
        n = 2
        while self._taken(name):
            name = f"{title} ({run.id[-4:]}, {n})"
            n += 1
        return name

    def _taken(self, name: str) -> bool:
        return self.loss_plot.has_series(name) or self.accuracy_plot.has_series(name)
