"""A sweep trial on several processes (``sweep --nproc N``), pruned from outside.

The trial trains as ``ptcore-workbench train --nproc N`` (torchrun), in a
session of its own. Pruning is decided here, by the process that watches the
job, never inside it: the ranks only train and write the ledger. Each epoch's
validation accuracy is read from the run folder's ``metrics.jsonl`` as rank 0
appends it, reported to Optuna, and when the pruner says so the job gets one
SIGINT: every rank stops after its batch (a batch or two into the next epoch)
and rank 0 saves the checkpoint.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import optuna
import torch

from workbench.core.atomic_files import read_jsonl
from workbench.core.config import TrainConfig, save_config
from workbench.core.distributed.job import RUN_FOLDER_LINE, train_command
from workbench.core.events import EpochMetrics
from workbench.core.runs.folder import METRICS_FILE, RunFolder

log = logging.getLogger(__name__)

POLL_S = 0.2
STOPPED_EXIT_CODE = 130


def epoch_accuracies(folder: Path) -> list[float]:
    """The validation accuracy of each epoch the run's ledger holds so far."""
    return [
        float(record["val_accuracy"])
        for record in read_jsonl(folder / METRICS_FILE)
        if record.get("kind") == EpochMetrics.KIND and "val_accuracy" in record
    ]


def train_trial_as_job(
    cfg: TrainConfig,
    trial: optuna.Trial,
    nproc: int,
    *,
    label: dict[str, object],
    stop: Callable[[], bool],
) -> tuple[str, float | None, int, Path | None]:
    """Train ``cfg`` on ``nproc`` processes; (state, accuracy, epochs, run folder).

    ``label`` goes into the run's ``run.json`` as soon as its folder is known.
    """
    handle, name = tempfile.mkstemp(prefix="trial-", suffix=".toml")
    os.close(handle)
    config, output = Path(name), Path(name).with_suffix(".log")
    save_config(cfg, config)
    threads = max(1, torch.get_num_threads() // nproc)  # this worker's share, split
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONUNBUFFERED": "1"}
    folder: Path | None = None
    reported, pruned, interrupted = 0, False, False
    try:
        with open(output, "wb") as out:
            job = subprocess.Popen(
                train_command(config, nproc),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        while True:
            ended = job.poll() is not None
            if folder is None:
                found = RUN_FOLDER_LINE.search(output.read_text(errors="replace"))
                if found:
                    folder = Path(found.group(1))
                    RunFolder(folder).update(sweep=label)
            if folder is not None:
                accuracies = epoch_accuracies(folder)
                for epoch in range(reported, len(accuracies)):
                    trial.report(accuracies[epoch], step=epoch + 1)
                    if not pruned and not ended and trial.should_prune():
                        pruned = True
                reported = len(accuracies)
            if ended:
                break
            if (pruned or stop()) and not interrupted:
                interrupted = True
                job.send_signal(signal.SIGINT)  # the agent passes it to every rank
            time.sleep(POLL_S)
        code = job.returncode
        final = epoch_accuracies(folder)[-1:] if folder is not None else []
        accuracy = final[0] if final else None
        if pruned and code in (0, STOPPED_EXIT_CODE):
            if folder is not None:
                RunFolder(folder).update(status="pruned")
            return "pruned", accuracy, reported, folder
        if code == 0:
            return "complete", accuracy, reported, folder
        if code == STOPPED_EXIT_CODE:
            return "stopped", accuracy, reported, folder
        tail = output.read_text(errors="replace").strip().splitlines()[-1:]
        log.warning("trial %s failed: %s", trial.number, tail[0] if tail else code)
        return "failed", accuracy, reported, folder
    finally:
        config.unlink(missing_ok=True)
        output.unlink(missing_ok=True)
