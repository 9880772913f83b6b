"""Reproduce trains a run on its own number of processes, whatever the Device
panel says, and always ends with a verdict (issue 34, item 4)."""

from __future__ import annotations

import pytest

from workbench.core.runs.listing import list_runs

from .helpers import FAST
from .test_process_job import JOB, _start_job, job_env  # noqa: F401 (a fixture)


def _select(window, run):
    window.runs_tab.refresh()
    window.runs_panel.select_ids([run.id])


def test_a_one_process_run_is_reproduced_in_the_window_while_processes_is_two(
    qtbot, window
):
    cfg = FAST.replace(max_steps=None, epochs=1, seed=3)
    window.apply_config(cfg)
    with qtbot.waitSignal(window.controller.run_finished, timeout=60_000):
        window.start()
    (original,) = list_runs()
    window.device_panel.set_processes(2)
    _select(window, original)
    with qtbot.waitSignal(window.controller.run_finished, timeout=60_000) as ended:
        window.runs_panel.reproduce_button.click()
        assert window.controller.job is None  # in this process, not a job
    assert ended.args[0].reproduction.reproduced
    assert "reproduced: all" in window.runs_panel.message_label.text()
    assert window.device_panel.processes() == 2  # the user's setting stays


def test_a_reproduction_stopped_early_ends_with_a_verdict(qtbot, window):
    cfg = FAST.replace(max_steps=None, epochs=2, seed=4)
    window.apply_config(cfg)
    with qtbot.waitSignal(window.controller.run_finished, timeout=60_000):
        window.start()
    (original,) = list_runs()
    _select(window, original)
    with qtbot.waitSignal(window.controller.run_finished, timeout=60_000):
        window.runs_panel.reproduce_button.click()
        window.stop()
    text = window.runs_panel.message_label.text()
    assert text == f"{original.id}: not reproduced: the repeat stopped before the end"
    assert window.status_label.text() == text


@pytest.mark.slow
def test_a_two_process_run_is_reproduced_on_two_processes_with_a_verdict(
    qtbot,
    window,
    job_env,  # noqa: F811
):
    controller = window.controller
    with qtbot.waitSignal(controller.job_ended, timeout=90_000) as ended:
        _start_job(qtbot, window, JOB)
    assert ended.args[0].outcome == "finished", ended.args[0].message
    (original,) = list_runs()
    assert original.world_size == 2
    window.device_panel.set_processes(1)
    _select(window, original)
    with qtbot.waitSignal(controller.job_ended, timeout=90_000) as ended:
        window.runs_panel.reproduce_button.click()
        assert controller.job is not None
        assert controller.job.nproc == 2
    repeat = ended.args[0].folder
    verdict = original.folder.info()["last_reproduction"]
    assert verdict.startswith("reproduced: all"), verdict
    assert window.runs_panel.message_label.text() == f"{original.id}: {verdict}"
    assert window.status_label.text() == f"{original.id}: {verdict}"
    repeats = [r for r in list_runs() if r.folder.path == repeat]
    assert repeats[0].folder.info()["reproduction_of"] == original.id
    assert window.device_panel.processes() == 1
    assert controller.session.reproducing is None  # no later run is judged
