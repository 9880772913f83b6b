"""Does successive halving find the best of 12 trials for less than half the epochs?

A 12-trial sweep on ``digits`` (``small-cnn``, ``--epochs`` each, the rate and
batch size searched, TPE seeded) with successive halving, then the same 12
trials' settings each trained to the end with no pruning. Prints the epochs
each way, their ratio, the sweep's best accuracy and the best of the 12 full
runs. Target (issue 35): at most 45% of the epochs, and the sweep's best
within 0.5 points of the full runs' best.

Run: ``.venv/bin/python bench/sweep_halving_bench.py [--epochs 6] [--seed 0]``
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
SPACE = {"lr": [1e-3, 3e-1], "batch_size": [32, 64, 128]}


def sweep(base: TrainConfig, name: str, pruner: str, queued=None) -> list:
    space = SearchSpace.parse(SPACE)
    settings = SweepSettings(space, TRIALS, name, seed=base.seed, pruner=pruner)
    if queued is not None:  # the same settings again, in the same order
        study = start_sweep(base, settings)
        for params in queued[1:]:
            study.enqueue_trial(params)
    return list(run_sweep(base, settings))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ["PTCORE_RUNS_DIR"] = tempfile.mkdtemp(prefix="halving-bench-")
    base = TrainConfig(model="small-cnn", epochs=args.epochs, seed=args.seed)
    started = time.perf_counter()
    halved = sweep(base, "halving", "halving")
    halving_s = time.perf_counter() - started
    started = time.perf_counter()
    full = sweep(base, "full", "none", queued=[t.params for t in halved])
    full_s = time.perf_counter() - started
    assert [t.params for t in full] == [t.params for t in halved], "not the same 12"
    spent, whole = sum(t.epochs for t in halved), sum(t.epochs for t in full)
    best_halved = max(t.value for t in halved if t.state == "complete")
    best_full = max(t.value for t in full)
    pruned = sum(t.state == "pruned" for t in halved)
    print(f"successive halving: {spent} epochs ({pruned} of {TRIALS} pruned), "
          f"{halving_s:.0f} s; best {best_halved:.2%}")  # fmt: skip
    print(f"all {TRIALS} to the end: {whole} epochs, {full_s:.0f} s; "
          f"best {best_full:.2%}")  # fmt: skip
    ratio, gap = spent / whole, 100 * (best_full - best_halved)
    print(f"epochs {ratio:.0%} of the full runs' (target at most 45%): "
          f"{'met' if ratio <= 0.45 else 'NOT met'}")  # fmt: skip
    print(f"best {gap:+.2f} points behind the full runs' best (target at most "
          f"0.5): {'met' if gap <= 0.5 else 'NOT met'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
