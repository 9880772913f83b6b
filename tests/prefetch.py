"""Commands a test module needs, started in the background when the session starts.

Most of the suite runs in pytest's own process and keeps about one of this
machine's two cores busy; a few modules only launch commands (torchrun runs,
mostly) and read what they wrote. Such a module describes its commands as a
*plan*, and the session starts every selected plan at the start, at the lowest
CPU priority (``SCHED_IDLE`` in a session of its own at nice 19 on Linux,
``nice 19`` elsewhere): they use the cores the other tests leave idle and give
way whenever a test needs them.
Modules with plans run last, so their fixtures mostly collect finished results.
A run's own numbers do not depend on its priority, only its wall time does.

A plan is a generator function taking a folder. It yields *waves*, dicts of
name to :class:`Command`, receives each wave's results (name to
``CompletedProcess``) once all of it has finished, and returns what the
module's fixture returns::

    @prefetch.plan("runs")          # the fixture that needs it
    def runs_plan(tmp):
        first = yield {"a": prefetch.Command([...], env)}
        return first["a"].stdout

    @pytest.fixture(scope="module")
    def runs(prefetched):
        return prefetched.result(runs_plan)

With ``per="name"`` a plan runs once for each value of the test parameter
``name`` among the selected tests (one script per configuration, say), takes
the value after its folder, and ``result(plan, value)`` asks for that run.

No thread is started: the plans move on between tests (conftest's hooks call
:meth:`Prefetcher.pump`) and while a fixture waits for its result.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Wave = dict[str, "Command"]
Results = dict[str, subprocess.CompletedProcess]
PlanFunction = Callable[[Path], Generator[Wave, Results, Any]]

# Processes in flight at once: two cores are busy either way, and each torch
# process holds a few hundred MB.
CAPACITY = 8

_plans: dict[str, list[tuple[str, PlanFunction]]] = {}


# The session's prefetcher, for conftest's hooks (None outside a session).
ACTIVE: Prefetcher | None = None


def plan(
    fixture: str, per: str | None = None
) -> Callable[[PlanFunction], PlanFunction]:
    """Register a plan of this module, needed by tests that use ``fixture``.

    With ``per``, the plan runs once for each value of that parameter among
    the selected tests, and takes the value after its folder.
    """

    def register(function: PlanFunction) -> PlanFunction:
        _plans.setdefault(function.__module__, []).append((fixture, per, function))
        return function

    return register


def has_plans(module_name: str) -> bool:
    return module_name in _plans


def succeeded(done: Results) -> None:
    """Every command of a wave exited 0; else the end of the first one's stderr."""
    for result in done.values():
        assert result.returncode == 0, result.stderr[-3000:]


def _in_background() -> None:
    """In the child, in its new session, before it runs: the lowest priority,
    and on Linux death with pytest (a killed session leaves no runs behind)."""
    if hasattr(os, "SCHED_IDLE"):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    else:
        os.nice(19)
    # Linux shares the CPU between sessions (autogroups) before the tasks in
    # them: the new session's own share must be the smallest too.
    with contextlib.suppress(OSError):
        Path("/proc/self/autogroup").write_text("19")
    if sys.platform.startswith("linux"):
        _PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass
class Command:
    """One command line of a wave, with its environment.

    ``processes`` is how many it runs (a torchrun launch of two ranks is three).
    """

    args: list[str]
    env: dict[str, str]
    processes: int = 1
    cwd: Path | None = None
    _process: subprocess.Popen | None = field(default=None, repr=False)
    _output: tuple[Path, Path] | None = field(default=None, repr=False)

    def start(self, folder: Path, name: str, background: bool) -> None:
        self._output = (folder / f"{name}.stdout", folder / f"{name}.stderr")
        with self._output[0].open("wb") as out, self._output[1].open("wb") as err:
            self._process = subprocess.Popen(
                self.args,
                env=self.env,
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,  # killed as a group if left running
                preexec_fn=_in_background if background else None,
            )

    @property
    def started(self) -> bool:
        return self._process is not None

    def finished(self) -> bool:
        return self._process is not None and self._process.poll() is not None

    def completed(self) -> subprocess.CompletedProcess:
        assert self._process is not None
        assert self._output is not None
        stdout, stderr = (path.read_text() for path in self._output)
        return subprocess.CompletedProcess(
            self.args, self._process.returncode, stdout, stderr
        )

    def kill(self) -> None:
        if self._process is not None and self._process.poll() is None:
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._process.wait()


