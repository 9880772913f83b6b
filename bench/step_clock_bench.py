"""What splitting each step's time costs: the step clock on against off, alternating.

Every logged step carries its time split into data, copy, forward, backward,
optimizer and other (``workbench/core/train/step_clock.py``). The promise: the
split costs at most 2% of training throughput, and its parts add up to the
step's measured wall time within 5%.

Each round trains the same steps twice in one process, once with the split and
once without (``TrainingRun.time_phases``), the order swapping every round. The
speed is measured from outside the engine: images between the first and the
last logged step over the wall time between them (a step is logged every step
here, the default for runs of up to 5,000 steps, so the split runs at every
step). The cost is 1 - the median of the per-round ratios on/off.

Data: real MNIST from ``--data-dir`` when present (small-cnn at batch 256,
``--steps`` steps), else the bundled digits (batch 64).

Run: ``.venv/bin/python bench/step_clock_bench.py [--rounds 10] [--steps 120]``
(about 2 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gui_bench import load_data

from workbench.core.config import TrainConfig
from workbench.core.events import StepMetrics
from workbench.core.train.engine import iter_fit, prepare_run
from workbench.core.train.step_clock import split_text

MNIST = Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist"


def measure(cfg: TrainConfig, arrays, phases: bool) -> tuple[float, list[float]]:
    """(images/s between the first and last logged step, each step's sum error)."""
    run = prepare_run(cfg, arrays=arrays)
    run.time_phases = phases
    first = last = None
    errors = []
    for event in iter_fit(run):
        if not isinstance(event, StepMetrics):
            continue
        now = time.perf_counter()
        first = first or (now, event.global_step)
        last = (now, event.global_step)
        if event.phases:
            errors.append(
                abs(sum(event.phases) - event.step_seconds) / event.step_seconds
            )
    assert first is not None
    assert last[1] > first[1]
    images = (last[1] - first[1]) * cfg.batch_size
    return images / (last[0] - first[0]), errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--data-dir", type=Path, default=MNIST)
    args = parser.parse_args()
    dataset, arrays = load_data(str(args.data_dir))
    batch = 256 if dataset == "mnist" else 64
    cfg = TrainConfig(
        dataset=dataset, model="small-cnn", batch_size=batch, max_steps=args.steps,
        epochs=50, log_every=1,
    )  # fmt: skip
    print(
        f"{dataset}, small-cnn, batch {batch}, {args.steps} steps a run, logged "
        f"every step; {args.rounds} rounds, order swapped each round"
    )
    ratios, errors = [], []
    for r in range(args.rounds):
        order = (True, False) if r % 2 == 0 else (False, True)
        speeds = {}
        for phases in order:
            speeds[phases], errs = measure(cfg, arrays, phases)
            errors += errs
        ratios.append(speeds[True] / speeds[False])
        print(
            f"round {r + 1}: with the split {speeds[True]:,.0f} img/s, without "
            f"{speeds[False]:,.0f} img/s, ratio {ratios[-1]:.3f}",
            flush=True,
        )
    cost = 1 - statistics.median(ratios)
    worst = max(errors)
    print(f"median ratio with/without {statistics.median(ratios):.3f} (range "
          f"{min(ratios):.3f}-{max(ratios):.3f}): the split costs {cost:+.1%} of "
          f"throughput (target at most 2%)")  # fmt: skip
    print(f"parts against the measured step time, {len(errors)} logged steps: "
          f"mean error {statistics.mean(errors):.2%}, worst {worst:.2%} "
          f"(target within 5%)")  # fmt: skip
    run = prepare_run(cfg.replace(max_steps=40), arrays=arrays)
    result = list(iter_fit(run))[-1]
    print(f"a run's split: {split_text(result.phases)}")
    return 0 if cost <= 0.02 and worst <= 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
