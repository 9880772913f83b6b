"""What the window shows of a job on several processes, fed its run folder's events.

The job itself is left out (``start_job`` does nothing here): the view is fed
the events a job's follower emits, so each case costs no process start.
"""

from __future__ import annotations

import pytest

from workbench.core import events as E

from .helpers import FAST

STEPS_PER_EPOCH = 3


def step(global_step: int, total_steps: int) -> E.StepMetrics:
    return E.StepMetrics(
        epoch=(global_step - 1) // STEPS_PER_EPOCH,
        step=(global_step - 1) % STEPS_PER_EPOCH + 1,
        global_step=global_step,
        total_steps=total_steps,
        loss=2.0 / global_step,
        accuracy=0.5,
        lr=0.01,
        images_per_s=100.0,
        elapsed_s=0.1 * global_step,
        step_seconds=0.1,
    )


def epoch_end(epoch: int) -> E.EpochMetrics:
    return E.EpochMetrics(
        epoch=epoch,
        global_step=(epoch + 1) * STEPS_PER_EPOCH,
        train_loss=1.0,
        train_accuracy=0.6,
        val_loss=1.1,
        val_accuracy=0.55,
        images_per_s=100.0,
        seconds=0.3,
    )


@pytest.mark.parametrize("epochs", [None, 2], ids=["epochs-auto", "epochs-2"])
def test_a_job_is_plotted_from_its_first_step_whatever_its_epochs(
    qtbot, window, monkeypatch, epochs
):
    """Epochs "auto" used to raise at every step (six error dialogs, no points)."""
    controller = window.controller
    monkeypatch.setattr(controller, "start_job", lambda cfg, nproc: None)
    monkeypatch.setattr(window.jobs, "processes", lambda: 2)  # any machine
    cfg = FAST.replace(max_steps=None, epochs=epochs)
    assert window.jobs.start_if_several(cfg)
    total = STEPS_PER_EPOCH * cfg.resolved_epochs
    for ev in [step(1, total), step(2, total), step(3, total), epoch_end(0)]:
        controller.job_event.emit(ev)
    steps, losses = window.curves.loss_plot.data("loss")
    assert list(steps) == [1, 2, 3]
    assert list(losses) == pytest.approx([2.0, 1.0, 2 / 3])
    # The epoch's accuracy sits at epoch 1 on the accuracy plot.
    epochs_at, accuracy = window.curves.accuracy_plot.data("validation")
    assert list(epochs_at) == [1.0]
    assert list(accuracy) == pytest.approx([55.0])
    assert window.training_panel.progress_bar.maximum() == total
