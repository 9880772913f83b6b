"""Does the speed doctor advise a loader change only where one helps?

Issue 38's targets, on the bundled ``digits`` with ``small-cnn``:

1. The fast in-memory path, where no loader change can help: the diagnosis,
   restricted to loader candidates, repeated ``--repeats`` times (20): no
   loader advice in every one. Prints how often the loader candidates were
   timed, and how often the run's own data share ruled them out.
2. The same, measured outright (on a quiet machine the diagnosis rules the
   loaders out by the run's data share without timing them): the fast loader
   against the DataLoader with 0, 1 and 2 workers in alternating rounds,
   judged by the doctor's rule, ``--measured`` times (5; each takes a
   minute or more): no DataLoader faster past the noise.
3. A DataLoader made slow on purpose (2 ms per image,
   ``tests/core/slow_dataset.py``), ``--slow-repeats`` times (5): diagnosed
   data-bound, a loader change advised, and the advised config re-measured
   against the run's own (target: at least 1.5x).

Run: ``.venv/bin/python bench/speed_doctor_bench.py`` (minutes: every
DataLoader with workers starts them in fresh processes).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.core.slow_dataset import slow_prepare
from workbench.core.config import TrainConfig
from workbench.core.data.sources import load_run_arrays
from workbench.core.perf.speed_doctor import DoctorReport, diagnose
from workbench.core.perf.timed_rounds import judge, measure


def report_of(cfg: TrainConfig, **kwargs: object) -> DoctorReport:
    """The last item of a diagnosis: its report."""
    *_, report = diagnose(cfg, kinds=("loader",), **kwargs)  # type: ignore[arg-type]
    assert isinstance(report, DoctorReport)
    return report


def fast_path_diagnoses(repeats: int) -> None:
    advised = timed = 0
    started = time.perf_counter()
    for _ in range(repeats):
        report = report_of(TrainConfig())
        loaders = [f for f in report.findings if f.kind == "loader"]
        advised += any(f.recommended for f in loaders)
        timed += any(f.rounds for f in loaders)
        print(
            f"  {report.diagnosis}; loader advice: "
            f"{[f.name for f in loaders if f.recommended] or 'none'}",
            flush=True,
        )
    print(
        f"fast path: no loader advice in {repeats - advised} of {repeats} diagnoses "
        f"(loader candidates timed in {timed}, ruled out by the data share in "
        f"{repeats - timed}; {time.perf_counter() - started:.0f} s)"
    )


def fast_path_measured(repeats: int, steps: int, rounds: int) -> None:
    fast = TrainConfig()
    others = [fast.replace(loader="dataloader", workers=n) for n in (0, 1, 2)]
    faster = 0
    gains: list[list[float]] = [[], [], []]
    for _ in range(repeats):
        rates = measure([fast, *others], steps=steps, rounds=rounds)
        judged = [judge(rates[0], r) for r in rates[1:]]
        faster += any(j.recommended for j in judged)
        for column, j in zip(gains, judged, strict=True):
            column.append(j.gain)
        print("  " + ", ".join(f"{j.gain:.2f}x" for j in judged), flush=True)
    print(
        f"fast path, measured: no DataLoader faster past the noise in "
        f"{repeats - faster} of {repeats}; median gains of 0/1/2 workers: "
        + ", ".join(f"{statistics.median(g):.2f}x" for g in gains)
    )


def slow_loader(repeats: int, steps: int) -> None:
    cfg = TrainConfig(loader="dataloader", workers=0, batch_size=32)
    prepare = slow_prepare(load_run_arrays(cfg))
    bound = advised = 0
    gains = []
    for _ in range(repeats):
        report = report_of(cfg, steps=steps, prepare=prepare)
        bound += report.diagnosis.startswith("data-bound")
        advice = [f for f in report.recommended if f.kind == "loader"]
        print(f"  {report.diagnosis}; advice: {[f.name for f in advice]}", flush=True)
        if not advice:
            continue
        advised += 1
        changed = cfg.replace(**dict(advice[0].changes))
        before, after = measure([cfg, changed], steps=steps, rounds=4, prepare=prepare)
        judged = judge(before, after)
        gains.append(judged.gain)
        print(
            f"  re-measured {advice[0].name}: {judged.gain:.2f}x "
            f"({judged.low:.2f}-{judged.high:.2f})",
            flush=True,
        )
    low = f"{min(gains):.2f}x" if gains else "n/a"
    print(
        f"slow loader (2 ms an image): data-bound in {bound} of {repeats}, loader "
        f"advice in {advised} of {repeats}; the advice re-measured at {low} or more "
        "(target 1.5x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--measured", type=int, default=5)
    parser.add_argument("--slow-repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()
    if args.repeats:
        fast_path_diagnoses(args.repeats)
    if args.measured:
        fast_path_measured(args.measured, args.steps, rounds=4)
    if args.slow_repeats:
        slow_loader(args.slow_repeats, steps=4)


if __name__ == "__main__":
    main()
