"""How long does 5-fold cross-validation of digits take, and does its ensemble export?

Runs ``ptcore-workbench train --folds 5`` (the default model and recipe:
``small-cnn``, 15 epochs, on the bundled ``digits``) as a user would, in a fresh
process with an empty runs folder, and times it from start to exit. Then
exports the group's fold models as one averaging ensemble and prints each
format's agreement with the eager ensemble on the validation images.

Targets (issue: k-fold cross-validation): at most 60 s on this CPU; the
ensemble's export agrees on 100% of the validation predictions.

Run: ``.venv/bin/python bench/kfold_bench.py [--repeats 3] [--folds 5]``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 60.0


def run(command: list[str], runs: Path) -> tuple[float, str]:
    """Seconds ``ptcore-workbench COMMAND`` took, and what it printed."""
    env = {**os.environ, "PTCORE_RUNS_DIR": str(runs)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "workbench", *command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr}")
    return seconds, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    times = []
    for repeat in range(args.repeats):
        with tempfile.TemporaryDirectory() as scratch:
            runs = Path(scratch) / "runs"
            seconds, out = run(["train", "--folds", str(args.folds), "--quiet"], runs)
            times.append(seconds)
            summary = [line.strip() for line in out.splitlines() if "±" in line]
            print(f"run {repeat + 1}: {seconds:.1f} s; " + "; ".join(summary))
            if repeat == 0:
                group = re.search(r"^group: (\S+)", out, re.MULTILINE)
                assert group is not None, out
                export_s, exported = run(
                    ["export", group.group(1), "--out", str(Path(scratch) / "out")],
                    runs,
                )
                for line in exported.splitlines():
                    if "agreement" in line:
                        print(f"  ensemble {line.strip()}")
                print(f"  ensemble export and verification: {export_s:.1f} s")
    worst = max(times)
    print(
        f"{args.folds}-fold digits, default model: "
        + ", ".join(f"{t:.1f}" for t in times)
        + f" s (target {TARGET_S:.0f} s): {'met' if worst <= TARGET_S else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
