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

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="glibc's malloc is Linux's"
)

# Training's pattern: the same large blocks allocated, written and freed again
# every step. Prints the page faults of five steps after a first one.
_STEPS = textwrap.dedent(
    """
    import resource, sys
    import torch
    from workbench.core.memory import keep_freed_memory

    if sys.argv[1] == "keep":
        assert keep_freed_memory()

    def step():
        blocks = [torch.ones(3 * 1024 * 1024 // 4) for _ in range(40)]  # 120 MiB
        del blocks

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
    for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES"):
        env.pop(name, None)
    return env


def test_kept_memory_is_not_faulted_in_again_each_step():
    default = int(_python(_STEPS, "default", env=_clean_env()))
    kept = int(_python(_STEPS, "keep", env=_clean_env()))
    # 5 steps of 120 MiB: glibc's defaults give most of it back and fault it in
    # again (about 60,000 faults here); kept, a few thousand at most.
    assert default > 30_000
    assert kept * 4 < default, (kept, default)


def test_every_command_keeps_freed_memory():
    # The window and torchrun's workers start through the same main().
    code = textwrap.dedent(
        """
        from workbench.cli import main
        from workbench.core.memory import freed_memory_kept
        main(["devices"])
        print(freed_memory_kept())
        """
    )
    assert _python(code, env=_clean_env()).splitlines()[-1] == "True"


def test_a_users_own_malloc_settings_are_kept():
    env = _clean_env() | {"MALLOC_TRIM_THRESHOLD_": "131072"}
    code = (
        "from workbench.core.memory import keep_freed_memory; "
        "print(keep_freed_memory())"
    )
    assert _python(code, env=env) == "False"
