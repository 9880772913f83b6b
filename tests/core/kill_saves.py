"""Kill processes in the middle of saving a checkpoint; report what is left.

Run as a script by ``test_kill_during_save.py``: ``python -m tests.core.kill_saves
FOLDER TRIALS``. It forks one saver per trial (from this single-threaded
process, where forking is safe), lets it save the same checkpoint path over and
over, SIGKILLs it after a delay that sweeps across two save durations, then
loads whatever file is there. Prints one JSON line of counts.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import torch

from workbench.core.checkpoints.io import (
    CheckpointError,
    checkpoint_dict,
    load_checkpoint,
    write_checkpoint,
)
from workbench.core.config import TrainConfig
from workbench.core.data.my_digits import MyDigits  # noqa: F401  (imports warm)
from workbench.core.train.engine import prepare_run


def _payloads() -> list[dict]:
    """Two versions of a classic-CNN checkpoint with Adam state (about 14 MB)."""
    from tests.conftest import make_arrays

    run = prepare_run(TrainConfig(model="cnn", epochs=1), arrays=make_arrays())
    x, y = next(iter(run.loaders.train))
    torch.nn.functional.cross_entropy(run.model(x), y).backward()
    run.optimizer.step()  # Adam state exists, as in any real checkpoint
    old = checkpoint_dict(run)
    new = dict(old)
    new["global_step"] = old["global_step"] + 1
    new["model_state"] = {k: v + 1 for k, v in old["model_state"].items()}
    return [old, new]


def _which(payload: dict, versions: list[dict]) -> int | None:
    for index, version in enumerate(versions):
        if payload["global_step"] == version["global_step"] and all(
            torch.equal(payload["model_state"][k], v)
            for k, v in version["model_state"].items()
        ):
            return index
    return None


def main(folder: Path, trials: int) -> dict:
    torch.set_num_threads(1)
    versions = _payloads()
    path = folder / "run.pt"
    started = time.perf_counter()
    write_checkpoint(path, versions[0])
    save_seconds = time.perf_counter() - started
    counts = {"trials": trials, "valid": 0, "old": 0, "new": 0, "mid_save": 0}
    counts["bytes"] = path.stat().st_size
    counts["save_ms"] = round(1000 * save_seconds, 1)
    for trial in range(trials):
        delay = 2 * save_seconds * trial / trials
        pid = os.fork()
        if pid == 0:  # the saver: alternate the two versions until killed
            try:
                index = 1
                while True:
                    write_checkpoint(path, versions[index])
                    index = 1 - index
            finally:
                os._exit(1)
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        leftovers = [p for p in folder.iterdir() if p.name != path.name]
        counts["mid_save"] += bool(leftovers)  # killed while a temp file was open
        for leftover in leftovers:
            leftover.unlink()
        try:
            found = _which(load_checkpoint(path), versions)
        except CheckpointError:
            found = None
        if found is not None:
            counts["valid"] += 1
            counts["old" if found == 0 else "new"] += 1
    return counts


if __name__ == "__main__":
    result = main(Path(sys.argv[1]), int(sys.argv[2]))
    sys.stdout.write(json.dumps(result) + "\n")
