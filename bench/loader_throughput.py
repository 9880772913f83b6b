"""Fast in-memory loader vs the canonical DataLoader pipeline, per model.

The canonical pipeline is torchvision's MNIST dataset with per-sample
``ToTensor`` + ``Normalize`` through a ``DataLoader`` (workers 0). Both run the
same engine, model, batch size and seed; conditions alternate round by round and
the figures are medians, so the machine's noise hits both alike.

    .venv/bin/python bench/loader_throughput.py [--data-dir ../shared/data/mnist]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from workbench.core import events as E
from workbench.core.config import MODELS, TrainConfig
from workbench.core.data.sources import load_arrays
from workbench.core.train.engine import TrainControl, iter_fit, prepare_run

# Steps timed per measurement: enough for a stable figure, small enough for 2 cores.
STEPS = {"small-cnn": 40, "cnn": 12, "lazy-cnn": 30, "mlp": 120}
WARMUP = 3


def images_per_second(cfg: TrainConfig, arrays, steps: int) -> float:
    """Training images/s over ``steps`` steps after a warm-up (data loading counts)."""
    run = prepare_run(cfg, arrays=arrays)
    control = TrainControl()
    rates = []
    for event in iter_fit(run, control):
        if isinstance(event, E.StepMetrics) and event.global_step > WARMUP:
            rates.append(event.images_per_s)
            if event.global_step >= WARMUP + steps:
                control.request_stop()
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", default=str(Path(__file__).parents[2] / "shared/data/mnist")
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    args = parser.parse_args()
    # The fast path gets the arrays; the canonical path reads torchvision's dataset.
    arrays = load_arrays("mnist", args.data_dir, download=False)
    print(f"{'model':10} {'fast img/s':>11} {'canonical img/s':>16} {'ratio':>6}")
    for model in args.models:
        base = TrainConfig(
            dataset="mnist",
            data_dir=args.data_dir,
            model=model,
            batch_size=256,
            log_every=1,
            device="cpu",
            download=False,
        )
        fast, canonical = [], []
        for _ in range(args.rounds):
            fast.append(images_per_second(base, arrays, STEPS[model]))
            canonical.append(
                images_per_second(base.replace(loader="dataloader"), None, STEPS[model])
            )
        f, c = statistics.median(fast), statistics.median(canonical)
        print(f"{model:10} {f:11,.0f} {c:16,.0f} {f / c:5.2f}x", flush=True)


if __name__ == "__main__":
    main()
