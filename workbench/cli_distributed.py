"""``train --nproc N``: the same command on N processes of this machine.

The launcher is PyTorch's own, ``torch.distributed.run`` (torchrun): ``--nproc``
runs ``python -m torch.distributed.run --standalone --nproc-per-node N -m
workbench train <the same arguments>`` as a child process and returns its exit
code. Launching with torchrun directly works the same. In the processes it
starts, only the first (rank 0) prints and writes files.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

from workbench.core import config as C
from workbench.core import distributed


def add_process_flags(add: Callable[..., Any]) -> None:
    """The flags of ``train`` for several processes: ``--nproc``, ``--sync-bn``."""
    add(
        "--nproc",
        type=int,
        default=1,
        metavar="N",
        help="train on N processes of this machine through torchrun and "
        "DistributedDataParallel; --batch-size stays the global batch",
    )
    add(
        "--sync-bn",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with several processes on CUDA GPUs, share BatchNorm statistics "
        "over them (SyncBatchNorm); no effect on the CPU or in one process",
    )


def without_nproc(argv: Sequence[str]) -> list[str]:
    """``argv`` with its ``--nproc N`` (or ``--nproc=N``) taken out."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--nproc":
            skip = True
        elif not arg.startswith("--nproc="):
            out.append(arg)
    return out


def relaunch(args: argparse.Namespace, cfg: C.TrainConfig) -> int:
    """Run this ``train`` command on ``args.nproc`` processes; torchrun's exit code."""
    from workbench.core.ddp import check_batch

    nproc = args.nproc
    if distributed.world_size() > 1:
        raise C.ConfigError("--nproc starts torchrun: do not give it under torchrun")
    # Checked here too, so a wrong batch is one line, not one per process and
    # torchrun's report of failed children.
    check_batch(cfg.batch_size, nproc)
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={nproc}",
        "-m",
        "workbench",
        *without_nproc(args.argv),
    ]
    env = dict(os.environ)
    # Each process an equal share of the cores (torchrun would set 1 and warn).
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // nproc)))
    child = subprocess.Popen(command, env=env)
    try:
        return child.wait()
    except KeyboardInterrupt:
        # The terminal's Ctrl+C reached torchrun too: it stops its processes.
        return child.wait()


def run_rank(train: Callable[[argparse.Namespace], int], args: Any) -> int:
    """Run ``train(args)`` as one of torchrun's processes (or alone).

    Ranks other than 0 run quietly: no output, no ``--save`` or
    ``--metrics-json`` file (Session leaves their run folder out), and a user
    error ends them with exit code 2 while rank 0 says it.
    """
    from workbench.core.errors import USER_ERRORS

    main = distributed.is_main()
    if not main:
        args.quiet = True
        args.save = args.metrics_json = None
        sys.stdout = open(os.devnull, "w")  # kept open for the process's life
    try:
        return train(args)
    except USER_ERRORS:
        if main:
            raise
        return 2
    finally:
        distributed.stop()
