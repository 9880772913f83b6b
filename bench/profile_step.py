"""Where a training step's time goes: torch.profiler over the default run.

Trains the default model with the default settings for ``--steps`` steps
(after ``--warmup`` steps outside the profile) in each precision and prints
the operators that took the most CPU time, self time only, so nested calls
are not counted twice. The profiler adds overhead: read the shares, not the
milliseconds.

    .venv/bin/python bench/profile_step.py [--data-dir ../shared/data/mnist]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from torch.profiler import ProfilerActivity, profile

from workbench.core.config import TrainConfig
from workbench.core.data.sources import load_arrays
from workbench.core.train.engine import fit, prepare_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_dir = Path(__file__).parents[2] / "shared/data/mnist"
    parser.add_argument("--data-dir", default=str(default_dir))
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rows", type=int, default=12)
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16"])
    args = parser.parse_args()
    if Path(args.data_dir).is_dir():
        base = TrainConfig(dataset="mnist", data_dir=args.data_dir, download=False)
        arrays = load_arrays("mnist", args.data_dir, download=False)
    else:
        base, arrays = TrainConfig(), load_arrays("digits")
    for precision in args.precisions:
        cfg = base.replace(precision=precision)
        fit(prepare_run(cfg.replace(max_steps=args.warmup), arrays=arrays))
        run = prepare_run(cfg.replace(max_steps=args.steps), arrays=arrays)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            fit(run)
        averages = prof.key_averages()
        total = sum(a.self_cpu_time_total for a in averages)
        print(f"\n{cfg.model}, {precision}, batch {cfg.batch_size}, {args.steps} steps")
        rows = sorted(averages, key=lambda a: a.self_cpu_time_total, reverse=True)
        for a in rows[: args.rows]:
            share = 100 * a.self_cpu_time_total / total
            print(f"  {share:5.1f}%  {a.count:6d} calls  {a.key}")


if __name__ == "__main__":
    main()
