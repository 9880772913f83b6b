"""A ``torch.profiler`` trace of a few training steps, and its top operators.

The engine makes a :class:`StepProfiler`, wraps each phase of every step in
:meth:`StepProfiler.phase`, calls :meth:`StepProfiler.step` after each step and
:meth:`StepProfiler.finish` once :attr:`StepProfiler.done` (or when the run
ends first). The profiler waits ``wait`` steps, warms up for ``warmup`` (its
first recorded steps are slow) and records ``steps``; the trace is written as
Chrome-trace JSON, which Perfetto and ``chrome://tracing`` open.

torch's own writer (Kineto's) reports a full disk only in a log line and
leaves ``<path>.tmp`` behind, so the trace goes through torch's Python writer,
which raises the ``OSError``, into a temp file that is renamed into place.
"""

from __future__ import annotations

import contextlib
import json
import warnings
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from torch.profiler import ProfilerAction, ProfilerActivity

from workbench.core.atomic_files import write_atomically_by_name
from workbench.core.events import OperatorTime, ProfileReport
from workbench.core.train.step_clock import PHASES

LABEL_PREFIX = "workbench/"
MAX_STEPS = 500  # a trace of more steps takes minutes to write and to open
TOP_OPERATORS_KEPT = 25
HOW_TO_OPEN = (
    "Open the trace at https://ui.perfetto.dev (Open trace file), "
    "or in Chrome at chrome://tracing (Load)."
)

_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
# Warm-up steps are labelled too: they should cost what recorded ones do.
_LABELLED = (ProfilerAction.WARMUP, *_RECORDING)
_HOST = torch.autograd.DeviceType.CPU
_NO_LABEL = contextlib.nullcontext()  # reusable: nothing to enter or leave


class ProfileError(Exception):
    """The trace could not be written; ``report`` still has the operators table."""

    def __init__(self, message: str, report: ProfileReport) -> None:
        super().__init__(message)
        self.report = report


def check_steps(steps: Any) -> int:
    """``steps`` if it is a step count a profile can record, else ``ValueError``."""
    if isinstance(steps, bool) or not isinstance(steps, int):
        raise ValueError(f"the steps to profile must be a whole number, not {steps!r}")
    if not 1 <= steps <= MAX_STEPS:
        raise ValueError(
            f"the steps to profile must be from 1 to {MAX_STEPS}, not {steps} "
            "(a longer trace is too big to open)"
        )
    return steps


