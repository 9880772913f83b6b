"""The window and the command line decide alike: one Session, one policy."""

from __future__ import annotations

import pytest

from workbench.cli.commands import main
from workbench.core import events as E
from workbench.core.checkpoints.io import save_checkpoint
from workbench.core.session import Session
from workbench.core.train.engine import TrainControl

from .helpers import BACK_TO_IDLE, FAST

pytestmark = pytest.mark.gui


@pytest.fixture
def half_run(tmp_path):
    """A checkpoint of FAST stopped at step 2 of 4."""
    session = Session(origin="test")
    plan = session.plan(FAST)
    session.begin(plan)
    control = TrainControl()
    for event in session.train(plan, control):
        if isinstance(event, E.StepMetrics) and event.global_step == 2:
            control.request_stop()
    assert session.run.global_step == 2
    return save_checkpoint(tmp_path / "half.pt", session.run)


@pytest.mark.parametrize(
    ("flags", "changes", "kind"),
    [
        ([], {}, "continue"),
        (["--max-steps", "6"], {"max_steps": 6}, "resume"),
        (["--lr", "0.5"], {"lr": 0.5}, "new"),
        (["--seed", "9"], {"seed": 9}, "new"),
    ],
)
def test_the_window_and_the_command_line_make_the_same_decision(
    qtbot, window, half_run, capsys, flags, changes, kind
):
    with qtbot.waitSignal(
        window.controller.state_changed, timeout=30_000, **BACK_TO_IDLE
    ):
        window.files.open_checkpoint(half_run)
    window.apply_config(window.current_run.config.replace(**changes))
    in_window = window.controller.plan(window.current_config()).kind
    button = window.training_panel.start_button.text()

    code = main(["train", "--quiet", "--resume", str(half_run), *flags])
    out, err = capsys.readouterr()
    if "cannot resume" in err:
        on_command_line = "new"
    elif ", with max_steps changed" in out:
        on_command_line = "resume"
    elif "resuming" in out:
        on_command_line = "continue"
    else:
        on_command_line = f"unknown: {out!r} {err!r}"

    assert in_window == on_command_line == kind
    assert button == ("Start" if kind == "new" else "Continue")
    assert code == (2 if kind == "new" else 0)
