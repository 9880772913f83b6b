"""What logging every step costs: the automatic interval against every 10 steps.

``log_every=None`` (the default) is automatic: every step of a run of up to 5,000
steps, so a live curve shows them all. The promise: within 3% of ``log_every=10``.
Each logged step syncs the device for the loss and (in the window) crosses to the
GUI thread; the ledger writes it to ``metrics.jsonl``. The layers' health (every
layer's norms, the costly part) is sampled every 10 steps whatever the interval,
and the live plots share one paint budget
(``workbench/ui/plots/live_plot.py``), so neither follows the log rate. This
prints training images per second of the whole run (wall time from the first
step to the end, logging and validation included: what the user waits for)
with the automatic interval and with ``log_every=10``:

- ``headless``: the engine in a for loop writing the run ledger, as
  ``ptcore-workbench train`` does;
- ``window``: the window's Start (trainer thread, live plots, ledger).

Conditions alternate within each round (their order swaps every round), in one
process; the ratio auto / every-10 is the median of the per-round ratios. Target:
within 3% (ratio >= 0.97). Also printed, steadier on a shared machine than wall
time: the process's CPU milliseconds per image (headless) and the GUI thread's
share of a core with the live plots' frames (window).

Data: real MNIST from ``--data-dir`` when present (one epoch of the default
small-cnn at batch 256, 235 steps), else the bundled digits.

Run: ``.venv/bin/python bench/log_interval_bench.py`` (about 5 minutes on 2
cores; ``--steps 100`` for shorter runs).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gui_bench import WindowProbe, cpu_pressure, load_data
from PySide6.QtWidgets import QApplication

from workbench.core.config import TrainConfig
from workbench.core.data.registry import ImageArrays
from workbench.core.events import StepMetrics, TrainResult
from workbench.core.runs.folder import RunFolder
from workbench.core.runs.recorder import RunRecorder
from workbench.core.train.engine import iter_fit, prepare_run
from workbench.ui.plots import live_plot
from workbench.ui.window import state as window_state

CONDITIONS = {"auto": None, "every 10": 10}


def wall_speed(result: TrainResult, images: int) -> float:
    """Images per second of the whole run, logging and validation included."""
    return images / result.seconds


def cpu_seconds() -> float:
    """CPU seconds of this process so far (every thread)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def headless(cfg: TrainConfig, arrays: ImageArrays) -> tuple[float, int, float]:
    """(images/s, logged steps, CPU ms per image) as the command line trains."""
    run = prepare_run(cfg, arrays=arrays)
    cpu0 = cpu_seconds()
    recorder = RunRecorder(RunFolder.create(cfg, origin="bench"), 0)
    recorder.start(run)
    result, logged = None, 0
    for event in iter_fit(run):
        recorder.on_event(event, run)
        logged += isinstance(event, StepMetrics)
        if isinstance(event, TrainResult):
            result = event
    assert result is not None
    images = trained_images(result, cfg, arrays)
    return wall_speed(result, images), logged, 1000 * (cpu_seconds() - cpu0) / images


def trained_images(result: TrainResult, cfg: TrainConfig, arrays: ImageArrays) -> int:
    """Images the run trained on (all of them for a whole epoch)."""
    return min(result.global_step * cfg.batch_size, len(arrays.train_labels))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_data = Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist"
    ap.add_argument("--data-dir", default=str(default_data))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-window", action="store_true")
    ap.add_argument("--steps", type=int, help="train this many steps, not 1 epoch")
    args = ap.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="log-bench-"))
    os.environ["PTCORE_RUNS_DIR"] = str(scratch / "runs")
    window_state.use_settings_file(scratch / "settings.ini")
    dataset, arrays = load_data(args.data_dir)
    base = TrainConfig(
        dataset=dataset, data_dir=args.data_dir, epochs=1, max_steps=args.steps
    )
    length = f"{args.steps} steps" if args.steps else "1 epoch"
    print(f"{dataset}, {base.model}, batch {base.batch_size}, {length}")
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
    extra: dict[tuple[str, str], list[float]] = {}
    for r in range(args.rounds):
        for where in ("headless", "window") if probe else ("headless",):
            order = list(CONDITIONS.items())
            for name, log_every in order if r % 2 == 0 else order[::-1]:
                cfg = base.replace(log_every=log_every)
                if where == "headless":
                    speed, logged, cpu_ms = headless(cfg, arrays)
                    note = f"{cpu_ms:5.2f} CPU ms/img"
                    extra.setdefault((where, name), []).append(cpu_ms)
                else:
                    frames = live_plot.refresher().frames
                    probe.run(cfg)
                    result = probe.results[-1]
                    speed = wall_speed(result, trained_images(result, cfg, arrays))
                    logged = window_logged(probe)
                    share = probe.gui_cpu_share[-1]
                    note = (
                        f"GUI thread {share:.3f} core, "
                        f"{live_plot.refresher().frames - frames} plot frames"
                    )
                    extra.setdefault((where, name), []).append(share)
                figures.setdefault((where, name), []).append(speed)
                print(
                    f"round {r + 1} {where:8} {name:8} {speed:8,.0f} img/s "
                    f"({logged} logged steps; {note})",
                    flush=True,
                )
    print(f"CPU pressure after: {cpu_pressure()}\n")
    for where in ("headless", "window") if probe else ("headless",):
        auto, ten = figures[(where, "auto")], figures[(where, "every 10")]
        ratios = [a / t for a, t in zip(auto, ten, strict=True)]
        ratio = statistics.median(ratios)
        unit = "CPU ms/img" if where == "headless" else "GUI core share"
        steady = (
            f"{unit} auto {statistics.median(extra[(where, 'auto')]):.3f}, "
            f"every 10 {statistics.median(extra[(where, 'every 10')]):.3f}"
        )
        print(
            f"{where:8} auto {statistics.median(auto):8,.0f} img/s, every 10 "
            f"{statistics.median(ten):8,.0f} img/s, ratio {ratio:.3f} "
            f"(rounds {', '.join(f'{x:.3f}' for x in ratios)}); {steady}"
        )
    if probe:
        probe.window.close()
    app.processEvents()


def window_logged(probe: WindowProbe) -> int:
    """Logged steps of the window's last run (points of its loss curve)."""
    return probe.window.loss_plot.point_count("loss")


if __name__ == "__main__":
    main()
