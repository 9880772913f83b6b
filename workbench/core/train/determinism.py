"""What a CUDA run needs to repeat exactly: deterministic kernels and cuBLAS's setting.

On the CPU the workbench's runs repeat bit for bit with seeding and oneDNN's
deterministic flag (``engine.seed_everything``). On CUDA that is not enough:
cuDNN may pick a convolution algorithm that sums in a varying order, several
backward kernels add with atomics, and cuBLAS (CUDA 10.2 and later) gives
repeatable results only with a fixed workspace (``CUBLAS_WORKSPACE_CONFIG``,
read when the process first uses cuBLAS). :func:`deterministic_kernels` asks for
all of it for a CUDA run, so a run stopped and resumed on a GPU gives the same
losses and the same weights as the run that went straight through (and a rerun
repeats).

Operations that have no deterministic CUDA kernel (``AdaptiveAvgPool2d``'s
backward, in torchvision's classifiers) warn instead of refusing to train:
``warn_only=True``. Such a run trains, but is not guaranteed to repeat exactly.
"""

from __future__ import annotations

import os

import torch

# cuBLAS's documented setting for reproducible results: 8 workspaces of 4 MiB
# (the other documented value, ":16:8", uses less memory and is slower).
CUBLAS_WORKSPACE_CONFIG = ":4096:8"


def deterministic_kernels(device: torch.device) -> None:
    """Ask for deterministic kernels when ``device`` is a CUDA device.

    Sets ``CUBLAS_WORKSPACE_CONFIG`` (unless the user set it), switches cuDNN's
    benchmark search off and turns ``torch.use_deterministic_algorithms`` on
    (``warn_only``). Call before the process's first CUDA computation: cuBLAS
    reads its setting once. For another device the process's settings are left
    as they are, so a CPU run pays nothing.

    Parameters
    ----------
    device : torch.device
        Where the run trains.
    """
    if device.type != "cuda":
        return
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE_CONFIG)
    # The benchmark search times algorithms and keeps the fastest: which one
    # wins may change from one process to the next, and with it the sums.
    torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True, warn_only=True)
