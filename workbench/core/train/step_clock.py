"""Where each training step's time goes: data, copy, forward, backward, optimizer, rest.

The engine marks the end of every phase and the clock charges the time since
the previous mark to it. The copy to the device happens inside the loader's
iterator, which wraps it in :meth:`StepClock.copying`: it is charged to
``copy`` and taken out of ``data``. The clock also keeps the steps' wall time,
the one images per second are computed from, with the same exclusions (a
pause, a compiling step).

On CUDA the phase marks are CUDA events, read at the log step (which syncs the
device anyway): asynchronous kernels count in the phase that launched them, and
a wait for data that the GPU did not notice, because it was still busy, costs
nothing. The wall time stays the host's clock, so the parts are checked
against it rather than equal to it by construction.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import torch

PHASES = ("data", "copy", "forward", "backward", "optimizer", "other")
DATA, COPY, FORWARD, BACKWARD, OPTIMIZER, OTHER = range(len(PHASES))
# The order the marks come in; the copy is measured inside the data phase.
_NEXT = {DATA: FORWARD, FORWARD: BACKWARD, BACKWARD: OPTIMIZER, OPTIMIZER: OTHER}
_NEXT[OTHER] = DATA


class StepClock:
    """Wall time and per-phase seconds of the training steps since :meth:`take`.

    Parameters
    ----------
    device : torch.device
        CUDA devices time the phases with CUDA events, others with ``perf_counter``.
    phases : bool
        False keeps only the wall time (the benchmark of the split's own cost).
    """

    def __init__(self, device: torch.device, phases: bool = True) -> None:
        self.phases = phases
        self._cuda = phases and device.type == "cuda"
        self._totals = [0.0] * len(PHASES)
        self._wall = 0.0
        self._spans: list[tuple[int, float, Any, Any]] = []  # CUDA events
        self._running = False
        self._last: Any = None  # the previous phase mark
        self._current = DATA  # the phase in progress
        self._wall_mark = 0.0
        self._step_start: tuple[list[float], float, int] = ([], 0.0, 0)
        self._labels: _Labels | None = None  # names the phases in a profiler trace

    def _now(self) -> Any:
        if self._cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def _charge(self, phase: int, start: Any, end: Any, sign: float = 1.0) -> None:
        if self._cuda:
            self._spans.append((phase, sign, start, end))
        else:
            self._totals[phase] += sign * (end - start)

    def restart(self, current: int = DATA) -> None:
        """Time again from now, in phase ``current``: what came before is no step's.

        Called at an epoch's start and after a pause, a compiling step or a copy
        of the weights handed to the window.
        """
        self._running = True
        self._wall_mark = time.perf_counter()
        if self.phases:
            self._last = self._now()
            self._current = current
            self._label(current)
        self._keep_step_start()

    def mark(self, phase: int) -> None:
        """``phase`` ends now: the time since the previous mark was spent in it."""
        if not self._running:
            return
        if self.phases:
            now = self._now()
            self._charge(phase, self._last, now)
            self._last = now
            self._current = _NEXT[phase]
            self._label(self._current)
        if phase == OTHER:  # a step ends
            self._add_wall()
            self._keep_step_start()

    def _add_wall(self) -> None:
        now = time.perf_counter()
        self._wall += now - self._wall_mark
        self._wall_mark = now

    def drop_step(self) -> None:
        """Forget the step in progress (it compiled) and stop until :meth:`restart`."""
        totals, wall, spans = self._step_start
        self._totals, self._wall = list(totals), wall
        del self._spans[spans:]
        self._running = False

    def _keep_step_start(self) -> None:
        if self.phases:
            self._step_start = (list(self._totals), self._wall, len(self._spans))
        else:
            self._step_start = (self._totals, self._wall, 0)

    @contextmanager
    def copying(self) -> Iterator[None]:
        """Wrap a host-to-device copy made while a batch is fetched."""
        if not (self.phases and self._running):
            yield
            return
        start = self._now()
        with _record("copy") if self._labels is not None else nullcontext():
            yield
        end = self._now()
        self._charge(COPY, start, end)
        self._charge(DATA, start, end, sign=-1.0)  # it was inside the data phase

    def take(self) -> tuple[float, tuple[float, ...]]:
        """(wall seconds, seconds in each phase) since the last call.

        The phase in progress is charged up to now and goes on from here. The
        phases are empty when not measured. On CUDA this waits for the device.
        """
        if self._running:
            self._add_wall()
            if self.phases:
                now = self._now()
                self._charge(self._current, self._last, now)
                self._last = now
        totals, wall = self._totals, self._wall
        if self._spans:
            self._spans[-1][3].synchronize()
            for phase, sign, start, end in self._spans:
                totals[phase] += sign * start.elapsed_time(end) / 1000
            self._spans.clear()
        self._totals, self._wall = [0.0] * len(PHASES), 0.0
        self._keep_step_start()
        if not self.phases:
            return wall, ()
        return wall, tuple(max(seconds, 0.0) for seconds in totals)

    def label_phases(self, on: bool) -> None:
        """Name each phase in a profiler's trace (``workbench/<phase>``), or stop."""
        if self._labels is not None:
            self._labels.close()
        self._labels = _Labels() if on and self.phases else None

    def _label(self, phase: int) -> None:
        if self._labels is not None:
            self._labels.enter(PHASES[phase])


class _Labels:
    """One open ``record_function`` range at a time, named after its phase."""

    def __init__(self) -> None:
        self._open: Any = None

    def enter(self, phase: str) -> None:
        self.close()
        self._open = _record(phase)
        self._open.__enter__()

    def close(self) -> None:
        if self._open is not None:
            self._open.__exit__(None, None, None)
            self._open = None


def _record(phase: str) -> Any:
    return torch.profiler.record_function(f"workbench/{phase}")


def split_text(phases: tuple[float, ...]) -> str:
    """``phases`` (seconds a step) in words: the step time, then each part's share.

    For example ``"a step 4.10 ms: data 7%, copy 0%, forward 29%, backward 49%,
    optimizer 10%, other 5%"``; "" when nothing was measured.
    """
    total = sum(phases)
    if len(phases) != len(PHASES) or total <= 0:
        return ""
    parts = ", ".join(
        f"{name} {seconds / total:.0%}"
        for name, seconds in zip(PHASES, phases, strict=True)
    )
    return f"a step {1000 * total:.2f} ms: {parts}"
