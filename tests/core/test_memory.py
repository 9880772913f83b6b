"""Freed memory stays in the process: a step's blocks are not faulted in again.

Each check runs in a fresh interpreter: glibc's thresholds are process-wide and
blocks mapped before the call behave as before it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from workbench.core.host import memory
from workbench.core.host.memory import _USER_SETTINGS

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="glibc's malloc is Linux's"
)

# Training's pattern: the same large blocks allocated, written and freed again
# every step (through the C library's malloc, as torch's CPU allocator does; no
# Python objects in between, so the heap's layout is the same every run).
# Prints the page faults of five steps after a first one.
_STEPS = textwrap.dedent(
    """
    import ctypes, resource, sys
    from workbench.core.host.memory import keep_freed_memory

    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, (ctypes.c_size_t,)
    libc.free.argtypes = (ctypes.c_void_p,)
    if sys.argv[1] == "keep":
        assert keep_freed_memory()
    SIZE = 3 << 20

    def step():
        blocks = [libc.malloc(SIZE) for _ in range(40)]  # 120 MiB
        for block in blocks:
            ctypes.memset(block, 1, SIZE)
        for block in reversed(blocks):
            libc.free(block)

    step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        step()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    """
)


def _python(code: str, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def _clean_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in _USER_SETTINGS:
        env.pop(name, None)
    return env


@pytest.mark.slow
def test_kept_memory_is_not_faulted_in_again_each_step():
    default = int(_python(_STEPS, "default", env=_clean_env()))
    kept = int(_python(_STEPS, "keep", env=_clean_env()))
    # 5 steps of 120 MiB (30,720 pages each): glibc's defaults give it back and
    # fault it in again every step; kept, it is reused.
    assert default > 100_000
    assert kept < 1_000, (kept, default)


# A worker thread (the window's trainer) allocates a tensor: is it on the main
# thread's heap, or in an arena of the thread's own?
_THREAD_BLOCK = textwrap.dedent(
    """
    import sys, threading
    import torch
    from workbench.core.host.memory import keep_freed_memory

    if sys.argv[1] == "keep":
        assert keep_freed_memory()

    def heap():
        for line in open("/proc/self/maps"):
            if line.rstrip().endswith("[heap]"):
                return [int(v, 16) for v in line.split()[0].split("-")]

    found = []

    def work():
        block = torch.ones(2 * 1024 * 1024 // 4)  # 2 MiB, written
        low, high = heap()
        found.append(low <= block.data_ptr() < high)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    print(found[0])
    """
)


@pytest.mark.slow
def test_a_worker_threads_blocks_come_from_the_main_heap():
    # A thread's own arena unmaps its 64 MiB heaps once free: the trainer
    # thread would fault its blocks in again every step.
    assert _python(_THREAD_BLOCK, "default", env=_clean_env()) == "False"
    assert _python(_THREAD_BLOCK, "keep", env=_clean_env()) == "True"


@pytest.mark.slow
def test_every_command_keeps_freed_memory():
    # The window and torchrun's workers start through the same main().
    code = textwrap.dedent(
        """
        from workbench.cli.commands import main
        from workbench.core.host.memory import freed_memory_kept
        main(["devices"])
        print(freed_memory_kept())
        """
    )
    assert _python(code, env=_clean_env()).splitlines()[-1] == "True"


@pytest.mark.slow
def test_a_users_own_malloc_settings_are_kept():
    env = _clean_env() | {"MALLOC_TRIM_THRESHOLD_": "131072"}
    code = (
        "from workbench.core.host.memory import keep_freed_memory; "
        "print(keep_freed_memory())"
    )
    assert _python(code, env=env) == "False"


def test_elsewhere_malloc_tuning_is_skipped_and_said_once(monkeypatch, caplog):
    # A command run in this process (the trained_mlp_checkpoint fixture) may
    # have kept freed memory already; that answer would hide the check.
    monkeypatch.setattr(memory, "_kept", False)
    monkeypatch.setattr(sys, "platform", "darwin")
    memory._say_skipped.cache_clear()
    with caplog.at_level("INFO", logger=memory.__name__):
        assert memory.keep_freed_memory() is False
        assert memory.keep_freed_memory() is False
    memory._say_skipped.cache_clear()
    assert not memory.freed_memory_kept()
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1, said
    assert "malloc tuning skipped: not Linux with glibc" in said[0]


def test_without_glibc_malloc_tuning_is_skipped_and_said(monkeypatch, caplog):
    # musl: Linux, but its C library has no mallopt.
    monkeypatch.setattr(memory, "_kept", False)
    for name in _USER_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(memory.ctypes, "CDLL", lambda name: object())
    memory._say_skipped.cache_clear()
    with caplog.at_level("INFO", logger=memory.__name__):
        assert memory.keep_freed_memory() is False
    memory._say_skipped.cache_clear()
    said = [r.getMessage() for r in caplog.records]
    assert said == [f"malloc tuning skipped: not Linux with glibc ({sys.platform})"]
