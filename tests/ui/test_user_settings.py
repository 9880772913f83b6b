"""A fine-tune or a reproduction borrows the panels; the user's settings come back."""

from __future__ import annotations

import pytest

from tests.core.test_finetune import mirrored_digits
from workbench.core.data.my_digits import MyDigits
from workbench.core.runs.listing import list_runs

from .helpers import FAST, run_to_end

pytestmark = pytest.mark.gui

# Settings a user chose on purpose: none of them the fine-tune's or the original's.
MINE = FAST.replace(lr=0.0123, batch_size=32, seed=3, max_steps=5)


def test_a_fine_tune_gives_the_users_settings_back(qtbot, window):
    window.apply_config(MINE)
    assert window.current_config() == MINE
    run_to_end(qtbot, window)
    store = MyDigits()
    for image, label in mirrored_digits(per_class=1):
        store.add(image, label)
    with qtbot.waitSignal(window.controller.fine_tune_scored, timeout=60_000):
        window.draw_panel.fine_tune_button.click()
    assert window.current_run.config.dataset == "my-digits"  # what it trained on
    assert window.current_config() == MINE  # what the panels show again
    assert window.data_panel.dataset() == "digits"
    assert window.frozen_mask() == ()
    # Start trains the user's data, not the nine drawings.
    assert window.controller.plan(window.current_config()).config.dataset == "digits"


def test_a_reproduction_gives_the_users_settings_back(qtbot, window):
    window.apply_config(FAST.replace(seed=1))
    run_to_end(qtbot, window)
    window.apply_config(MINE)
    original = list_runs()[0]
    window.runs_tab.refresh()
    window.runs_panel.select_ids([original.id])
    with qtbot.waitSignal(window.controller.run_finished, timeout=60_000) as ended:
        window.runs_panel.reproduce_button.click()
    assert ended.args[0].reproduction.reproduced
    assert window.current_run.config.seed == 1  # it trained the original's config
    assert window.current_config() == MINE
