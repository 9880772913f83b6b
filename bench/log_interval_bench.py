"""What logging every step costs: the automatic interval against every 10 steps.

``log_every=None`` is automatic: every step of a run of up to 5,000 steps, so a
live curve shows them all; it becomes the default once it costs within 3% of
``log_every=10`` (the default today). Each logged step syncs the device for the loss,
measures every layer's gradient and weight norm, and (in the window) crosses to
the GUI thread; the ledger writes both to ``metrics.jsonl``. This prints training
images per second of the whole run (wall time from the first step to the end,
logging and validation included: what the user waits for) with the automatic
interval and with ``log_every=10``:

- ``headless``: the engine in a for loop writing the run ledger, as
  ``ptcore-workbench train`` does;
- ``window``: the window's Start (trainer thread, live plots, ledger).

Conditions alternate within each round, in one process; the ratio auto / every-10
is the median of the per-round ratios. Target: within 3% (ratio >= 0.97).

Data: real MNIST from ``--data-dir`` when present (one epoch of the default
small-cnn at batch 256, 235 steps), else the bundled digits.

Run: ``.venv/bin/python bench/log_interval_bench.py`` (about 5 minutes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gui_bench import WindowProbe, cpu_pressure, load_data
from PySide6.QtWidgets import QApplication

from workbench.core.config import TrainConfig
from workbench.core.data import ImageArrays
from workbench.core.engine import iter_fit, prepare_run
from workbench.core.events import StepMetrics, TrainResult
from workbench.core.runs import RunFolder, RunRecorder
from workbench.ui import window_state

CONDITIONS = {"auto": None, "every 10": 10}


def wall_speed(result: TrainResult, images: int) -> float:
    """Images per second of the whole run, logging and validation included."""
    return images / result.seconds


def headless(cfg: TrainConfig, arrays: ImageArrays) -> tuple[float, int]:
    """(images/s, logged steps) of ``cfg`` trained as the command line does."""
    run = prepare_run(cfg, arrays=arrays)
    recorder = RunRecorder(RunFolder.create(cfg, origin="bench"), 0)
    recorder.start(run)
    result, logged = None, 0
    for event in iter_fit(run):
        recorder.on_event(event, run)
        logged += isinstance(event, StepMetrics)
        if isinstance(event, TrainResult):
            result = event
    assert result is not None
    return wall_speed(result, len(arrays.train_labels)), logged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_data = Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist"
    ap.add_argument("--data-dir", default=str(default_data))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-window", action="store_true")
    args = ap.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="log-bench-"))
    os.environ["PTCORE_RUNS_DIR"] = str(scratch / "runs")
    window_state.use_settings_file(scratch / "settings.ini")
    dataset, arrays = load_data(args.data_dir)
    base = TrainConfig(dataset=dataset, data_dir=args.data_dir, epochs=1)
    print(f"{dataset}, {base.model}, batch {base.batch_size}, 1 epoch")
    print(f"CPU pressure before: {cpu_pressure()}")

    app = QApplication.instance() or QApplication([])
    probe = None
    if not args.no_window:
        from workbench.ui.main_window import MainWindow

        window = MainWindow()
        window.resize(1600, 1000)
        window.show()
        probe = WindowProbe(window, arrays, dataset, args.data_dir)

    figures: dict[tuple[str, str], list[float]] = {}
    for r in range(args.rounds):
        for where in ("headless", "window") if probe else ("headless",):
            for name, log_every in CONDITIONS.items():
                cfg = base.replace(log_every=log_every)
                if where == "headless":
                    speed, logged = headless(cfg, arrays)
                else:
                    probe.run(cfg)
                    speed = wall_speed(probe.results[-1], len(arrays.train_labels))
                    logged = window_logged(probe)
                figures.setdefault((where, name), []).append(speed)
                print(
                    f"round {r + 1} {where:8} {name:8} {speed:8,.0f} img/s "
                    f"({logged} logged steps)",
                    flush=True,
                )
    print(f"CPU pressure after: {cpu_pressure()}\n")
    for where in ("headless", "window") if probe else ("headless",):
        auto, ten = figures[(where, "auto")], figures[(where, "every 10")]
        ratio = statistics.median(a / t for a, t in zip(auto, ten, strict=True))
        print(
            f"{where:8} auto {statistics.median(auto):8,.0f} img/s, every 10 "
            f"{statistics.median(ten):8,.0f} img/s, ratio {ratio:.3f}"
        )
    if probe:
        probe.window.close()
    app.processEvents()


def window_logged(probe: WindowProbe) -> int:
    """Logged steps of the window's last run (points of its loss curve)."""
    return probe.window.loss_plot.point_count("loss")


if __name__ == "__main__":
    main()
