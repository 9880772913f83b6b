"""Images per second of one process against two (``train --nproc 2``).

Trains the default model (``small-cnn``, batch 256, fast path) on MNIST for a
fixed number of steps under each condition, alternating the conditions round
by round, and prints the median training images/s (validation excluded, the
figure ``train --metrics-json`` reports as ``final.images_per_s``), its ratio
to one process with the default threads, and the wall time of each command.

Conditions:

1 proc, default threads   ``train`` as users run it (torch: one thread a core)
1 proc, 1 thread          ``OMP_NUM_THREADS=1``
2 procs, 1 thread each    ``train --nproc 2`` (gloo, DDP); each gets cores / 2
2 procs, default threads  ``--nproc 2`` with ``OMP_NUM_THREADS`` = cores, each:
                          more threads than cores (oversubscribed)

Every command is a fresh process (torch import, data load, process group), as a
user would start it; the steps are many enough that training dominates.

Run: ``.venv/bin/python bench/ddp_throughput.py [--data-dir ../shared/data/mnist]``
(about 4 minutes on a 2-core machine with the defaults).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORES = os.cpu_count() or 1
CONDITIONS = {
    "1 proc, default threads": (1, None),
    "1 proc, 1 thread": (1, 1),
    "2 procs, 1 thread each": (2, 1),
    "2 procs, default threads": (2, CORES),
}


def run_once(
    nproc: int, threads: int | None, args: argparse.Namespace
) -> tuple[float, float]:
    """(training images/s, wall seconds) of one ``train`` command."""
    with tempfile.TemporaryDirectory() as tmp:
        metrics = Path(tmp) / "metrics.json"
        command = [
            sys.executable,
            "-m",
            "workbench",
            "train",
            "--quiet",
            "--dataset",
            "mnist",
            "--data-dir",
            args.data_dir,
            "--no-download",
            "--device",
            "cpu",
            "--max-steps",
            str(args.steps),
            "--metrics-json",
            str(metrics),
        ]
        if nproc > 1:
            command += ["--nproc", str(nproc)]
        env = dict(os.environ, PTCORE_RUNS_DIR=tmp)
        env.pop("OMP_NUM_THREADS", None)
        if threads is not None:
            env["OMP_NUM_THREADS"] = str(threads)
        started = time.perf_counter()
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        return json.loads(metrics.read_text())["final"]["images_per_s"], wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", default=str(Path(__file__).parents[2] / "shared/data/mnist")
    )
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in CONDITIONS}
    names = list(CONDITIONS)
    for round_index in range(args.rounds):
        # Rotate the order so no condition always runs first (a warm cache).
        order = names[round_index % len(names) :] + names[: round_index % len(names)]
        for name in order:
            results[name].append(run_once(*CONDITIONS[name], args))
            ips, wall = results[name][-1]
            print(
                f"round {round_index + 1}: {name:<26} {ips:8.0f} img/s  {wall:5.1f} s"
            )
    base = statistics.median(ips for ips, _ in results[names[0]])
    print(
        f"\n{CORES} cores, {args.steps} steps of small-cnn at batch 256 on MNIST, "
        f"median of {args.rounds}"
    )
    print(f"{'condition':<26} {'img/s':>8} {'ratio':>6} {'wall s':>7}")
    for name in names:
        ips = statistics.median(i for i, _ in results[name])
        wall = statistics.median(w for _, w in results[name])
        print(f"{name:<26} {ips:8.0f} {ips / base:6.2f} {wall:7.1f}")


if __name__ == "__main__":
    main()
