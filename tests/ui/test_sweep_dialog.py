"""Run ▸ Sweep…: a sweep from the window, followed, stopped, resumed, its best used."""

from __future__ import annotations

import pytest

from tests.core.test_sweep_importance import _synthetic_ledger
from workbench.core.runs.listing import list_runs
from workbench.core.tuning.progress import read_progress

from .helpers import FAST

pytestmark = pytest.mark.gui

CFG = FAST.replace(model="mlp", epochs=2, batch_size=64, lr=0.01)


def _open(window):
    window.apply_config(CFG)
    window.commands.sweep.trigger()
    return window.sweep_dialog


def test_a_bad_space_is_said_in_the_dialog_and_starts_nothing(qtbot, window):
    dialog = _open(window)
    dialog.fields["lr"][1].setText("0.1 0.001")
    dialog.start()
    assert "Cannot sweep: --sweep-lr 0.1 0.001: the range is empty or inverted" in (
        dialog.message.text()
    )
    assert dialog.job is None
    assert list_runs() == []


def test_importances_over_the_ledger_are_the_panels_data_and_models(qtbot, window):
    _synthetic_ledger()  # 40 finished mlp runs on digits where only lr matters
    dialog = _open(window)
    dialog.ledger_button.click()
    text = dialog.ledger_label.text()
    assert text.startswith("Over 40 finished runs of mlp on digits: importances: lr ")
    window.apply_config(CFG.replace(model="small-cnn"))
    dialog.ledger_button.click()
    assert dialog.ledger_label.text().startswith("Over 1 finished runs of small-cnn")


def test_a_sweep_runs_stops_resumes_and_offers_its_best(qtbot, window):
    dialog = _open(window)
    assert dialog.fields["lr"][0].isChecked()  # the rate varies by default
    assert dialog.fields["lr"][1].text() == "1e-03 1e-01"  # around the panel's
    dialog.trials.setValue(4)
    dialog.pruner.setCurrentText("none")
    name = dialog.study.text()
    dialog.start()
    assert dialog.job is not None
    assert not dialog.start_button.isEnabled()
    qtbot.waitUntil(lambda: _finished(name) >= 1, timeout=120_000)
    dialog.stop()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=60_000)
    assert dialog.message.text().startswith("Stopped: the trials that finished")
    stopped_at = read_progress(name).finished
    assert 1 <= stopped_at < 4
    # Resume: the same study goes on from where it stopped.
    assert dialog.start_button.text() == "Resume"
    dialog.start()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=180_000)
    assert dialog.message.text() == "The sweep finished."
    progress = read_progress(name)
    assert progress.finished == 4
    assert dialog.progress_bar.value() == 4
    assert dialog.progress_bar.format().startswith("4 of 4 trials finished")
    assert dialog.plot.curves  # a line per trial
    assert dialog.importances.text().startswith("importances: ")
    best = progress.best
    assert dialog.best_label.text().startswith(
        f"Best trial: {best.number}, {best.value:.1%}"
    )
    # Every trial a run of the ledger, the stopped one kept as such.
    swept = [r for r in list_runs() if r.sweep.startswith(f"{name} #")]
    assert {r.status for r in swept} <= {"finished", "stopped"}
    assert sum(r.status == "finished" for r in swept) == 4
    window.training_panel.lr_spin.setValue(0.5)
    dialog.use_button.click()
    assert window.current_config().lr == pytest.approx(best.params["lr"], rel=1e-3)
    assert dialog.start_button.text() == "Start"  # done: nothing to resume


def test_closing_the_window_stops_the_sweep_and_keeps_what_finished(qtbot, window):
    dialog = _open(window)
    dialog.trials.setValue(50)
    name = dialog.study.text()
    dialog.start()
    qtbot.waitUntil(lambda: _finished(name) >= 1, timeout=120_000)
    dialog.shutdown()  # what the application's aboutToQuit calls
    assert dialog.job is None
    assert dialog.message.text().startswith("Stopped: the trials that finished")
    progress = read_progress(name)
    assert progress.training == 0
    assert 1 <= progress.finished < 50


def _finished(name: str) -> int:
    try:
        return read_progress(name).finished
    except Exception:  # not made yet
        return 0
