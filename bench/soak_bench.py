"""The window under long use: memory and threads over many runs, opens and fine-tunes.

Drives the real ``MainWindow`` (offscreen) through ``--cycles`` cycles of New
run, Start, Pause, a freeze change while paused, Resume, Stop, with
``--opens`` checkpoint opens (File > Open checkpoint, the dialog answering an
earlier run's checkpoint) and ``--fine-tunes`` fine-tunes on my digits (the
Draw tab) spread over them. The driver is ``tests/ui/soak_driver.py``, the
same one ``tests/ui/test_soak.py`` runs with fewer cycles and the same checks.

Prints one line per cycle (resident memory, its change since the warm-up,
threads of the process and Python threads, seconds), a text curve of the
memory, then the verdict. The promises:

* resident memory (``VmRSS``) grows less than 50 MB after the first 5 cycles;
* after every later cycle the process has the threads it had after the first 5
  (native threads from ``/proc/self/task`` and ``threading.active_count()``);
* every replaced run is freed: after each cycle only the current run is alive;
* Qt says no warning, critical or fatal message;
* every run folder is complete: ``run.json`` with a final status,
  ``metrics.jsonl`` with the steps, a checkpoint that loads at the run's last
  step, and the user's pause, freeze change, resume and stop in ``events.jsonl``.

Cycles are tiny runs on the bundled digits (a few steps each), so one takes a
second or two on 2 cores; on a machine busy with other work they take longer
(the CPU pressure is printed before and after). Exit status 0 when every
promise holds.

Run: ``.venv/bin/python bench/soak_bench.py`` (2-3 minutes on 2 cores;
``--cycles 10 --opens 3 --fine-tunes 2`` for a quick look).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cpu_pressure import cpu_pressure  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from tests.ui.soak_driver import WARM_UP, Sample, SoakDriver, wait_until  # noqa: E402


def curve(samples: list[Sample], width: int = 50) -> list[str]:
    """Resident memory per cycle as a bar over the smallest value seen."""
    low = min(s.rss_kb for s in samples)
    high = max(s.rss_kb for s in samples)
    span = max(high - low, 1)
    lines = [f"  RSS per cycle, bar from {low / 1024:.1f} to {high / 1024:.1f} MB"]
    for s in samples:
        bar = "#" * max(1, round(width * (s.rss_kb - low) / span))
        lines.append(f"  {s.cycle:3d} {bar}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--opens", type=int, default=20)
    parser.add_argument("--fine-tunes", type=int, default=10)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="soak-"))
    for variable, name in (
        ("PTCORE_RUNS_DIR", "runs"),
        ("PTCORE_MY_DIGITS_DIR", "my-digits"),
        ("PTCORE_DATA_DIR", "data"),
    ):
        os.environ[variable] = str(scratch / name)

    app = QApplication([])
    from workbench.ui.main_window import MainWindow
    from workbench.ui.window import state as window_state

    window_state.use_settings_file(scratch / "settings.ini")
    print(f"CPU pressure before: {cpu_pressure()}")
    print(
        f"{args.cycles} cycles, {args.opens} opens, {args.fine_tunes} fine-tunes; "
        f"baseline after cycle {WARM_UP}; run folders in {scratch / 'runs'}"
    )
    window = MainWindow()
    window.show()
    wait_until(window.data_panel.is_loaded, "the data")
    driver = SoakDriver(window)
    print("cycle   RSS MB  since 5 threads  py runs     s  did")

    def show(sample: Sample) -> None:
        since = ""
        if sample.cycle >= WARM_UP:
            since = f"{(sample.rss_kb - driver.report.baseline.rss_kb) / 1024:+8.1f}"
        print(
            f"{sample.cycle:5d} {sample.rss_kb / 1024:8.1f} {since:>8} "
            f"{sample.tasks:7d} {sample.py_threads:3d} {sample.runs_alive:4d} "
            f"{sample.seconds:5.1f}  "
            f"{sample.did}",
            flush=True,
        )

    started = time.perf_counter()
    report = driver.run(args.cycles, args.opens, args.fine_tunes, on_sample=show)
    seconds = time.perf_counter() - started
    window.close()
    app.processEvents()
    print("\n".join(curve(report.samples)))
    threads = sorted({s.tasks for s in report.samples[WARM_UP - 1 :]})
    print(
        f"{len(report.samples)} cycles, {report.opens} opens, {report.fine_tunes} "
        f"fine-tunes, {len(report.folders)} run folders in {seconds:.0f} s; "
        f"RSS {report.samples[0].rss_kb / 1024:.1f} MB after cycle 1, "
        f"{report.baseline.rss_kb / 1024:.1f} after cycle {WARM_UP}, "
        f"{report.samples[-1].rss_kb / 1024:.1f} at the end "
        f"(growth {report.rss_growth_kb() / 1024:+.1f} MB, limit +50); "
        f"threads after the warm-up: {threads}"
    )
    print(f"CPU pressure after: {cpu_pressure()}")
    problems = report.problems()
    for problem in problems:
        print(f"FAIL {problem}")
    print(
        "verdict:", "every promise holds" if not problems else f"{len(problems)} broken"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
