"""``train --nproc N``: the same command on N processes of this machine.

The launcher is PyTorch's own: ``--nproc`` calls ``torch.distributed.run.run``
(what the ``torchrun`` command runs) with ``--standalone --nproc-per-node N -m
workbench train <the same arguments>``, so this process is torchrun's agent.
Launching with torchrun directly works the same. In the processes it starts,
only the first (rank 0) prints and writes files.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.api import SignalException
from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
from torch.distributed.run import get_args_parser, run

from workbench.core import config as C
from workbench.core.distributed import env as distributed
from workbench.core.distributed.ddp import check_batch
from workbench.core.errors import USER_ERRORS


def process_count(text: str) -> int:
    """``--nproc``'s value: a whole number of at least 1 (argparse says why not)."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if count < 1:
        raise argparse.ArgumentTypeError(
            f"{count} processes cannot train: give 1 or more"
        )
    return count


def add_process_flags(add: Callable[..., Any]) -> None:
    """The flags of ``train`` for several processes: ``--nproc``, ``--sync-bn``."""
    add(
        "--nproc",
        type=process_count,
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
    """Run this ``train`` command on ``args.nproc`` processes; an exit code.

    This process becomes torchrun's agent: it starts the ranks, watches them
    and ends them all when one fails. Ctrl+C (or SIGINT from the window's
    Stop) reaches the agent, which passes it to every rank once; they stop
    after the same batch and rank 0 saves. Exit codes: 0 finished, 130
    stopped, 2 a user error (rank 0 said it), 1 a rank failed (said here).
    """
    nproc = args.nproc
    if distributed.world_size() > 1:
        raise C.ConfigError("--nproc starts torchrun: do not give it under torchrun")
    # Checked here too, so a wrong batch is one line, not one per process.
    check_batch(cfg.batch_size, nproc)
    launch = get_args_parser().parse_args(
        [
            "--standalone",
            f"--nproc-per-node={nproc}",
            "-m",
            "workbench",
            *without_nproc(args.argv),
        ]
    )
    # Each process an equal share of the cores (torchrun would set 1 and warn).
    threads = max(1, (os.cpu_count() or 1) // nproc)
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    _quiet_agent_logs()
    try:
        run(launch)
    except ChildFailedError as exc:
        return _report_failure(exc)
    except (SignalException, KeyboardInterrupt):
        return 130  # the ranks have stopped; rank 0 printed where it stopped
    return 0


def _quiet_agent_logs() -> None:
    """Keep the agent's own log lines (signals sent, workers failed) off the console.

    What matters reaches the user anyway: rank 0's lines and, on a failure,
    :func:`_report_failure`'s.
    """
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("torch.distributed"):
            logging.getLogger(name).setLevel(logging.CRITICAL)


def _report_failure(exc: Any) -> int:
    """Say which rank failed and why (torchrun's ``ChildFailedError``); exit code."""
    failures = exc.failures
    # A rank's own error; one that only lost its peer (rank 0, which had
    # left) is no cause of its own.
    raised = [
        own
        for own in map(_own_fields, failures.values())
        if own.get("error") and not own.get("peer_lost")
    ]
    first = failures.get(0)
    if first is not None and first.exitcode in (2, 130) and not raised:
        # A user error rank 0 printed, or a stop it reported; the others may
        # have been ended while they were leaving.
        return first.exitcode
    rank, failure = first_failure(failures)
    sys.stderr.write(
        f"ptcore-workbench train: error: rank {rank} failed: "
        f"{failure_message(failure)}; the other processes were ended\n"
    )
    return 1


def first_failure(failures: dict[int, Any]) -> tuple[int, Any]:
    """The failure that caused the others: the earliest not caused by another rank.

    A rank that loses its peer mid-collective fails too ("connection closed");
    run_rank marks that in its error file, so it is never named as the cause.
    """

    def order(rank: int) -> tuple[bool, float, int]:
        own = _own_fields(failures[rank])
        return (bool(own.get("peer_lost")), own.get("time", math.inf), rank)

    rank = min(failures, key=order)
    return rank, failures[rank]


def failure_message(failure: Any) -> str:
    """One line for a failed rank: its exception, or the signal or exit code."""
    own = _own_fields(failure)
    if own.get("error"):
        return own["error"]
    if failure.exitcode < 0:
        return f"ended by signal {failure.signal_name()}"
    return f"exit code {failure.exitcode}"


def run_rank(train: Callable[[argparse.Namespace], int], args: Any) -> int:
    """Run ``train(args)`` as one of torchrun's processes (or alone).

    Ranks other than 0 run quietly: no output, no ``--save`` or
    ``--metrics-json`` file (Session leaves their run folder out), and a user
    error ends them with exit code 2 while rank 0 says it. Any other error is
    written to torchrun's error file, so the agent can name it.
    """
    main = distributed.is_main()
    if not main:
        args.quiet = True
        args.save = args.metrics_json = None
        sys.stdout = open(os.devnull, "w")  # kept open for the process's life
    try:
        code = train(args)
        distributed.leave_together()
        # Rank 0's code tells how the run ended. Another rank's 130 would be a
        # failure to the agent, which would end rank 0 while it still saves.
        return code if main else 0
    except USER_ERRORS:
        if main:
            raise
        return 2
    except Exception as exc:
        record_failure(exc)
        if peer_lost(exc) and distributed.world_size() > 1:
            return 1  # not the cause: the agent names the rank that failed
        raise
    finally:
        distributed.stop()


# The key of the workbench's own fields in torchrun's error file.
_MARK = "ptcore_workbench"


def _own_fields(failure: Any) -> dict[str, Any]:
    """What :func:`record_failure` wrote for a failed rank (empty if nothing)."""
    own = (failure.error_file_data or {}).get(_MARK)
    return own if isinstance(own, dict) else {}


def record_failure(exc: BaseException) -> None:
    """Write ``exc`` to torchrun's error file for this rank, if it has one.

    The file keeps torchrun's own layout (so ``torchrun``'s report shows the
    message too) plus the workbench's fields: the one-line error, the time and
    whether the error only says a peer went away.
    """
    path = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not path or distributed.world_size() <= 1:
        return
    now = time.time()
    lost = peer_lost(exc)
    line = f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
    document = {
        "message": {
            "message": line,
            "extraInfo": {
                "py_callstack": "".join(traceback.format_exception(exc)),
                # torchrun names the earliest failure the root cause; one a
                # second later keeps a lost peer from being named instead.
                "timestamp": str(int(now) + lost),
            },
        },
        _MARK: {"error": line, "time": now, "peer_lost": lost},
    }
    try:
        with open(path, "w", encoding="utf-8") as file:
            json.dump(document, file)
    except OSError:
        pass  # the agent then reports the exit code instead


def peer_lost(exc: BaseException) -> bool:
    """True for a collective that failed because another rank went away."""
    text = str(exc).lower()
    return isinstance(exc, dist.DistError) or any(
        words in text for words in ("connection closed", "connection reset", "gloo")
    )
