"""The engine's side of a profile asked for mid-run: start it, step it, end it.

A profile is asked for through ``TrainControl.request_profile`` (the window's
Run ▸ Profile the next 20 steps, ``train --profile-steps N``) and starts at the
next batch boundary. The step clock names each phase in the trace while the
profiler warms up and records; the profiler's own work between two steps is
kept out of the step time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import torch

from workbench.core.events import Notice, TrainEvent
from workbench.core.perf.profiling import ProfileError, StepProfiler
from workbench.core.train.step_clock import StepClock


class ProfiledSteps:
    """At most one profile at a time over a run's steps."""

    def __init__(self, clock: StepClock, device: torch.device) -> None:
        self.clock = clock
        self.device = device
        self.profiler: StepProfiler | None = None

    def start(self, steps: int, trace_path: Path) -> Iterator[TrainEvent]:
        """Begin profiling from the step in hand (a notice says which steps)."""
        if self.profiler is not None:
            yield Notice("a profile is being recorded already: asked again, ignored")
            return
        profiler = StepProfiler(steps, trace_path, self.device)
        profiler.start()
        self.profiler = profiler
        self.clock.label_phases(profiler.labelling)
        skipped = profiler.wait + profiler.warmup
        yield Notice(
            f"profiling: {skipped} steps to warm up, then {steps} recorded into "
            f"{trace_path}"
        )

    def after_step(self) -> Iterator[TrainEvent]:
        """A step ended: move the profiler on; its report once it has them all."""
        profiler = self.profiler
        if profiler is None:
            return
        self.clock.label_phases(False)
        profiler.step()
        self.clock.label_phases(profiler.labelling)
        self.clock.restart()  # the profiler's own work is no step's time
        if profiler.done:
            yield from self.end()

    def end(self) -> Iterator[TrainEvent]:
        """Write the trace (fewer steps if the run ends first) and report it."""
        profiler, self.profiler = self.profiler, None
        if profiler is None:
            return
        self.clock.label_phases(False)
        try:
            yield profiler.finish()
        except ProfileError as exc:
            yield exc.report
            yield Notice(str(exc))

    def close(self) -> None:
        """The run failed: stop profiling, write nothing."""
        if self.profiler is not None:
            self.profiler.close()
            self.profiler = None
            self.clock.label_phases(False)
