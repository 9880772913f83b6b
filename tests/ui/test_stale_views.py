"""A new run or another model starts clean: nothing of the last run lingers."""

from __future__ import annotations

import pytest

from .helpers import FAST, run_to_end

pytestmark = pytest.mark.gui


def test_another_model_shows_no_progress_of_the_run(qtbot, window):
    run_to_end(qtbot, window)
    panel = window.training_panel
    assert panel.progress_bar.value() == 4
    window.apply_config(FAST.replace(model="small-cnn"))  # not the run's model
    assert panel.progress_bar.value() == 0
    assert panel.progress_bar.format() == "idle"
    assert panel.speed_label.text() == "\u2013"
    window.apply_config(FAST)  # back to the run's model: where it stands
    assert panel.progress_bar.value() == 4
    assert panel.progress_bar.format().startswith("step 4 / 4")


def test_a_verdict_and_a_fine_tune_card_go_with_their_run(qtbot, window):
    run_to_end(qtbot, window)
    window.runs_panel.show_message("run-1: not reproduced: the losses differ")
    window.draw_panel.show_fine_tune_failed()
    card = window.draw_panel.card
    assert card.isVisibleTo(window.draw_panel)
    window.reset_run()  # New run
    assert not card.isVisibleTo(window.draw_panel)
    assert window.draw_panel.fine_tune_report is None
    assert window.runs_panel.message_label.text() == ""
    # And when a new run starts.
    window.runs_panel.show_message("run-1: not reproduced")
    window.draw_panel.show_fine_tune_failed()
    run_to_end(qtbot, window)
    assert not card.isVisibleTo(window.draw_panel)
    assert window.runs_panel.message_label.text() == ""


def test_an_edit_that_turns_continue_into_a_new_run_says_so(qtbot, window):
    from tests.ui.test_window import start_long_run

    start_long_run(qtbot, window)
    with qtbot.waitSignal(window.controller.run_finished, timeout=30_000):
        window.stop()
    button = window.training_panel.start_button
    assert button.text() == "Continue"
    window.training_panel.lr_spin.setValue(0.0123)  # the user edits the lr
    assert button.text() == "Start"
    status = window.status_label.text()
    # In the panels' words, not the config's field names (issue 34 item 26).
    assert status.startswith("Start begins a new run: Learning rate changed")
    assert "Learning rate changed" in button.toolTip()
    window.training_panel.lr_spin.setValue(FAST.lr)  # back: it continues again
    assert button.text() == "Continue"
    assert window.status_label.text() == (
        "Start continues the current run: its settings are back"
    )


def test_the_empty_loss_plot_says_the_run_is_coming_not_press_start(qtbot, window):
    plot = window.loss_plot
    assert plot.empty_hint().startswith("Press Start")
    with qtbot.waitSignal(window.controller.run_finished, timeout=30_000):
        window.start()
        assert plot.empty_hint().startswith("Getting the run ready")
    assert plot.empty_hint() == ""  # it has its points
    window.reset_run()
    assert plot.empty_hint().startswith("Press Start")
