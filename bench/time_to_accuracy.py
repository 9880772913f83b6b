"""Time to accuracy with the default settings: MNIST (3 seeds) and digits.

Training time only: the sum of the epochs' training seconds, validation excluded.

    .venv/bin/python bench/time_to_accuracy.py [--data-dir ../shared/data/mnist]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.data import load_arrays
from workbench.core.engine import fit, prepare_run


def train(cfg: TrainConfig, arrays) -> tuple[float, float]:
    """(final test accuracy, training seconds) of one run."""
    events = fit(prepare_run(cfg, arrays=arrays))
    seconds = sum(e.seconds for e in events if isinstance(e, E.EpochMetrics))
    return events[-1].val_accuracy, seconds


def report(name: str, cfg: TrainConfig, arrays, seeds: list[int]) -> None:
    results = [train(cfg.replace(seed=s), arrays) for s in seeds]
    for seed, (acc, secs) in zip(seeds, results, strict=True):
        print(f"  {name} seed {seed}: {100 * acc:.2f}% in {secs:.1f} s", flush=True)
    accs, secs = zip(*results, strict=True)
    print(
        f"{name}: median {100 * statistics.median(accs):.2f}% test accuracy, "
        f"median {statistics.median(secs):.1f} s training "
        f"(model {cfg.model}, {cfg.resolved_epochs} epoch(s), batch {cfg.batch_size})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", default=str(Path(__file__).parents[2] / "shared/data/mnist")
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    report("digits", TrainConfig(), load_arrays("digits"), args.seeds)
    mnist = TrainConfig(dataset="mnist", data_dir=args.data_dir, download=False)
    report(
        "mnist", mnist, load_arrays("mnist", args.data_dir, download=False), args.seeds
    )


if __name__ == "__main__":
    main()
