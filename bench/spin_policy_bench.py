"""libgomp's spin policy: training speed on a quiet and on a loaded machine.

ATen's OpenMP helpers (the ``libgomp`` bundled with torch) spin for
``GOMP_SPINCOUNT`` iterations (300,000 by default, about 3 ms) before they
sleep between two parallel regions. On a quiet machine spinning saves a futex
wake-up per region. On a loaded one (another program busy on a core) a
spinning helper burns the time slice its team-mate needs, and every barrier
waits for a descheduled thread.

Each measurement is a fresh child process (libgomp reads the variable once,
when it loads) training the default model with the default settings for
``--steps`` steps; the figure is the engine's own images/s. Conditions
alternate round by round. ``loaded`` runs one busy-looping process beside the
child, as a second program would. Prints the Linux CPU pressure too.

Run: ``.venv/bin/python bench/spin_policy_bench.py`` (about 3 minutes here).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from cpu_pressure import cpu_pressure

SPINS = ("default", "30000", "3000", "0")
LOADS = ("quiet", "loaded")

CHILD = """
import sys
from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.data.sources import load_arrays
from workbench.core.train.engine import fit, prepare_run
data_dir, steps = sys.argv[1], int(sys.argv[2])
if data_dir:
    cfg = TrainConfig(dataset="mnist", data_dir=data_dir, download=False)
    arrays = load_arrays("mnist", data_dir, download=False)
else:
    cfg, arrays = TrainConfig(), load_arrays("digits")
events = fit(prepare_run(cfg.replace(max_steps=steps), arrays=arrays))
print([e for e in events if isinstance(e, E.TrainResult)][0].images_per_s)
"""


def measure(spin: str, load: str, data_dir: str, steps: int) -> float:
    env = dict(os.environ)
    env.pop("GOMP_SPINCOUNT", None)
    if spin != "default":
        env["GOMP_SPINCOUNT"] = spin
    hog = None
    if load == "loaded":
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, data_dir, str(steps)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    return float(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_dir = Path(__file__).parents[2] / "shared/data/mnist"
    parser.add_argument("--data-dir", default=str(default_dir))
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spins", nargs="+", default=list(SPINS))
    args = parser.parse_args()
    data_dir = args.data_dir if Path(args.data_dir).is_dir() else ""
    print(
        f"data: {data_dir or 'digits'}; cpus: {os.cpu_count()}; "
        f"pressure {cpu_pressure()}"
    )
    results: dict[tuple[str, str], list[float]] = {}
    for round_ in range(args.rounds):
        for load in LOADS:
            for spin in args.spins:
                ips = measure(spin, load, data_dir, args.steps)
                results.setdefault((spin, load), []).append(ips)
                print(
                    f"  round {round_} {load:6} GOMP_SPINCOUNT={spin:7} "
                    f"{ips:7.0f} img/s  pressure {cpu_pressure()}",
                    flush=True,
                )
    print("median images/s (ratio to the default spin count, same load):")
    for load in LOADS:
        base = statistics.median(results[("default", load)])
        for spin in args.spins:
            med = statistics.median(results[(spin, load)])
            print(f"  {load:6} GOMP_SPINCOUNT={spin:7} {med:7.0f}  {med / base:.2f}x")


if __name__ == "__main__":
    main()
