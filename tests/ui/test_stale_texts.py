"""Texts a user reads, right in the corner cases (issue 34, item 26):
no "nan", no "1 classes", no "0.0%" for a few trainable parameters, no raw
UTC time, no sentence cut off."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from workbench.core.data.folder_check import DataReport
from workbench.ui.formatting import local_time, rate, trainable_share


def test_a_small_trainable_share_keeps_its_digits():
    assert trainable_share(1_539, 11_000_000) == "0.014%"
    assert trainable_share(1, 10**9) == "<0.01%"
    assert trainable_share(995, 1000) == "99.5%"
    assert trainable_share(9_995, 10_000) == "99.9%"  # not "100%" while one is frozen
    assert trainable_share(10, 10) == "100.0%"
    assert trainable_share(0, 10) == "0.0%"


def test_no_measured_speed_reads_as_a_dash_not_nan():
    assert rate(math.nan) == "\u2013"
    assert rate(1234.4) == "1,234"


def test_times_are_shown_in_local_time():
    utc = datetime(2026, 12, 5, 9, 30, tzinfo=UTC)
    assert local_time(utc.isoformat()) == utc.astimezone().strftime("%Y-%m-%d %H:%M")


def test_one_class_is_not_one_classes(tmp_path):
    report = DataReport(tmp_path, classes=("cats",), counts={"all": {"cats": 3}})
    assert report.lines()[0] == f"{tmp_path}: 1 class (all)"
    two = DataReport(tmp_path, classes=("a", "b"), counts={"all": {"a": 1, "b": 1}})
    assert two.lines()[0] == f"{tmp_path}: 2 classes (all)"


def test_the_model_panel_counts_a_small_trainable_share(qtbot, window):
    window.model_panel.show_counts(11_000_000, 1_539)
    assert window.model_panel.trainable_label.text() == "1,539 (0.014%)"


def test_a_job_stopped_while_its_processes_start_claims_no_step_or_checkpoint(
    qtbot, window
):
    from workbench.ui.process_job import STOPPED_EXIT_CODE, JobEnded

    window.training_panel.show_position(0, 90)  # an earlier run's bar
    window.jobs._last = None  # no step logged yet
    window.jobs._on_controller_job_ended(JobEnded(STOPPED_EXIT_CODE, None))
    assert (
        window.training_panel.progress_bar.format() == "stopped before the first step"
    )
    status = window.status_label.text()
    assert status == "Stopped before the first step: nothing was trained or saved"
    assert "checkpoint" not in status
