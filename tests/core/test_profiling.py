"""A torch.profiler trace of a few steps: a Chrome trace, labelled phases, top ops."""

from __future__ import annotations

import json

import pytest
import torch

from workbench.core.perf.profiling import (
    HOW_TO_OPEN,
    MAX_STEPS,
    OperatorTime,
    ProfileError,
    ProfileReport,
    StepProfiler,
    load_chrome_trace,
    top_operators_lines,
    trace_is_valid,
)

CPU = torch.device("cpu")


def train(profiler: StepProfiler, steps: int) -> None:
    """``steps`` steps of a tiny model, each phase labelled, as the engine does."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs, targets = torch.randn(8, 16), torch.randint(0, 4, (8,))
    for _ in range(steps):
        with profiler.phase("data"):
            x, y = inputs.clone(), targets.clone()
        with profiler.phase("forward"):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        with profiler.phase("backward"):
            loss.backward()
        with profiler.phase("optimizer"):
            optimizer.step()
            optimizer.zero_grad()
        profiler.step()
        if profiler.done:
            return


def names(events: list[dict]) -> set[str]:
    return {event["name"] for event in events}


def test_a_full_profile_is_a_chrome_trace_with_labelled_phases(tmp_path):
    path = tmp_path / "run" / "profile.trace.json"
    profiler = StepProfiler(3, path, CPU, wait=1, warmup=2)
    profiler.start()
    train(profiler, 1 + 2 + 3 + 5)  # more than asked: done stops the loop
    assert profiler.done
    report = profiler.finish()
    assert report.trace_path == str(path)
    assert (report.steps_recorded, report.steps_asked, report.note) == (3, 3, "")
    events = load_chrome_trace(path)
    assert trace_is_valid(path)
    assert {"workbench/forward", "workbench/backward"} <= names(events)
    steps = sorted(n for n in names(events) if n.startswith("ProfilerStep#"))
    assert steps == ["ProfilerStep#3", "ProfilerStep#4", "ProfilerStep#5"]
    forwards = [e for e in events if e["name"] == "workbench/forward"]
    assert len(forwards) == 3  # the warm-up's labels are not in the trace
    assert [p for p in path.parent.iterdir() if p != path] == []  # no temp left
    assert profiler.finish() is report  # asked again: the same report


def test_the_top_operators_are_by_self_time_and_their_shares_add_up(tmp_path):
    profiler = StepProfiler(4, tmp_path / "trace.json", CPU)
    profiler.start()
    train(profiler, 7)
    report = profiler.finish()
    ops = report.top_operators
    assert ops
    assert all(isinstance(op, OperatorTime) for op in ops)
    seconds = [op.self_seconds for op in ops]
    assert seconds == sorted(seconds, reverse=True)
    assert all(0 < op.share <= 1 and op.calls >= 1 for op in ops)
    assert sum(op.share for op in ops) <= 1 + 1e-9
    assert not any(op.name.startswith(("workbench/", "ProfilerStep")) for op in ops)
    assert any(op.name == "aten::addmm" for op in ops)
    addmm = next(op for op in ops if op.name == "aten::addmm")
    assert addmm.calls == 4 * 2  # two Linear layers a step, four steps
    phases = dict(report.phase_seconds)
    assert list(phases) == ["data", "forward", "backward", "optimizer"]
    assert all(seconds > 0 for seconds in phases.values())
    assert report.measured_on == "CPU"


def test_the_report_is_plain_python_and_the_table_lines_up(tmp_path):
    profiler = StepProfiler(2, tmp_path / "trace.json", CPU)
    profiler.start()
    train(profiler, 5)
    report = profiler.finish()
    assert isinstance(report, ProfileReport)
    plain = (str, int, float, tuple, OperatorTime)

    def walk(value):
        assert isinstance(value, plain), type(value)
        if isinstance(value, tuple):
            for item in value:
                walk(item)

    for field in ProfileReport.__dataclass_fields__:
        walk(getattr(report, field))
    lines = top_operators_lines(report, limit=3)
    assert lines[0] == "Top operators by self CPU time, 2 step(s):"
    assert len(lines) == 2 + 3
    assert lines[1].split() == ["operator", "self", "ms", "share", "calls"]
    assert len({len(line) for line in lines[1:]}) == 1  # aligned columns
    assert lines[2].split()[0] == report.top_operators[0].name
    assert "https://ui.perfetto.dev" in HOW_TO_OPEN
    assert "chrome://tracing" in HOW_TO_OPEN


def test_a_run_that_ends_while_recording_still_writes_its_trace(tmp_path):
    path = tmp_path / "trace.json"
    profiler = StepProfiler(20, path, CPU, wait=1, warmup=2)
    profiler.start()
    train(profiler, 1 + 2 + 4)  # the run ends after 4 recorded steps
    assert not profiler.done
    report = profiler.finish()
    assert (report.steps_recorded, report.steps_asked) == (4, 20)
    assert report.note == (
        "the run ended first: 4 of the 20 steps asked for were recorded"
    )
    assert report.trace_path == str(path)
    assert "workbench/forward" in names(load_chrome_trace(path))
    assert top_operators_lines(report)[-1] == f"({report.note})"


@pytest.mark.parametrize("steps_run", [0, 2, 3])
def test_a_run_that_ends_before_recording_leaves_no_file(tmp_path, steps_run):
    # 0: still waiting; 2: warming up; 3: recording began but no step ended.
    profiler = StepProfiler(5, tmp_path / "trace.json", CPU, wait=1, warmup=2)
    profiler.start()
    train(profiler, steps_run)
    report = profiler.finish()
    assert report.trace_path == ""
    assert report.steps_recorded == 0
    assert report.note.startswith(
        f"no step was recorded: the run ended after {steps_run} step(s)"
    )
    assert report.note.endswith(
        "the profiler records from step 4 on (after 1 to wait and 2 to warm up)"
    )
    assert top_operators_lines(report) == [report.note]
    assert list(tmp_path.iterdir()) == []


def test_the_profiler_is_stopped_after_finish_and_close(tmp_path):
    first = StepProfiler(2, tmp_path / "a.json", CPU, wait=1, warmup=2)
    first.start()
    train(first, 3)
    assert torch.autograd._profiler_enabled()  # recording
    first.close()  # a run that failed: nothing written
    assert not torch.autograd._profiler_enabled()
    assert list(tmp_path.iterdir()) == []
    assert first.phase("forward") is first.phase("backward")  # no-op, shared
    second = StepProfiler(1, tmp_path / "b.json", CPU, wait=0, warmup=0)
    second.start()  # a second profile in the same process starts cleanly
    train(second, 1)
    assert second.finish().steps_recorded == 1
    assert not torch.autograd._profiler_enabled()


@pytest.mark.parametrize("steps", [0, -1, MAX_STEPS + 1, 2.5, "20", True])
def test_a_step_count_out_of_range_is_refused_saying_so(tmp_path, steps):
    with pytest.raises(ValueError, match="steps to profile must be"):
        StepProfiler(steps, tmp_path / "trace.json", CPU)


def test_a_compressed_trace_name_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"name it \*\.json"):
        StepProfiler(5, tmp_path / "trace.json.gz", CPU)


def test_a_trace_that_does_not_fit_is_one_clear_error_and_no_file(small_disk):
    path = small_disk.path / "profile.trace.json"
    profiler = StepProfiler(3, path, CPU)
    profiler.start()
    train(profiler, 6)
    small_disk.fill(leave=16384)  # a few pages: the trace needs far more
    with pytest.raises(ProfileError) as caught:
        profiler.finish()
    assert str(caught.value) == (
        f"cannot write the profiler trace {path}: No space left on device; "
        "nothing was left there"
    )
    unwritten = caught.value.report
    assert unwritten.note == "the trace was not written: No space left on device"
    assert unwritten.trace_path == ""
    assert unwritten.top_operators  # the table is still there
    assert sorted(p.name for p in small_disk.path.iterdir()) == [".filler"]


@pytest.mark.parametrize(
    "content",
    [
        "",
        "{",
        "[]",
        '{"traceEvents": {}}',
        '{"traceEvents": [{"ph": "X", "name": "a", "ts": 1}]}',  # X without dur
        '{"traceEvents": [{"name": "a", "ts": 1}]}',
        '{"traceEvents": [{"ph": "i", "name": "a"}]}',
        '{"traceEvents": [3]}',
    ],
)
def test_what_is_not_a_chrome_trace_is_said_to_be_invalid(tmp_path, content):
    path = tmp_path / "trace.json"
    path.write_text(content)
    assert not trace_is_valid(path)
    with pytest.raises(ValueError, match=str(path)):
        load_chrome_trace(path)


def test_a_minimal_chrome_trace_is_valid(tmp_path):
    path = tmp_path / "trace.json"
    events = [
        {"ph": "M", "name": "process_name", "args": {"name": "python"}},
        {"ph": "X", "name": "aten::mm", "ts": 1.5, "dur": 2},
    ]
    path.write_text(json.dumps({"traceEvents": events}))
    assert load_chrome_trace(path) == events
    assert not trace_is_valid(tmp_path / "missing.json")
