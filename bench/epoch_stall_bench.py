"""Epoch ends in the window: how long do they block the GUI thread?

A 20-epoch run of the default model on the bundled ``digits`` (an epoch every
half second or so) is trained with the window's Start, in the real window,
shown on the offscreen platform. A 10 ms ``QTimer`` (``Qt.PreciseTimer``) ticks
in the GUI thread meanwhile; the gaps between its ticks are what a click or a
repaint would have waited. Printed per condition: the count of gaps over 40 ms,
the 99th percentile and the worst gap. Targets with the default tab (Training
curves) visible: p99 < 25 ms, worst < 60 ms.

Conditions (alternated round by round in one process, so load drifts hit each
alike):

``curves``
    The default tab, Training curves, visible.
``evaluation``
    The Evaluation tab visible (confusion matrix and per-class accuracy
    redrawn every epoch).
``evaluation+cell``
    The Evaluation tab visible with a cell selected after the first epoch, so
    the gallery of that cell's images is rebuilt every epoch too.
``health``
    The Layer health tab visible (norm plots, the weight histogram).

The machine may be shared: the Linux CPU pressure is printed before and after,
and each run's wall time (an unloaded 2-core machine trains the 20 epochs in
about 10 s); gaps measured under load are inflated. So each gap is also printed
as the GUI thread's own CPU time within it ("busy"): what the window's code
blocked, without the time the thread waited for a CPU.

Run: ``.venv/bin/python bench/epoch_stall_bench.py`` (``--rounds 1`` for a
quick look; ``--conditions curves`` for one).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from gui_bench import WindowProbe, cpu_pressure
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from workbench.core.config import TrainConfig
from workbench.core.data.sources import load_arrays
from workbench.core.events import Evaluation
from workbench.core.runs.folder import RUNS_ENV
from workbench.ui.window import state as window_state

CONDITIONS = ("curves", "evaluation", "evaluation+cell", "health")
PAGES = {
    "curves": "curvesPage",
    "evaluation": "evaluationPage",
    "evaluation+cell": "evaluationPage",
    "health": "healthPage",
}
LONG_MS = 40.0


class CellPicker:
    """Selects a cell of the matrix once the first epoch's arrives (a user's click)."""

    def __init__(self, window) -> None:
        self.window = window
        self.armed = False
        window.controller.event.connect(self._on_controller_event)

    def _on_controller_event(self, event: object) -> None:
        if self.armed and isinstance(event, Evaluation):
            self.armed = False
            # After the window's own handlers: the matrix is there then.
            QTimer.singleShot(0, self._pick)

    def _pick(self) -> None:
        # A diagonal cell: the most images, the biggest gallery to rebuild.
        self.window.evaluation_panel.select_cell(1, 1)


class BusyProbe(WindowProbe):
    """Also records the GUI thread's CPU time at every tick."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.cpu_ticks: list[float] = []
        self.timer.timeout.connect(self._on_timer_timeout_cpu)

    def _on_timer_timeout_cpu(self) -> None:
        self.cpu_ticks.append(time.thread_time())

    def run_busy(self, cfg: TrainConfig) -> tuple[np.ndarray, np.ndarray]:
        """Wall gaps and the GUI thread's CPU time within each, in ms."""
        self.cpu_ticks = []
        _ips, gaps = self.run(cfg)
        busy = np.diff(np.asarray(self.cpu_ticks)) * 1000.0
        n = min(len(gaps), len(busy))
        return gaps[:n], busy[:n]


def show_tab(window, condition: str) -> None:
    """Make the condition's tab the current one."""
    tabs = window.tabs
    for i in range(tabs.count()):
        if tabs.widget(i).objectName() == PAGES[condition]:
            tabs.setCurrentIndex(i)
            QApplication.processEvents()
            return
    raise LookupError(PAGES[condition])


