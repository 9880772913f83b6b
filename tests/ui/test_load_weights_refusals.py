"""Load weights says why it cannot, in a dialog, whatever stands in the way."""

from __future__ import annotations

import torch

from workbench.core.models.builtins import build_model

from .helpers import FAST


def test_data_that_cannot_train_is_said_not_swallowed(
    qtbot, window, tmp_path, error_dialogs
):
    """The Data panel points at a folder with no class folders (issue 34 #6)."""
    weights = tmp_path / "mlp.pt"
    torch.save(build_model("mlp").state_dict(), weights)
    empty = tmp_path / "photos"
    empty.mkdir()
    window.apply_config(FAST.replace(dataset="folder", data_dir=str(empty)))
    assert not window.files.load_weights(weights)
    ((title, message, _details),) = error_dialogs.shown
    error_dialogs.shown.clear()
    assert title == "Could not load the weights"
    assert f"{empty} has no class folders" in message
    assert window.controller.session.initial_weights is None
