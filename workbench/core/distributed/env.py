"""Several processes training one run: torchrun's environment and the process group.

``torch.distributed.run`` (torchrun) starts the processes and sets ``RANK``,
``WORLD_SIZE`` and ``LOCAL_RANK`` in each; with none of them set this is one
process and every function here is a no-op. Gradients are averaged by
``DistributedDataParallel`` (see :mod:`workbench.core.distributed.ddp`), nothing here.
"""

from __future__ import annotations

import datetime
import os

import torch
import torch.distributed as dist

# Long enough for a slow epoch boundary, short enough that a rank that died
# without torchrun noticing does not leave the others waiting for ever.
TIMEOUT = datetime.timedelta(seconds=60)


def world_size() -> int:
    """Processes in this run (1 when not launched by torchrun)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def rank() -> int:
    """This process's place among them, 0 for the first (and a lone) one."""
    return int(os.environ.get("RANK", "0"))


def local_rank() -> int:
    """This process's place on its own machine: which GPU it uses."""
    return int(os.environ.get("LOCAL_RANK", "0"))


def is_main() -> bool:
    """True in the one process that prints and writes files."""
    return rank() == 0


def rank_device(device: torch.device) -> torch.device:
    """The device of this rank: ``cuda:LOCAL_RANK`` for CUDA, ``device`` else."""
    if world_size() > 1 and device.type == "cuda":
        return torch.device("cuda", local_rank())
    return device


def start(device: torch.device) -> str | None:
    """Join the process group (gloo on CPU, nccl on CUDA); what was set up.

    Does nothing for one process, or when already joined; returns the line
    that says how this process trains, or None.
    """
    if world_size() <= 1 or dist.is_initialized():
        return None
    backend = "nccl" if device.type == "cuda" else "gloo"
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(backend, timeout=TIMEOUT)
    # OMP_NUM_THREADS decides: torchrun sets 1 for several processes a
    # machine, --nproc an equal share of the cores (workbench.cli.distributed.relaunch).
    threads = torch.get_num_threads()
    return (
        f"{world_size()} processes ({backend}); this is rank {rank()}, "
        f"{threads} thread{'s' if threads != 1 else ''} per process"
    )


def leave_together() -> None:
    """Wait until every process is done before any leaves the group.

    A rank that tears its connections down while another still ends its run
    (rank 0 writing its checkpoint) can take that one down with it.
    """
    if active():
        dist.barrier()


def stop() -> None:
    """Leave the process group, if joined (at the end of a command)."""
    if dist.is_initialized():
        dist.destroy_process_group()


def active() -> bool:
    """True when collectives are possible: joined, with more than one process."""
    return dist.is_initialized() and dist.get_world_size() > 1


def all_gather(values: torch.Tensor) -> list[torch.Tensor]:
    """``values`` of every process, in rank order (same shape everywhere)."""
    if not active():
        return [values.clone()]
    device = _collective_device()
    mine = values.to(device, copy=True)
    parts = [torch.empty_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, mine)
    return [part.to(values.device) for part in parts]


def _collective_device() -> torch.device:
    # nccl moves CUDA tensors only; gloo takes CPU ones.
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def all_reduce_sum(values: torch.Tensor) -> torch.Tensor:
    """The element-wise sum of ``values`` over every process (a new tensor)."""
    if not active():
        return values.clone()
    total = values.to(_collective_device(), copy=True)
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return total.to(values.device)
