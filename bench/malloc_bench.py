"""Training speed and page faults: glibc's malloc defaults, and freed memory kept.

Each measurement is a fresh process (glibc's thresholds are process-wide) that
trains MNIST (or the bundled digits) headless, as ``ptcore-workbench train``
does, ``--runs`` times after a 10-step warm-up, and reports the median
images/s of its runs and the minor page faults per run. ``default`` leaves
glibc's thresholds alone; ``kept`` calls
:func:`workbench.core.host.memory.keep_freed_memory` first, as the command line and
the window do. ``thread`` trains in a worker thread set up as the window's
trainer thread is (its own malloc arena, a lower priority). Conditions
alternate process by process, ``--rounds`` times; each row prints every
round's value.

Run: ``.venv/bin/python bench/malloc_bench.py`` (about 6 minutes on 2 cores;
``--models small-cnn --rounds 1`` for a quick look).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_STEPS = {"small-cnn": 120, "cnn": 30, "lazy-cnn": 120, "mlp": 240}


def child(model: str, steps: int, runs: int, kept: bool, where: str, data: str):
    """Train and print ``{"images_per_s": [...], "faults": [...]}`` as JSON."""
    sys.path.insert(0, str(REPO))
    from workbench.core.host.memory import keep_freed_memory

    if kept:
        assert keep_freed_memory()
    from gui_bench import headless, load_data

    from workbench.core.config import TrainConfig

    dataset, arrays = load_data(data)
    data_dir = data if dataset == "mnist" else None
    cfg = TrainConfig(dataset=dataset, data_dir=data_dir, model=model)
    result: dict[str, list[float]] = {"images_per_s": [], "faults": []}

    def train() -> None:
        headless(cfg.replace(max_steps=10), arrays)
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            result["images_per_s"].append(
                headless(cfg.replace(max_steps=steps), arrays)
            )
            after = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            result["faults"].append(after - before)

    if where == "thread":
        # As the window's trainer thread starts and runs (trainer_thread.py).
        from workbench.core.host import threads

        def train_in_thread() -> None:
            threads.lower_training_priority()
            threads.prepare_training_thread()
            train()

        worker = threading.Thread(target=train_in_thread)
        threads.prepare_main_thread()
        worker.start()
        worker.join()
    else:
        train()
    print(json.dumps(result))


def measure(model: str, steps: int, runs: int, kept: bool, where: str, data: str):
    malloc = "kept" if kept else "default"
    command = [sys.executable, __file__, "--child", model, str(steps), str(runs)]
    out = subprocess.run(
        [*command, malloc, where, data],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent,
    ).stdout
    result = json.loads(out.strip().splitlines()[-1])
    faults = statistics.median(result["faults"])
    return statistics.median(result["images_per_s"]), faults


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        model, steps, runs, kept, where, data = sys.argv[2:8]
        child(model, int(steps), int(runs), kept == "kept", where, data)
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="small-cnn,cnn,mlp")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3, help="runs per process")
    ap.add_argument("--where", default="main,thread")
    ap.add_argument("--data-dir", default=str(REPO.parent / "shared/data/mnist"))
    args = ap.parse_args()
    from cpu_pressure import cpu_pressure

    print(f"CPU pressure before: {cpu_pressure()}")
    print(
        f"{'model':10} {'thread':7} {'malloc':8} {'img/s (median)':>15} "
        f"{'faults/run':>11}  rounds"
    )
    for model in args.models.split(","):
        steps = DEFAULT_STEPS.get(model, 120)
        for where in args.where.split(","):
            rows: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
            for r in range(args.rounds):
                order = (False, True) if r % 2 == 0 else (True, False)
                for kept in order:
                    rows[kept].append(
                        measure(model, steps, args.runs, kept, where, args.data_dir)
                    )
            for kept, values in rows.items():
                speeds = [v[0] for v in values]
                faults = [v[1] for v in values]
                print(
                    f"{model:10} {where:7} {'kept' if kept else 'default':8} "
                    f"{statistics.median(speeds):15,.0f} "
                    f"{statistics.median(faults):11,.0f}  "
                    + " ".join(f"{s:,.0f}" for s in speeds)
                )
            ratio = statistics.median(s for s, _ in rows[True]) / statistics.median(
                s for s, _ in rows[False]
            )
            print(f"{'':10} {where:7} kept/default speed: {ratio:.2f}")
    print(f"CPU pressure after: {cpu_pressure()}")


if __name__ == "__main__":
    main()
