"""Time to 99% test accuracy on MNIST: the default settings against alternatives.

For every seed, each condition trains once, conditions alternating, so a
machine that speeds up or slows down during the bench affects them alike.
Three figures per run:

``train``
    The sum of the epochs' training seconds (validation excluded): the
    engine's own measure, what the issue's target counts.
``wall``
    From the Start (before data and model are prepared) to the end of the
    first validation that reached ``--target``: everything the user waits
    for, data loading, model building, compiling and validation included.
``compile``
    The seconds torch.compile added (its ``TrainResult.compile_seconds``),
    part of ``train`` and ``wall`` for a compiled condition.

Conditions: ``default`` (``TrainConfig()``'s settings); ``fp32``, the default
in full precision (left out where ``auto`` is fp32 already: the same run);
``before``, the default when issue 17 was filed (small-cnn's earlier layout,
``small-cnn-v1``, in fp32), the reference of the speed-ups; and with
``--compile`` the default compiled.

    .venv/bin/python bench/time_to_accuracy.py [--data-dir ../shared/data/mnist]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from cpu_pressure import cpu_pressure

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.data.sources import load_arrays
from workbench.core.host.memory import keep_freed_memory
from workbench.core.train.engine import iter_fit, prepare_run
from workbench.core.train.precision import precision_for


@dataclass(frozen=True)
class Result:
    accuracy: float  # the last epoch's test accuracy
    train_s: float
    wall_s: float  # Start to the first epoch at or above the target (inf: never)
    compile_s: float
    precision: str


def train(cfg: TrainConfig, arrays, target: float) -> Result:
    """One run of ``cfg``, timed as the module docstring says."""
    started = time.perf_counter()
    run = prepare_run(cfg, arrays=arrays)
    train_s, wall_s, accuracy, compile_s = 0.0, float("inf"), float("nan"), 0.0
    for event in iter_fit(run):
        if isinstance(event, E.EpochMetrics):
            train_s += event.seconds
            accuracy = event.val_accuracy
            if accuracy >= target and wall_s == float("inf"):
                wall_s = time.perf_counter() - started
        elif isinstance(event, E.TrainResult):
            compile_s = event.compile_seconds
    return Result(accuracy, train_s, wall_s, compile_s, run.precision)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", default=str(Path(__file__).parents[2] / "shared/data/mnist")
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--target", type=float, default=0.99)
    parser.add_argument(
        "--compile", action="store_true", help="also the default, compiled"
    )
    parser.add_argument(
        "--dataset", default="mnist", help="mnist, or digits (bundled, 15 epochs)"
    )
    args = parser.parse_args()
    kept = keep_freed_memory()  # as ptcore-workbench does first thing
    if args.dataset == "digits":
        base, arrays = TrainConfig(), load_arrays("digits")
    else:
        base = TrainConfig(dataset="mnist", data_dir=args.data_dir, download=False)
        arrays = load_arrays("mnist", args.data_dir, download=False)
    conditions = {"default": base}
    if precision_for(base.precision, base.device) != "fp32":
        conditions["fp32"] = base.replace(precision="fp32")
    else:
        print("precision auto is fp32 on this machine: no separate fp32 runs")
    conditions["before"] = base.replace(model="small-cnn-v1", precision="fp32")
    if args.compile:
        conditions["compiled"] = base.replace(compile=True)
    print(
        f"{args.dataset}, {base.resolved_epochs} epoch(s), model {base.model}, "
        f"batch {base.batch_size}; GOMP_SPINCOUNT="
        f"{os.environ.get('GOMP_SPINCOUNT', 'unset')}; freed memory kept: {kept}; "
        f"pressure {cpu_pressure()}"
    )
    results: dict[str, list[Result]] = {name: [] for name in conditions}
    for seed in args.seeds:
        for name, cfg in conditions.items():
            r = train(cfg.replace(seed=seed), arrays, args.target)
            results[name].append(r)
            print(
                f"  seed {seed} {name:8} ({r.precision}): {100 * r.accuracy:.2f}%, "
                f"train {r.train_s:.1f} s, wall {r.wall_s:.1f} s, "
                f"compile {r.compile_s:.1f} s; pressure {cpu_pressure()}",
                flush=True,
            )
    reference = statistics.median(r.train_s for r in results["before"])
    for name, rs in results.items():
        train_s = statistics.median(r.train_s for r in rs)
        print(
            f"{name:8}: median {100 * statistics.median(r.accuracy for r in rs):.2f}% "
            f"(lowest {100 * min(r.accuracy for r in rs):.2f}%), "
            f"train {train_s:.1f} s ({reference / train_s:.2f}x before), "
            f"wall {statistics.median(r.wall_s for r in rs):.1f} s, "
            f"compile {statistics.median(r.compile_s for r in rs):.1f} s"
        )


if __name__ == "__main__":
    main()
