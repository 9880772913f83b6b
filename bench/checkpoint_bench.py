"""Checkpoints of the classic MNIST network: size, save and load time, kill trials.

Size and time
    The classic CNN (pytorch/examples ``Net``, 1.2M parameters) after one Adam
    step on MNIST, saved as a full checkpoint (model, Adam state, scheduler,
    config, history, sample order, RNG states): file size, and the median of
    ``--repeats`` saves (temp file, fsync, rename) and loads (CRC check,
    ``torch.load(weights_only=True)``, migration).

Kill trials
    ``tests/core/kill_saves.py`` in a subprocess: a saver process is SIGKILLed
    at moments sweeping across two save durations, ``--trials`` times; after
    each kill the file must load whole, as the old or the new version.

Run: ``.venv/bin/python bench/checkpoint_bench.py`` (about half a minute).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from workbench.core.checkpoints.io import load_checkpoint, save_checkpoint  # noqa: E402
from workbench.core.config import TrainConfig  # noqa: E402
from workbench.core.data.registry import DataError  # noqa: E402
from workbench.core.data.sources import load_arrays  # noqa: E402
from workbench.core.train.engine import prepare_run  # noqa: E402


def classic_run(data_dir: Path):
    try:
        arrays = load_arrays("mnist", data_dir, download=False)
        dataset = "mnist"
    except DataError:
        arrays, dataset = None, "digits"  # same network, smaller sample order
    run = prepare_run(TrainConfig(dataset=dataset, model="cnn"), arrays=arrays)
    x, y = next(iter(run.loaders.train))
    torch.nn.functional.cross_entropy(run.model(x), y).backward()
    run.optimizer.step()
    run.scheduler.step()
    return run, dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--trials", type=int, default=100)
    default_dir = ROOT.parent / "shared" / "data" / "mnist"
    parser.add_argument("--data-dir", type=Path, default=default_dir)
    args = parser.parse_args()
    run, dataset = classic_run(args.data_dir)
    folder = Path(tempfile.mkdtemp())
    path = folder / "classic.pt"
    saves, loads = [], []
    for _ in range(args.repeats):
        started = time.perf_counter()
        save_checkpoint(path, run)
        saves.append(time.perf_counter() - started)
        started = time.perf_counter()
        load_checkpoint(path)
        loads.append(time.perf_counter() - started)
    params = sum(p.numel() for p in run.model.parameters())
    print(f"classic cnn ({params:,} parameters, Adam state), {dataset}:")
    print(f"  checkpoint size  {path.stat().st_size / 1e6:.2f} MB")
    for name, times in (("save", saves), ("load", loads)):
        median_ms = 1000 * statistics.median(times)
        print(f"  {name} (median of {args.repeats})  {median_ms:.1f} ms")

    kill_dir = Path(tempfile.mkdtemp())
    command = ["-m", "tests.core.kill_saves", str(kill_dir), str(args.trials)]
    done = subprocess.run(
        [sys.executable, *command],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    counts = json.loads(done.stdout.splitlines()[-1])
    print(
        f"SIGKILL during saves: {counts['valid']} of {counts['trials']} trials left a "
        f"valid checkpoint ({counts['old']} old, {counts['new']} new); "
        f"{counts['mid_save']} kills landed while a temp file was being written"
    )


if __name__ == "__main__":
    main()
