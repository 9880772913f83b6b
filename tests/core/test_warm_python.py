"""The warm parent's children behave as new ``python`` processes to the tests.

tests/warm_python.py forks them from a Python that has imported torch: each
must see its own arguments, environment and working directory, write its own
output, exit with python's exit codes, die of a signal, and import nothing of
the workbench until it asks.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.warm_python import WarmPythons

pytestmark = pytest.mark.slow  # starts a process that imports torch

CHILD = """
import os, sys
print(sys.argv[1:], os.getcwd(), os.environ["WARM_TEST"])
print("workbench" in sys.modules, "torch" in sys.modules, file=sys.stderr)
sys.exit(int(sys.argv[1]))
"""


@pytest.fixture(scope="module")
def pythons():
    started = WarmPythons()
    yield started
    started.close()


def test_a_child_has_its_own_argv_cwd_env_output_and_exit_code(pythons, tmp_path):
    env = {**os.environ, "WARM_TEST": "first"}
    done = pythons.run(["-c", CHILD, "3", "x"], env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 3
    assert done.stdout == f"['3', 'x'] {tmp_path} first\n"
    assert done.stderr == "False True\n"  # torch preloaded, the workbench not
    env["WARM_TEST"] = "second"
    again = pythons.run(["-c", CHILD, "0"], env=env, cwd=tmp_path, timeout=60)
    assert (again.returncode, again.stdout.split()[-1]) == (0, "second")


def test_a_module_runs_as_main_and_an_uncaught_error_exits_1(pythons, tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("raise ValueError('told')\n")
    done = pythons.run([str(script)], cwd=tmp_path, timeout=60)
    assert done.returncode == 1
    assert "ValueError: told" in done.stderr
    # python puts a script's folder first on its path, and not the cwd.
    (tmp_path / "sub").mkdir()
    where = tmp_path / "sub" / "where.py"
    where.write_text("import sys; print(sys.path[0]); print('' in sys.path)\n")
    done = pythons.run([str(where)], cwd=tmp_path, timeout=60)
    assert done.stdout.splitlines() == [str(tmp_path / "sub"), "False"]
    helped = pythons.run(["-m", "workbench", "--help"], cwd=tmp_path, timeout=60)
    assert helped.returncode == 0
    assert "usage: ptcore-workbench" in helped.stdout


def test_signals_reach_the_child_and_end_it_as_python_would(pythons, tmp_path):
    waiting = "import sys, time; print('ready', flush=True); time.sleep(60)"
    process = pythons.popen(["-c", waiting], cwd=tmp_path)
    while "ready" not in process.output()[0]:
        assert process.poll() is None
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)  # KeyboardInterrupt, then python's -2
    assert process.wait(timeout=30) == -signal.SIGINT
    assert "KeyboardInterrupt" in process.output()[1]
    killed = pythons.popen(["-c", waiting], cwd=tmp_path)
    killed.kill()
    assert killed.wait(timeout=30) == -signal.SIGKILL
