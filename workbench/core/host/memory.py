"""Keep freed memory in the process, so a training step does not fault it back in.

PyTorch's CPU tensors come from the C library's ``malloc``. glibc's defaults
suit a program that allocates little: blocks above a threshold (128 KiB at
first, raised as such blocks are freed, at most 32 MiB) are mapped fresh from
the kernel and unmapped when freed, and free memory at the top of the heap is
given back once it passes a second threshold. A training loop allocates and
frees the same activations every step, so each step maps them anew and the
kernel zeroes every page again at its first touch. Keeping the memory made
``cnn`` train about 1.25x as fast on 2 CPU cores (``bench/malloc_bench.py``
prints the page faults and images/s); models that allocate little gain
nothing.

:func:`keep_freed_memory` fixes both thresholds at process start: blocks up to
32 MiB come from the heap, and up to 256 MiB of free heap stays with the
process (the resident size stays near the run's peak, as with PyTorch's own
caching allocators on a GPU). It also keeps every thread on the main thread's
heap (one arena): a thread's own arena grows in heaps of at most 64 MiB and
unmaps one as soon as it is free, so the window's trainer thread still faulted
its blocks in again (``bench/gui_bench.py`` compares the window's speed with
and without). Threads then share the arena's lock; the allocations that count
come from the one thread that runs the step.

It is the same as setting glibc's ``MALLOC_MMAP_THRESHOLD_``,
``MALLOC_TRIM_THRESHOLD_`` and ``MALLOC_ARENA_MAX``; a user who set one of
them (or ``GLIBC_TUNABLES``) keeps their choice. Elsewhere (macOS, Windows,
musl) it does nothing and says so once in the log.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import sys

log = logging.getLogger(__name__)

# From glibc's malloc.h.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
# glibc refuses an mmap threshold above HEAP_MAX_SIZE / 2: 32 MiB on 64-bit.
MMAP_THRESHOLD = 32 * 1024 * 1024
TRIM_THRESHOLD = 256 * 1024 * 1024
ARENAS = 1  # threads allocate from the main thread's heap
_USER_SETTINGS = (
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_ARENA_MAX",
    "GLIBC_TUNABLES",
)

_kept = False


@functools.cache
def _say_skipped() -> None:
    """Log once per process that this C library is not tuned."""
    log.info("malloc tuning skipped: not Linux with glibc (%s)", sys.platform)


def keep_freed_memory() -> bool:
    """Fix glibc's thresholds and use one arena in this process; whether it did.

    Call it first thing in ``main``, before tensors are allocated and threads
    started: blocks mapped before the call are still unmapped when freed, and a
    thread that has allocated keeps its own arena.
    """
    global _kept
    if _kept:
        return True
    if not sys.platform.startswith("linux"):
        _say_skipped()
        return False
    if any(name in os.environ for name in _USER_SETTINGS):
        return False
    try:
        # The C library this process already runs on; find_library would start
        # ldconfig first, at every command's start.
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        _say_skipped()
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success, 0 on error.
    _kept = bool(
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
        and mallopt(_M_ARENA_MAX, ARENAS)
    )
    if not _kept:
        log.debug("mallopt refused the thresholds; glibc's defaults stay")
    return _kept


def freed_memory_kept() -> bool:
    """Whether :func:`keep_freed_memory` has fixed the thresholds here."""
    return _kept