class StepProfiler:
    """Record ``steps`` training steps with ``torch.profiler`` after a warm-up.

    Parameters
    ----------
    steps : int
        Steps to record, 1 to :data:`MAX_STEPS`.
    trace_path : Path
        Where the Chrome-trace JSON goes (its folder is made if missing); not
        ``.gz``, which torch would compress.
    device : torch.device
        On CUDA the kernels are recorded too, and operators ranked by GPU time.
    wait, warmup : int
        Steps to skip, then steps profiled but thrown away, before recording.
    """

    def __init__(
        self,
        steps: int,
        trace_path: Path,
        device: torch.device,
        wait: int = 1,
        warmup: int = 2,
    ) -> None:
        self.steps = check_steps(steps)
        if wait < 0 or warmup < 0:
            raise ValueError(f"wait and warmup must be >= 0, not {wait}, {warmup}")
        self.trace_path = Path(trace_path)
        if self.trace_path.suffix == ".gz":
            why = f"the trace is plain JSON: name it *.json, not {trace_path}"
            raise ValueError(why)
        self.wait, self.warmup = wait, warmup
        self._cuda = torch.device(device).type == "cuda"
        self._profile: torch.profiler.profile | None = None
        self._stack = contextlib.ExitStack()
        self._labelling = False  # phase() labels only while the profiler runs
        self._steps_seen = 0
        self._recorded = 0
        self._ready = False  # the recording window is over
        self._outcome: ProfileReport | ProfileError | None = None

    def start(self) -> None:
        """Start the schedule; the first step begins now."""
        if self._profile is not None:
            raise RuntimeError("this StepProfiler was started already")
        activities = [ProfilerActivity.CPU]
        if self._cuda:
            activities.append(ProfilerActivity.CUDA)
        with warnings.catch_warnings():
            # No warm-up is the caller's choice, not news for the user.
            warnings.filterwarnings("ignore", "Profiler won't be using warmup")
            schedule = torch.profiler.schedule(
                wait=self.wait, warmup=self.warmup, active=self.steps, repeat=1
            )
        self._profile = torch.profiler.profile(
            activities=activities,
            schedule=schedule,
            on_trace_ready=self._on_trace_ready,
        )
        # As a context: its exit also drops the step counter torch keeps.
        self._stack.enter_context(self._profile)
        self._labelling = self._profile.current_action in _LABELLED

    @property
    def labelling(self) -> bool:
        """Whether the phases of the step in progress should be labelled."""
        return self._labelling

    def phase(self, name: str) -> AbstractContextManager[Any]:
        """A ``workbench/<name>`` range in the trace while profiling, else a no-op."""
        if self._labelling:
            return torch.profiler.record_function(LABEL_PREFIX + name)
        return _NO_LABEL

    def step(self) -> None:
        """A training step ended."""
        if self._profile is None:
            raise RuntimeError("call StepProfiler.start() before step()")
        if self._outcome is not None or self._ready:
            return
        if self._profile.current_action in _RECORDING:
            self._recorded += 1
        self._steps_seen += 1
        self._profile.step()
        self._labelling = self._profile.current_action in _LABELLED

    @property
    def done(self) -> bool:
        """All the steps asked for are recorded: time to :meth:`finish`."""
        return self._ready

    def _on_trace_ready(self, _profile: Any) -> None:
        # Only noted: writing the trace waits for finish(), so that a full disk
        # is raised there and never from inside a training step.
        self._ready = True

    def finish(self) -> ProfileReport:
        """Stop profiling, write the trace, return what it found.

        Called again, it returns the same report (or raises the same error).

        Raises
        ------
        ProfileError
            The trace could not be written (a full disk); nothing is left at
            ``trace_path`` and the error's ``report`` has the operators.
        """
        if self._outcome is None:
            self._outcome = self._finish()
        if isinstance(self._outcome, ProfileError):
            raise self._outcome
        return self._outcome

    def close(self) -> None:
        """Stop profiling without writing anything (the run failed); idempotent."""
        self._labelling = False
        self._stack.close()

    def _finish(self) -> ProfileReport | ProfileError:
        self.close()  # an early stop while recording makes the trace ready now
        if self._profile is None or self._recorded == 0:
            return ProfileReport("", 0, self.steps, (), (), self._none_recorded())
        profile = self._profile
        averages = profile.key_averages()
        report = ProfileReport(
            trace_path=str(self.trace_path),
            steps_recorded=self._recorded,
            steps_asked=self.steps,
            top_operators=top_operators(averages, self._cuda),
            phase_seconds=phase_seconds(averages),
            note=self._fewer_recorded(),
            measured_on="CUDA" if self._cuda else "CPU",
        )
        try:
            export_trace_atomically(profile, self.trace_path)
        except OSError as exc:
            why = exc.strerror or str(exc)
            message = (
                f"cannot write the profiler trace {self.trace_path}: {why}; "
                "nothing was left there"
            )
            note = f"the trace was not written: {why}"
            unwritten = replace(report, trace_path="", note=_join(report.note, note))
            error = ProfileError(message, unwritten)
            error.__cause__ = exc
            return error
        return report

    def _none_recorded(self) -> str:
        first = self.wait + self.warmup + 1
        return (
            f"no step was recorded: the run ended after {self._steps_seen} "
            f"step(s), and the profiler records from step {first} on "
            f"(after {self.wait} to wait and {self.warmup} to warm up)"
        )

    def _fewer_recorded(self) -> str:
        if self._recorded >= self.steps:
            return ""
        return (
            f"the run ended first: {self._recorded} of the {self.steps} steps "
            "asked for were recorded"
        )


def _join(*notes: str) -> str:
    return "; ".join(note for note in notes if note)


def export_trace_atomically(profile: torch.profiler.profile, path: Path) -> Path:
    """Write ``profile``'s Chrome trace to ``path``: whole, or not at all.

    Raises the writer's ``OSError`` (a full disk) with any temp file removed.
    """
    # Python's writer: Kineto's logs a full disk instead of raising it.
    return write_atomically_by_name(
        path, lambda name: profile.export_chrome_trace(name, use_python_export=True)
    )


def _is_label(event: Any) -> bool:
    key = str(event.key)
    return (
        bool(event.is_user_annotation)
        or key.startswith(LABEL_PREFIX)
        or key.startswith("ProfilerStep")
    )


