"""Make training in a worker thread run as fast as training on the main thread.

The window iterates the engine in a ``QThread``. With ATen's OpenMP backend
(the ``libgomp`` bundled with torch), a small CNN trained in a non-main thread
ran slower than the same loop on the main thread (about 0.8x on 2 cores) and
at full speed in a child process. The cause (``bench/thread_throughput.py``
prints the numbers):

* libgomp keeps one idle *thread pool* per thread that ever opened a parallel
  region. The main thread's pool (its ``num_threads - 1`` helper threads) stays
  alive after the main thread's last torch op; a worker thread gets a second,
  separate pool the first time it runs a parallel op.
* libgomp counts every pooled thread in ``gomp_managed_threads``. When that
  count exceeds the CPUs the process may use, *every* wait inside *every* team
  uses ``gomp_throttled_spin_count_var`` (100 spins, ~1 us) instead of
  ``GOMP_SPINCOUNT`` (300000 spins, ~3 ms): helpers go to sleep in ``futex``
  between two ops and need a syscall wake-up for the next one
  (``libgomp/config/linux/wait.h: do_spin``).
* Main thread alone: 1 + (n - 1) = n managed threads, not more than n CPUs, full
  spinning. Worker thread while the main thread's pool exists: 1 + 2(n - 1) > n,
  throttled. A child process is a fresh "main thread", hence its full speed.
  The worker pays about one voluntary context switch per parallel region, the
  main thread none; models with few, long parallel regions lose little.

It is not the idle pool spinning (its threads sleep in ``futex``), not the GIL
(the main thread sleeps in ``join()``; a 10 ms Qt timer costs a few percent at
most), and not torch's per-thread settings: ``torch.get_num_threads()``
already matches in a new thread (ATen re-applies the last
``torch.set_num_threads`` lazily per thread), ``mkldnn``, default dtype and
deterministic flags are process-global, and flush-denormal (the MXCSR register)
is copied into threads created after it was set.

The fix: the thread that starts the worker (the GUI thread) releases its own
OpenMP pool right before the start, with ``omp_pause_resource_all`` (OpenMP 5.0;
libgomp frees the *calling* thread's pool and joins its helpers, so it has to
run in that thread, and a later parallel op there simply builds a new pool).
Nothing is needed at process start and no environment variable is set, so
``workbench/cli/commands.py`` needs no change: the command line trains on its main
thread, which is the fast case already.

Usage::

    # GUI thread, after its own torch work for the run, right before start():
    threads.prepare_main_thread()
    qthread.start()

    # first thing in the worker's run(), before any torch work:
    threads.prepare_training_thread()

Torch work on the GUI thread *while* a run trains (a preview prediction, say)
builds a new pool there and throttles the worker again until the next
:func:`prepare_main_thread`/:func:`release_openmp_pool` in that thread, unless
it runs inside :func:`single_threaded`, which builds no pool at all.

On a machine busy with other processes the ranking flips: spinning helpers then
hold CPUs the busy neighbours want, and the throttled (sleeping) worker thread
is *faster* than the main thread, the fixed thread or a child process. The fix
makes the worker behave exactly like the main thread (and the command line) in
both cases; how long OpenMP helpers spin is a process-wide choice
(``OMP_WAIT_POLICY``, ``GOMP_SPINCOUNT``, read once when libgomp loads) left to
its default here.

Both tunings here (releasing libgomp's pool, per-thread nice values) are
Linux's; elsewhere they do nothing and say so once in the log.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import threadpoolctl
import torch

log = logging.getLogger(__name__)

# omp_pause_resource_t from omp.h; libgomp treats soft and hard alike (it frees
# the calling thread's pool either way).
_OMP_PAUSE_HARD = 2


@dataclass(frozen=True, slots=True)
class ThreadSettings:
    """The per-thread torch settings a training thread copies from its starter.

    Attributes
    ----------
    num_threads : int
        Intra-op threads (``torch.get_num_threads()``). OpenMP keeps this per
        thread; ATen re-applies the last ``torch.set_num_threads`` value in a new
        thread only until that thread has run its first parallel op.
    flush_denormal : bool
        Whether denormal floats are flushed to zero (x86 MXCSR, a per-thread
        register, copied only into threads created after it was set).
    """

    num_threads: int
    flush_denormal: bool


# Written by prepare_main_thread() in the starting thread, read by
# prepare_training_thread() in workers; a single reference swap, so no lock.
_starter_settings: ThreadSettings | None = None
_applied = threading.local()
_NOTHING = object()
_runtimes: dict[str, ctypes.CDLL | None] = {}
_runtimes_lock = threading.Lock()


def _denormals_flushed() -> bool:
    """True if the calling thread flushes denormal floats to zero."""
    # 1e-39 is a float32 denormal: it survives only with flushing off.
    return bool((torch.tensor([1e-39], dtype=torch.float32) * 1.0).item() == 0.0)


def current_settings() -> ThreadSettings:
    """The calling thread's per-thread torch settings.

    Returns
    -------
    ThreadSettings
        Intra-op thread count and flush-denormal state of this thread.
    """
    return ThreadSettings(
        num_threads=torch.get_num_threads(), flush_denormal=_denormals_flushed()
    )


def _on_linux() -> bool:
    return sys.platform.startswith("linux")


@functools.cache
def _say_skipped(what: str) -> None:
    """Log once per process that a Linux-only tuning did nothing here."""
    log.info("%s skipped: not Linux (%s)", what, sys.platform)


def _loaded_gomp_paths() -> list[str]:
    """Paths of every libgomp loaded into this process, as threadpoolctl finds them.

    threadpoolctl lists each loaded OpenMP and BLAS library; libgomp is the one
    whose ``prefix`` is ``libgomp`` (``libgomp.so.1``, or a wheel's renamed copy
    such as ``libgomp-a34b3233.so.1``).
    """
    return sorted(
        {
            info["filepath"]
            for info in threadpoolctl.threadpool_info()
            if info.get("internal_api") == "openmp" and info.get("prefix") == "libgomp"
        }
    )


def _gomp_runtimes() -> list[ctypes.CDLL]:
    """Handles on the libgomp copies already loaded (torch's, maybe others')."""
    found: list[ctypes.CDLL] = []
    for path in _loaded_gomp_paths():
        with _runtimes_lock:
            if path not in _runtimes:
                try:
                    # RTLD_NOLOAD: only a handle on the copy already in memory,
                    # never a second copy with pools of its own.
                    lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
                    lib.omp_pause_resource_all.argtypes = [ctypes.c_int]
                    lib.omp_pause_resource_all.restype = ctypes.c_int
                except (OSError, AttributeError):
                    # Too old (before GCC 9) or not loadable: nothing to release.
                    lib = None
                _runtimes[path] = lib
            lib = _runtimes[path]
        if lib is not None:
            found.append(lib)
    return found


def release_openmp_pool() -> bool:
    """Free the calling thread's idle OpenMP helper threads.

    While this thread holds a pool, OpenMP teams of other threads wait by
    sleeping instead of spinning (see the module docstring), which slows a
    small CNN trained in a worker thread. The next parallel op in this thread
    builds a new pool, so calling this is always safe; it is idempotent and
    takes about a millisecond (mostly threadpoolctl listing the loaded
    libraries to find every libgomp, plus joining the helpers).

    Returns
    -------
    bool
        True if a libgomp runtime was found and released this thread's pool;
        False where there is none (not Linux, LLVM/Intel OpenMP, a torch built
        without OpenMP) or the call was refused (inside a parallel region).
    """
    if not _on_linux():
        _say_skipped("releasing the OpenMP pool")
        return False
    released = False
    for lib in _gomp_runtimes():
        if lib.omp_pause_resource_all(_OMP_PAUSE_HARD) == 0:
            released = True
    return released


def prepare_main_thread() -> None:
    """Get the starting thread ready to hand training to a worker thread.

    Call it in the thread that starts the training thread (the GUI thread),
    after that thread's own torch work for the run, immediately before
    ``QThread.start()`` / ``threading.Thread.start()``. It records this
    thread's intra-op thread count and flush-denormal state for
    :func:`prepare_training_thread` to copy, then releases this thread's
    OpenMP pool (:func:`release_openmp_pool`), which is the actual speed fix.
    """
    global _starter_settings
    _starter_settings = current_settings()
    released = release_openmp_pool()
    log.debug(
        "prepared %s for a training thread: %s, OpenMP pool released: %s",
        threading.current_thread().name,
        _starter_settings,
        released,
    )


def prepare_training_thread() -> None:
    """Make the calling (worker) thread train like the main thread.

    Call it first thing inside the training thread, before any torch work.
    Copies the settings recorded by the last :func:`prepare_main_thread` (or,
    if that was never called, the intra-op thread count torch would give a
    new thread) into this thread: intra-op threads and flush-denormal. Grad
    mode is left alone: it is per thread and on in every new thread, which is
    what training needs. Idempotent and cheap: a repeat call with the same
    recorded settings returns at once; a reused thread picks up new ones.
    """
    wanted = _starter_settings
    if getattr(_applied, "settings", _NOTHING) == wanted:
        return
    if wanted is None:
        # No recorded starter: keep the inherited flush state and the thread
        # count ATen hands new threads (the last torch.set_num_threads value).
        num_threads = torch.get_num_threads()
    else:
        num_threads = wanted.num_threads
        torch.set_flush_denormal(wanted.flush_denormal)
    if torch.get_num_threads() != num_threads:
        torch.set_num_threads(num_threads)
    _applied.settings = wanted
    # The native id, not current_thread(): in a thread Python did not start
    # (a QThread) that would register a dummy Thread object, kept for good.
    log.debug(
        "prepared training thread %d: %d intra-op threads%s",
        threading.get_native_id(),
        num_threads,
        "" if wanted is not None else " (prepare_main_thread() was not called)",
    )


@contextmanager
def single_threaded() -> Iterator[None]:
    """Run the calling thread's torch ops on that thread alone, then restore.

    For work too small to share (one 28x28 image through a small model): on
    cores shared with a training thread or other processes, its OpenMP team
    waits for a descheduled helper, and a read that takes 2 ms alone can take
    hundreds of times as long (``bench/canvas_bench.py``). Inside, ATen,
    oneDNN and MKL see one thread and open no parallel region, so this thread
    builds no OpenMP pool and a training thread's helpers keep spinning
    (module docstring).

    ``torch.set_num_threads`` it is, both ways (about a microsecond each):
    setting libgomp's per-thread team size alone leaves oneDNN and MKL at their
    own counts once anything has called ``torch.set_num_threads``, and they
    still wait for helpers. Its count is also the one a thread starting
    meanwhile picks up at its first torch op, so keep the block short; a
    training thread sets its own (:func:`prepare_training_thread`).
    """
    before = torch.get_num_threads()
    if before == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# The nice value a window's training thread adds to its own (Linux: per thread,
# and the OpenMP helpers it starts inherit it). The GUI thread then wins the CPU
# whenever it has work, so a repaint does not wait for a time slice of training.
TRAINER_NICE = 5


def lower_training_priority() -> int | None:
    """Add ``TRAINER_NICE`` to the calling thread's nice value; the new value.

    Call it first thing in a training thread, before its first parallel op, so
    the OpenMP helpers it starts inherit the value. None where the platform
    has no per-thread nice value (only Linux has), or it could not be set.
    """
    if not _on_linux():
        _say_skipped("lowering the training thread's priority")
        return None
    try:
        # Linux applies PRIO_PROCESS with who=0 to the calling thread alone.
        nice = os.getpriority(os.PRIO_PROCESS, 0) + TRAINER_NICE
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    except OSError:
        return None
    return os.getpriority(os.PRIO_PROCESS, 0)
