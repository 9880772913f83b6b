"""A profile asked of a running engine: each phase named in a Chrome trace, top ops."""

from __future__ import annotations

import json

import pytest

from workbench.cli.commands import main
from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.perf.profiling import trace_is_valid
from workbench.core.train.engine import TrainControl, fit, prepare_run


def test_a_profile_asked_mid_run_records_its_steps_with_each_phase_named(
    tiny_arrays, tmp_path
):
    cfg = TrainConfig(model="small-cnn", epochs=2, batch_size=32, log_every=1)
    control = TrainControl()
    trace = tmp_path / "trace.json"
    control.request_profile(4, trace)
    events = fit(prepare_run(cfg, arrays=tiny_arrays), control)
    reports = [e for e in events if isinstance(e, E.ProfileReport)]
    assert len(reports) == 1
    report = reports[0]
    assert report.steps_recorded == 4
    assert report.trace_path == str(trace)
    assert report.note == ""
    assert trace_is_valid(trace)
    names = {e.get("name") for e in json.loads(trace.read_text())["traceEvents"]}
    for phase in ("data", "forward", "backward", "optimizer", "other"):
        assert f"workbench/{phase}" in names, phase
    assert dict(report.phase_seconds)["backward"] > 0
    assert report.top_operators
    notices = [e.message for e in events if isinstance(e, E.Notice)]
    assert any(m.startswith("profiling: 3 steps to warm up, then 4") for m in notices)
    # The run itself went on to its end, unchanged.
    assert events[-1].global_step == 16


def test_a_run_that_ends_first_writes_what_it_recorded(tiny_arrays, tmp_path):
    cfg = TrainConfig(model="mlp", epochs=1, batch_size=32, log_every=1, max_steps=5)
    control = TrainControl()
    control.request_profile(20, tmp_path / "trace.json")
    events = fit(prepare_run(cfg, arrays=tiny_arrays), control)
    report = next(e for e in events if isinstance(e, E.ProfileReport))
    assert report.steps_recorded == 2  # steps 4 and 5, after 1 waited and 2 warmed up
    assert "2" in report.note
    assert trace_is_valid(tmp_path / "trace.json")


def test_a_profile_of_too_many_steps_is_refused_before_the_run():
    with pytest.raises(ValueError, match="from 1 to 500"):
        TrainControl().request_profile(0, "trace.json")


@pytest.mark.slow
def test_train_profile_steps_prints_the_top_operators_and_how_to_open(
    runs_root, capsys
):
    flags = ["--model", "mlp", "--max-steps", "8", "--batch-size", "64"]
    code = main(["train", "--quiet", *flags, "--profile-steps", "3"])
    assert code == 0
    out = capsys.readouterr().out
    assert "profile: 3 steps recorded into " in out
    trace = out.split("profile: 3 steps recorded into ")[1].split()[0]
    assert trace.endswith("trace.json")
    assert trace_is_valid(trace)
    assert "ui.perfetto.dev" in out
    assert "where the time went: a step " in out


@pytest.mark.parametrize(
    ("flags", "why"),
    [
        (["--profile-steps", "0"], "--profile-steps: the steps to profile must be"),
        (["--profile-steps", "5", "--nproc", "2"], "records one process"),
        (["--profile-steps", "5", "--folds", "3"], "is for one run"),
    ],
)
def test_a_bad_profile_flag_is_one_line_and_exit_2(flags, why, runs_root, capsys):
    assert main(["train", "--quiet", *flags]) == 2
    err = capsys.readouterr().err
    assert why in err
    assert len(err.strip().splitlines()) == 1
