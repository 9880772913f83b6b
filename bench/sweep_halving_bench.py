"""Does successive halving find the best of 12 trials for less than half the epochs?

For each seed: a 12-trial sweep on ``digits`` (``small-cnn``, ``--epochs``
each; the rate from 1e-4 to 1, the batch size and the optimizer searched; TPE
seeded) with successive halving, then the same 12 trials' settings each
trained to the end with no pruning. Prints the epochs each way, their ratio,
the sweep's best accuracy and the best of the 12 full runs. Target (issue 35):
at most 45% of the epochs, and the sweep's best within 0.5 points of the full
runs' best (digits validates on 360 images: one image is 0.28 points).

Run: ``.venv/bin/python bench/sweep_halving_bench.py [--epochs 9] [--seeds 0 1 2]``
(a few minutes; the runs go to a temporary folder).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.core.config import TrainConfig
from workbench.core.tuning.space import SearchSpace
from workbench.core.tuning.sweep import SweepSettings, run_sweep, start_sweep

TRIALS = 12
SPACE = {
    "lr": [1e-4, 1.0],
    "batch_size": [32, 64, 128, 256],
    "optimizer": ["adam", "sgd"],
}


def sweep(base: TrainConfig, name: str, pruner: str, queued=None) -> list:
    space = SearchSpace.parse(SPACE)
    settings = SweepSettings(space, TRIALS, name, seed=base.seed, pruner=pruner)
    if queued is not None:  # the same settings again, in the same order
        study = start_sweep(base, settings)
        for params in queued[1:]:
            study.enqueue_trial(params)
    return list(run_sweep(base, settings))


def one_seed(epochs: int, seed: int) -> bool:
    """One seed's sweep and full runs, printed; True when both targets are met."""
    base = TrainConfig(model="small-cnn", epochs=epochs, seed=seed)
    started = time.perf_counter()
    halved = sweep(base, f"halving-{seed}", "halving")
    halving_s = time.perf_counter() - started
    started = time.perf_counter()
    full = sweep(base, f"full-{seed}", "none", queued=[t.params for t in halved])
    full_s = time.perf_counter() - started
    assert [t.params for t in full] == [t.params for t in halved], "not the same 12"
    spent, whole = sum(t.epochs for t in halved), sum(t.epochs for t in full)
    best_halved = max(t.value for t in halved if t.state == "complete")
    best_full = max(t.value for t in full)
    pruned = sum(t.state == "pruned" for t in halved)
    ratio, gap = spent / whole, 100 * (best_full - best_halved)
    met = ratio <= 0.45 and gap <= 0.5
    print(f"seed {seed}: successive halving {spent} epochs ({pruned} of {TRIALS} "
          f"pruned, {halving_s:.0f} s), best {best_halved:.2%}; all {TRIALS} to "
          f"the end {whole} epochs ({full_s:.0f} s), best {best_full:.2%}; "
          f"epochs {ratio:.0%}, best {gap:+.2f} points behind: "
          f"{'met' if met else 'NOT met'}", flush=True)  # fmt: skip
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=9)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    os.environ["PTCORE_RUNS_DIR"] = tempfile.mkdtemp(prefix="halving-bench-")
    met = [one_seed(args.epochs, seed) for seed in args.seeds]
    print(f"targets (at most 45% of the epochs, best within 0.5 points) met on "
          f"{sum(met)} of {len(met)} seeds")  # fmt: skip
    return 0 if all(met) else 1


if __name__ == "__main__":
    sys.exit(main())