def top_operators(
    averages: Any, cuda: bool = False, keep: int = TOP_OPERATORS_KEPT
) -> tuple[OperatorTime, ...]:
    """The ``keep`` operators with the most self time, from ``key_averages()``.

    Host self time, or on CUDA the GPU time of the kernels each launched; the
    share is of all self time recorded (labels' own time included), so the
    shares of the operators listed sum to at most 1.
    """
    host_events = [e for e in averages if e.device_type == _HOST]
    operators = [e for e in host_events if not _is_label(e)]
    if cuda:
        seconds = {e.key: e.self_device_time_total / 1e6 for e in operators}
        kernels = sum(
            e.self_device_time_total
            for e in averages
            if e.device_type != _HOST and not e.is_user_annotation
        )
        total = max(kernels / 1e6, sum(seconds.values()))
    else:
        seconds = {e.key: e.self_cpu_time_total / 1e6 for e in operators}
        total = max(sum(e.self_cpu_time_total for e in host_events) / 1e6, 0.0)
    ranked = sorted(operators, key=lambda e: seconds[e.key], reverse=True)
    return tuple(
        OperatorTime(
            name=str(e.key),
            self_seconds=float(seconds[e.key]),
            calls=int(e.count),
            share=float(seconds[e.key] / total) if total > 0 else 0.0,
        )
        for e in ranked[:keep]
        if seconds[e.key] > 0
    )


def phase_seconds(averages: Any) -> tuple[tuple[str, float], ...]:
    """Host seconds inside each ``workbench/<phase>`` label, the usual phases first."""
    totals: dict[str, float] = {}
    for event in averages:
        key = str(event.key)
        if key.startswith(LABEL_PREFIX):
            if event.device_type == _HOST:
                name = key.removeprefix(LABEL_PREFIX)
                totals[name] = totals.get(name, 0.0) + event.cpu_time_total / 1e6
    order = {name: index for index, name in enumerate(PHASES)}
    names = sorted(totals, key=lambda name: (order.get(name, len(PHASES)), name))
    return tuple((name, float(totals[name])) for name in names)


def top_operators_lines(report: ProfileReport, limit: int = 10) -> list[str]:
    """An aligned table of the top ``limit`` operators, for the command line."""
    if not report.top_operators:
        return [report.note or "no operator was recorded"]
    rows = report.top_operators[:limit]
    width = max(len("operator"), *(len(_short(op.name)) for op in rows))
    lines = [
        f"Top operators by self {report.measured_on} time, "
        f"{report.steps_recorded} step(s):",
        f"{'operator':<{width}}  {'self ms':>10}  {'share':>6}  {'calls':>7}",
    ]
    for op in rows:
        lines.append(
            f"{_short(op.name):<{width}}  {op.self_seconds * 1e3:>10.3f}  "
            f"{op.share:>6.1%}  {op.calls:>7d}"
        )
    if report.note:
        lines.append(f"({report.note})")
    return lines


def _short(name: str, most: int = 60) -> str:
    # CUDA kernel names run to hundreds of characters.
    return name if len(name) <= most else name[: most - 1] + "…"


def load_chrome_trace(path: str | Path) -> list[dict[str, Any]]:
    """The events of a Chrome-trace JSON file, or ``ValueError`` saying what is wrong.

    Chrome-trace shaped: an object with a ``traceEvents`` list (or that bare
    list), each event an object with a string ``ph`` and ``name`` and, but for
    metadata events (``ph`` "M"), a numeric ``ts``; complete events ("X") a
    numeric ``dur`` too.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not readable JSON: {exc}") from exc
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list) or not events:
        raise ValueError(f"{path} has no traceEvents list")
    for index, event in enumerate(events):
        problem = _event_problem(event)
        if problem:
            raise ValueError(f"{path}: event {index} {problem}")
    return events


def _event_problem(event: Any) -> str:
    if not isinstance(event, dict):
        return "is not an object"
    if not isinstance(event.get("ph"), str) or not isinstance(event.get("name"), str):
        return "has no ph or name"
    number = (int, float)
    if event["ph"] != "M" and not isinstance(event.get("ts"), number):
        return "has no ts"
    if event["ph"] == "X" and not isinstance(event.get("dur"), number):
        return "has no dur"
    return ""


def trace_is_valid(path: str | Path) -> bool:
    """Whether ``path`` loads as Chrome-trace JSON (see :func:`load_chrome_trace`)."""
    try:
        load_chrome_trace(path)
    except ValueError:
        return False
    return True
