"""Test support: modules' commands run in the background (``tests/prefetch.py``)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import prefetch

pytestmark = pytest.mark.slow  # starts processes


def _folders(tmp_path):
    """A new folder for each plan, as the session's ``mktemp`` gives."""
    return lambda name: Path(tempfile.mkdtemp(prefix=name, dir=tmp_path))


def _python(code: str) -> prefetch.Command:
    return prefetch.Command([sys.executable, "-c", code], dict(os.environ))


def _two_waves(tmp):
    first = yield {
        "a": _python("print(6 * 7)"),
        "b": _python("import sys; sys.exit(3)"),
    }
    second = yield {"c": _python(f"print({first['a'].stdout.strip()} + 1)")}
    return first["b"].returncode, second["c"].stdout.strip()


@prefetch.plan("squares", per="n")
def _square(tmp, n):
    done = yield {"a": _python(f"print({n} * {n})")}
    return tmp, done["a"].stdout.strip()


def _fails(tmp):
    done = yield {
        "a": _python("import sys; print('why', file=sys.stderr); sys.exit(1)")
    }
    assert done["a"].returncode == 0, done["a"].stderr


def _priority(tmp):
    code = (
        "import os, pathlib\n"
        "group = pathlib.Path('/proc/self/autogroup').read_text().split()[-1]\n"
        "print(os.sched_getscheduler(0), os.getsid(0) == os.getpid(), group)\n"
    )
    done = yield {"a": _python(code)}
    return done["a"].stdout.split()


def _endless(tmp):
    yield {"a": _python("import time; time.sleep(600)")}


def _endless_too(tmp):
    yield from _endless(tmp)


def test_each_wave_gets_the_results_of_the_one_before(tmp_path):
    prefetcher = prefetch.Prefetcher(_folders(tmp_path))
    assert prefetcher.result(_two_waves, timeout=60) == (3, "43")


def test_a_plan_per_value_runs_once_for_each_selected_value(tmp_path):
    prefetcher = prefetch.Prefetcher(_folders(tmp_path))

    def item(fixtures, **params):
        return SimpleNamespace(
            module=sys.modules[__name__],
            fixturenames=fixtures,
            callspec=SimpleNamespace(params=params),
        )

    selected = [item(["squares"], n=3), item(["squares"], n=3), item(["tmp_path"])]
    prefetcher.start_selected([*selected, item(["squares"], n=4)])
    assert len(prefetcher._running) == 2  # one run for 3, one for 4
    assert prefetcher.result(_square, 4, timeout=60)[1] == "16"
    assert prefetcher.result(_square, 3, timeout=60)[1] == "9"
    assert len(prefetcher._running) == 2
    assert prefetcher.result(_square, 5, timeout=60)[1] == "25"  # asked: started


def test_a_plan_that_fails_fails_the_fixture_that_asks(tmp_path):
    prefetcher = prefetch.Prefetcher(_folders(tmp_path))
    prefetcher.start(_fails)
    with pytest.raises(AssertionError, match="why"):
        prefetcher.result(_fails, timeout=60)


@pytest.mark.skipif(
    not Path("/proc/self/autogroup").exists(), reason="Linux's autogroups only"
)
def test_commands_run_at_idle_priority_in_a_session_of_the_lowest_share(tmp_path):
    prefetcher = prefetch.Prefetcher(_folders(tmp_path))
    policy, own_session, session_nice = prefetcher.result(_priority, timeout=60)
    assert int(policy) == os.SCHED_IDLE
    assert own_session == "True"
    assert session_nice == "19"  # each session gets an equal share otherwise
    foreground = prefetch.Prefetcher(_folders(tmp_path), background=False)
    assert foreground.result(_priority, timeout=60)[::2] == [str(os.SCHED_OTHER), "0"]


def test_close_kills_what_still_runs_and_a_wait_has_a_limit(tmp_path):
    prefetcher = prefetch.Prefetcher(_folders(tmp_path))
    with pytest.raises(TimeoutError, match="_endless: not done in 1 s"):
        prefetcher.result(_endless, timeout=1)
    assert prefetcher._running[_endless, ()].wave["a"].completed().returncode == -9
    prefetcher.start(_endless_too)
    command = prefetcher._running[_endless_too, ()].wave["a"]
    assert command.started
    assert not command.finished()
    prefetcher.close()
    assert command.completed().returncode == -9
