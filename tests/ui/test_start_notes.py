"""What the window says before Start about what the run will be (issue 34,
item 31): the Code tab's promise on several processes, torch.compile's cost."""

from __future__ import annotations

from .helpers import FAST


def test_the_code_tab_promises_step_for_step_only_on_one_process(qtbot, window):
    window.apply_config(FAST)
    caption = window.code_view.caption
    assert "repeats this run step for step" in caption.text()
    window.device_panel.set_processes(2)
    assert "not step for step like the window" in caption.text()
    assert "set to 2 processes" in caption.text()
    window.device_panel.set_processes(1)
    assert "repeats this run step for step" in caption.text()


def test_torch_compile_left_on_is_said_beside_start(qtbot, window):
    note = window.training_panel.start_note
    window.show()
    window.apply_config(FAST.replace(model="resnet18", compile=True))
    assert note.isVisible()
    assert note.text().startswith("torch.compile is on (Speed panel)")
    assert "the feature cache stays off" in note.text()
    window.apply_config(FAST.replace(model="resnet18", compile=False))
    assert not note.isVisible()
