"""What a live plot's repaint costs, with its grid on the view or in the axes.

A ``LivePlot`` (700x280, offscreen platform, really painting) holds a
120-point curve. Two repaints are timed (event loop processed until painted):

``rebuild``
    The view's x and y ranges both changed, as when an epoch's point extends
    a curve: both axes draw their ticks and labels again.
``steady``
    Nothing but the plot changed (a new point inside the range).

Two grids alternate, plot by plot: ``view`` (``ViewGrid``, what the window
uses: lines painted at every frame) and ``axes`` (pyqtgraph's
``showGrid``: lines recorded in each axis's picture, re-rendered with it).

Run: ``.venv/bin/python bench/plot_paint_bench.py`` (about 20 s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from PySide6.QtWidgets import QApplication

from workbench.ui.plots.live_plot import GRID_ALPHA, LivePlot


def make_plot(app: QApplication, grid: str) -> LivePlot:
    plot = LivePlot("Loss", "step", "loss")
    plot.resize(700, 280)
    plot.show()
    plot.add_series("loss", (30, 100, 200))
    for i in range(120):
        plot.append("loss", i, 2.0 / (1 + i / 10))
    if grid == "axes":
        plot.grid.setVisible(False)
        plot.showGrid(x=True, y=True, alpha=GRID_ALPHA)
    plot.refresh()
    app.processEvents()
    return plot


def time_repaints(app: QApplication, plot: LivePlot, count: int) -> dict[str, list]:
    view = plot.getPlotItem().getViewBox()
    times: dict[str, list] = {"rebuild": [], "steady": []}
    for k in range(count):
        view.setRange(xRange=(0, 100 + 10 * k), yRange=(0, 2 + 0.1 * k), padding=0)
        started = time.perf_counter()
        app.processEvents()
        times["rebuild"].append(1000 * (time.perf_counter() - started))
    for _ in range(count):
        plot.append("loss", 60.5, 1.0)  # inside the range: nothing moves
        plot.refresh()
        started = time.perf_counter()
        app.processEvents()
        times["steady"].append(1000 * (time.perf_counter() - started))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--repaints", type=int, default=40)
    args = parser.parse_args()
    app = QApplication([])
    results = {g: {"rebuild": [], "steady": []} for g in ("view", "axes")}
    for _ in range(args.rounds):
        for grid in ("view", "axes"):
            plot = make_plot(app, grid)
            time_repaints(app, plot, 5)  # warm-up
            for kind, times in time_repaints(app, plot, args.repaints).items():
                results[grid][kind].extend(times)
            plot.close()
    print(f"LivePlot 700x280, 120 points, {args.rounds} rounds alternating (ms):")
    print(f"{'grid':6} {'repaint':8} {'p50':>6} {'p95':>6}")
    for grid, kinds in results.items():
        for kind, times in kinds.items():
            p95 = float(np.percentile(times, 95))
            print(f"{grid:6} {kind:8} {statistics.median(times):6.2f} {p95:6.2f}")


if __name__ == "__main__":
    main()
