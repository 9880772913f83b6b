"""How long the parallel-coordinates plot takes to draw a sweep of 200 trials.

Builds 200 Optuna trials over four settings (two rates on a log scale, a batch
size and an optimizer; a third pruned, with reported accuracies), then times
what the window does when a sweep is opened (a new plot) and when its next
trial comes (the same plot): the axes and lines
(:mod:`workbench.core.tuning.coordinates`), ``show_lines`` and one paint of
the widget at 900x400 (``grab``). Prints the median and the worst of 20 each.
Target (issue 35): under 100 ms.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python bench/parallel_coordinates_bench.py``
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution
from optuna.trial import TrialState
from PySide6.QtWidgets import QApplication

from workbench.core.tuning.coordinates import axes_for, lines_for
from workbench.ui.plots.parallel_coordinates import ParallelCoordinates

TRIALS = 200
REPEATS = 20


def trials(count: int) -> list[optuna.trial.FrozenTrial]:
    rng = np.random.default_rng(0)
    dists = {
        "lr": FloatDistribution(1e-5, 1.0, log=True),
        "weight_decay": FloatDistribution(1e-6, 1e-2, log=True),
        "batch_size": CategoricalDistribution((32, 64, 128, 256)),
        "optimizer": CategoricalDistribution(("sgd", "adam", "adamw")),
    }
    made = []
    for number in range(count):
        params = {
            "lr": float(10 ** rng.uniform(-5, 0)),
            "weight_decay": float(10 ** rng.uniform(-6, -2)),
            "batch_size": int(rng.choice((32, 64, 128, 256))),
            "optimizer": str(rng.choice(("sgd", "adam", "adamw"))),
        }
        accuracy = float(0.5 + 0.45 * rng.random())
        pruned = number % 3 == 0
        trial = optuna.trial.create_trial(
            params=params,
            distributions=dists,
            value=None if pruned else accuracy,
            state=TrialState.PRUNED if pruned else TrialState.COMPLETE,
            intermediate_values={1: accuracy},
        )
        trial.number = number
        made.append(trial)
    return made


def draw(plot: ParallelCoordinates, made: list) -> float:
    started = time.perf_counter()
    axes = axes_for(made)
    plot.show_lines(axes, lines_for(made, axes))
    plot.grab()
    return (time.perf_counter() - started) * 1000


def main() -> int:
    app = QApplication.instance() or QApplication([])
    made = trials(TRIALS)
    first, again = [], []
    for _ in range(REPEATS):
        plot = ParallelCoordinates()
        plot.resize(900, 400)
        plot.show()
        app.processEvents()
        first.append(draw(plot, made))  # a sweep opened: axes and lines
        again.append(draw(plot, made))  # its next trial: the same axes
        plot.close()
        plot.deleteLater()
        app.processEvents()
    for what, times in (("opened", first), ("next trial", again)):
        median, worst = statistics.median(times), max(times)
        print(f"{TRIALS} trials, {what}: median {median:.1f} ms, worst {worst:.1f} ms")
    met = statistics.median(first) < 100
    print(f"target under 100 ms: {'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
