"""The status line after an epoch: what validation measured, never "nan"."""

from __future__ import annotations

import math

import pytest

from workbench.core.events import EpochMetrics
from workbench.ui.formatting import validation_summary

pytestmark = pytest.mark.gui


def epoch(val_loss: float, val_accuracy: float) -> EpochMetrics:
    return EpochMetrics(2, 60, 0.31, 0.9, val_loss, val_accuracy, 1000.0, 1.0)


def test_validation_summary_leaves_out_what_was_not_measured():
    assert validation_summary(0.973, 0.0812) == "val accuracy 97.3%, val loss 0.0812"
    assert validation_summary(0.973, math.nan) == "val accuracy 97.3%"
    assert validation_summary(math.nan, math.nan) == "no validation"
    assert validation_summary(0.5) == "val accuracy 50.0%"


def test_an_epoch_without_validation_loss_never_shows_nan(window):
    """A fine-tune's epoch without a validation loss (as the engine sends it)."""
    status = window.status_label
    window.controller.event.emit(epoch(math.nan, 0.951))
    assert status.text() == "Epoch 3: val accuracy 95.1%"
    window.controller.event.emit(epoch(math.nan, math.nan))
    assert status.text() == "Epoch 3: no validation"
    window.controller.event.emit(epoch(0.1234, 0.951))
    assert status.text() == "Epoch 3: val accuracy 95.1%, val loss 0.1234"
