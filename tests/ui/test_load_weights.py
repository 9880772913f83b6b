"""Load weights into the model: the file's own architecture, and what fits."""

from __future__ import annotations

import pytest
import torch

from workbench.core.checkpoints.io import save_checkpoint
from workbench.core.models.builtins import build_model
from workbench.ui import dialogs

from .helpers import FAST, run_to_end

pytestmark = pytest.mark.gui


@pytest.fixture
def mlp_checkpoint(qtbot, window, tmp_path):
    """A checkpoint of a trained mlp; the window then forgets that run."""
    window.apply_config(FAST.replace(model="mlp"))
    run_to_end(qtbot, window)
    path = save_checkpoint(tmp_path / "mlp.pt", window.current_run)
    state = {k: v.clone() for k, v in window.current_run.model.state_dict().items()}
    window.reset_run()
    return path, state


def test_weights_of_another_architecture_offer_to_switch_to_it(
    qtbot, window, mlp_checkpoint, monkeypatch
):
    path, state = mlp_checkpoint
    asked = []

    def ask(parent, text, details, *, can_load_partly):
        asked.append((text, can_load_partly))
        return "switch"

    monkeypatch.setattr(dialogs, "ask_switch_architecture", ask)
    window.apply_config(FAST.replace(model="small-cnn"))
    assert window.files.load_weights(path)
    text, can_load_partly = asked[0]
    assert "mlp.pt holds weights for mlp" in text
    assert "chooses small-cnn" in text
    assert can_load_partly  # the head's bias has the same shape
    assert window.model_panel.model() == "mlp"
    loaded = window.freeze_panel.model.state_dict()
    assert all(torch.equal(loaded[k], v) for k, v in state.items())
    assert "all 6 tensors loaded" in window.status_label.text()
    # The Draw tab reads with them at once.
    assert window.draw_panel.source_label.text().startswith("Loaded weights from")


def test_cancel_on_switching_loads_nothing(qtbot, window, mlp_checkpoint, monkeypatch):
    path, _state = mlp_checkpoint
    monkeypatch.setattr(dialogs, "ask_switch_architecture", lambda *a, **k: "cancel")
    window.apply_config(FAST.replace(model="small-cnn"))
    before = {k: v.clone() for k, v in window.freeze_panel.model.state_dict().items()}
    assert not window.files.load_weights(path)
    assert window.model_panel.model() == "small-cnn"
    after = window.freeze_panel.model.state_dict()
    assert all(torch.equal(after[k], v) for k, v in before.items())
    assert window.controller.session.initial_weights is None


def test_cancel_is_the_default_when_almost_nothing_fits(
    qtbot, window, tmp_path, monkeypatch
):
    defaults = []

    def confirm(parent, title, summary, details, *, load_by_default=True):
        defaults.append(load_by_default)
        return False

    monkeypatch.setattr(dialogs, "confirm_partial_load", confirm)
    window.apply_config(FAST.replace(model="mlp"))
    # A bare state_dict (no architecture to switch to): only head.bias fits.
    bias_only = tmp_path / "bias.pt"
    torch.save({"head.bias": torch.ones(10), "x.weight": torch.ones(3)}, bias_only)
    assert not window.files.load_weights(bias_only)
    letters = tmp_path / "letters.pt"
    torch.save(  # 26 classes: all but the head fits
        {
            k: torch.zeros(26, *v.shape[1:]) if k.startswith("head.") else v
            for k, v in window.freeze_panel.model.state_dict().items()
        },
        letters,
    )
    assert not window.files.load_weights(letters)
    assert defaults == [False, True]


@pytest.mark.parametrize("before", ["fresh window", "after a run", "after New run"])
def test_the_draw_tab_reads_with_loaded_weights_at_once(
    qtbot, window, tmp_path, before
):
    window.apply_config(FAST.replace(model="small-cnn"))
    if before != "fresh window":
        run_to_end(qtbot, window)
    if before == "after New run":
        window.reset_run()
    source = build_model("small-cnn", 10, seed=99).state_dict()
    path = tmp_path / "weights.pt"
    torch.save(source, path)
    window.tabs.setCurrentWidget(window.draw_page)  # the reader is on show
    assert window.files.load_weights(path)
    panel = window.draw_panel
    assert panel.source_label.text().startswith("Loaded weights from weights.pt")
    reader = panel.predictor.model.state_dict()
    assert all(torch.equal(reader[k], v) for k, v in source.items())