def summary(gaps: np.ndarray) -> dict[str, float]:
    """Gaps over 40 ms, p50, p99 and the worst gap, in ms."""
    p50, p99 = np.percentile(gaps, [50, 99])
    return {
        "ticks": len(gaps),
        "long": int((gaps > LONG_MS).sum()),
        "p50_ms": float(p50),
        "p99_ms": float(p99),
        "max_ms": float(gaps.max()),
    }


def main() -> None:
    """Measure and print; ``--json`` also writes the figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--model", default=TrainConfig().model)
    ap.add_argument("--conditions", default=",".join(CONDITIONS))
    ap.add_argument("--json", metavar="PATH", help="also write the figures here")
    args = ap.parse_args()
    conditions = args.conditions.split(",")

    print(f"CPU pressure before: {cpu_pressure()}")
    arrays = load_arrays("digits")
    window_state.use_settings_file(
        Path(tempfile.mkdtemp(prefix="stall-bench-")) / "settings.ini"
    )
    # Runs of its own: none left in the user's folder, and no earlier interrupted
    # run there asks to be resumed (a dialog that would wait forever).
    os.environ[RUNS_ENV] = tempfile.mkdtemp(prefix="bench-runs-")
    app = QApplication.instance() or QApplication([])
    from workbench.ui.main_window import MainWindow

    window = MainWindow()
    window.resize(1500, 920)
    window.show()
    probe = BusyProbe(window, arrays, "digits", "")
    picker = CellPicker(window)
    cfg = TrainConfig(dataset="digits", model=args.model, epochs=args.epochs)
    show_tab(window, "curves")
    probe.run(cfg.replace(epochs=1))  # warm-up: thread pools, first paints

    gaps: dict[str, list[np.ndarray]] = {c: [] for c in conditions}
    busy: dict[str, list[np.ndarray]] = {c: [] for c in conditions}
    walls: dict[str, list[float]] = {c: [] for c in conditions}
    for r in range(args.rounds):
        order = conditions[r % len(conditions) :] + conditions[: r % len(conditions)]
        for condition in order:
            show_tab(window, condition)
            picker.armed = condition == "evaluation+cell"
            started = time.perf_counter()
            g, b = probe.run_busy(cfg)
            walls[condition].append(time.perf_counter() - started)
            gaps[condition].append(g)
            busy[condition].append(b)
            s, sb = summary(g), summary(b)
            print(
                f"  round {r + 1} {condition:16} {walls[condition][-1]:5.1f} s: "
                f"{s['long']} gaps > {LONG_MS:.0f} ms, p99 {s['p99_ms']:.1f} ms, "
                f"worst {s['max_ms']:.1f} ms; busy: {sb['long']} > "
                f"{LONG_MS:.0f} ms, p99 {sb['p99_ms']:.1f}, worst {sb['max_ms']:.1f}"
            )
    window.close()
    app.processEvents()
    print(f"\nCPU pressure after: {cpu_pressure()}")

    print(
        f"\n{args.epochs}-epoch {args.model} runs on digits, {args.rounds} per "
        "condition: gaps of a 10 ms timer in the GUI thread"
    )
    print(
        f"{'condition':16} {'run s':>6} {'ticks':>6} {'>40ms/run':>9} "
        f"{'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} | busy: {'>40ms/run':>9} "
        f"{'p99 ms':>7} {'max ms':>7}"
    )
    report: dict[str, object] = {"epochs": args.epochs, "model": args.model}
    for condition in conditions:
        runs = len(gaps[condition])
        s = summary(np.concatenate(gaps[condition]))
        sb = summary(np.concatenate(busy[condition]))
        wall = float(np.median(walls[condition]))
        print(
            f"{condition:16} {wall:6.1f} {s['ticks']:6d} {s['long'] / runs:9.1f} "
            f"{s['p50_ms']:7.1f} {s['p99_ms']:7.1f} {s['max_ms']:7.1f} | "
            f"{'':6}{sb['long'] / runs:9.1f} {sb['p99_ms']:7.1f} {sb['max_ms']:7.1f}"
        )
        report[condition] = {
            **s,
            "long_per_run": s["long"] / runs,
            "run_s": wall,
            "busy": sb,
        }
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