class _Running:
    """One plan: its generator, the wave in flight, and how it ended."""

    def __init__(self, function: PlanFunction, folder: Path, *value: Any) -> None:
        self.function, self.folder = function, folder
        self.generator = function(folder, *value)
        self.wave: Wave = {}
        self.done = False
        self.value: Any = None
        self.error: BaseException | None = None
        self._advance(None)

    def _advance(self, results: Results | None) -> None:
        try:
            wave = (
                next(self.generator)
                if results is None
                else self.generator.send(results)
            )
        except StopIteration as stop:
            self.done, self.value, self.wave = True, stop.value, {}
        except BaseException as exc:  # reported when the fixture asks
            self.done, self.error, self.wave = True, exc, {}
        else:
            self.wave = wave

    def step(self) -> None:
        """Hand a finished wave to the plan."""
        if self.wave and all(c.finished() for c in self.wave.values()):
            self._advance({name: c.completed() for name, c in self.wave.items()})


class Prefetcher:
    """Starts plans, moves them on, and hands their results to fixtures."""

    def __init__(self, make_folder: Callable[[str], Path], background: bool = True):
        self._make_folder = make_folder
        self._background = background
        self._running: dict[tuple[PlanFunction, tuple[Any, ...]], _Running] = {}

    def start(self, function: PlanFunction, *value: Any) -> None:
        """Start the plan (for ``value``, a plan registered with ``per``)."""
        if (function, value) not in self._running:
            folder = self._make_folder(function.__name__)
            self._running[function, value] = _Running(function, folder, *value)
            self.pump()

    def start_selected(self, items: list[Any]) -> None:
        """Start the plans that the selected test items need."""
        for item in items:
            for fixture, per, function in _plans.get(item.module.__name__, ()):
                if fixture not in item.fixturenames:
                    continue
                if per is None:
                    self.start(function)
                else:
                    self.start(function, item.callspec.params[per])

    def pump(self, first: _Running | None = None) -> None:
        """Hand finished waves on and start waiting commands, ``first``'s first."""
        plans = list(self._running.values())
        for running in plans:
            running.step()
        if first is not None:
            plans.remove(first)
            plans.insert(0, first)
        busy = sum(
            c.processes
            for running in plans
            for c in running.wave.values()
            if c.started and not c.finished()
        )
        for running in plans:
            for name, command in running.wave.items():
                if command.started:
                    continue
                if busy and busy + command.processes > CAPACITY:
                    return
                command.start(running.folder, name, self._background)
                busy += command.processes

    def result(
        self, function: PlanFunction, *value: Any, timeout: float = 600.0
    ) -> Any:
        """The plan's return value, waiting at most ``timeout`` from now."""
        self.start(function, *value)
        running = self._running[function, value]
        deadline = time.monotonic() + timeout
        while not running.done:
            if time.monotonic() > deadline:
                for command in running.wave.values():
                    command.kill()
                raise TimeoutError(f"{function.__name__}: not done in {timeout:.0f} s")
            self.pump(first=running)
            time.sleep(0.05)
        if running.error is not None:
            raise running.error
        return running.value

    def close(self) -> None:
        """Kill whatever a plan still runs (a run stopped early, say)."""
        for running in self._running.values():
            for command in running.wave.values():
                command.kill()
            running.generator.close()
