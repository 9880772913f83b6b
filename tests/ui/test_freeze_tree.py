"""The freeze tree mirrors named_parameters() and edits requires_grad."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from workbench.core.config import MODELS
from workbench.core.models.builtins import build_model, head_name
from workbench.core.train.freezing import count_parameters
from workbench.ui.panels.freeze import TIMES, FreezePanel

pytestmark = pytest.mark.gui


@pytest.fixture
def panel(qtbot):
    widget = FreezePanel()
    qtbot.addWidget(widget)
    return widget


@pytest.mark.parametrize("name", MODELS)
def test_rows_match_named_parameters(panel, name):
    model = build_model(name, 10, seed=0)
    panel.set_model(model)
    items = panel.parameter_items()
    expected = list(model.named_parameters())
    assert list(items) == [n for n, _ in expected]
    for param_name, param in expected:
        item = items[param_name]
        assert item.text(2) == f"{param.numel():,}"
        assert item.text(1) == TIMES.join(str(d) for d in param.shape)
        assert item.checkState(0) == Qt.CheckState.Checked
        # The row sits under the row of its module.
        module = param_name.rpartition(".")[0]
        assert item.parent().data(0, Qt.ItemDataRole.UserRole) == module


def test_lazy_model_is_materialised_before_listing(qtbot, window):
    combo = window.model_panel.model_combo
    combo.setCurrentIndex(combo.findData("lazy-cnn"))
    assert window.model_panel.lazy_label.isVisibleTo(window)
    assert "dry-run batch" in window.model_panel.lazy_label.text()
    model = window.freeze_panel.model
    assert all(p.shape.numel() > 0 for p in model.parameters())
    total, _ = count_parameters(model)
    assert window.model_panel.count_label.text() == f"{total:,}"
    combo.setCurrentIndex(combo.findData("mlp"))
    assert not window.model_panel.lazy_label.isVisibleTo(window)


def test_toggling_a_parameter_flips_requires_grad_and_counts(qtbot, window):
    model = window.freeze_panel.model
    total, _ = count_parameters(model)
    items = window.freeze_panel.parameter_items()
    params = dict(model.named_parameters())
    with qtbot.waitSignal(window.freeze_panel.mask_changed):
        items["head.weight"].setCheckState(0, Qt.CheckState.Unchecked)
    assert not params["head.weight"].requires_grad
    trainable = total - params["head.weight"].numel()
    assert window.model_panel.trainable_label.text().startswith(f"{trainable:,}")
    assert window.current_config().frozen == ("head.weight",)
    items["head.weight"].setCheckState(0, Qt.CheckState.Checked)
    assert params["head.weight"].requires_grad
    assert window.model_panel.trainable_label.text().startswith(f"{total:,}")


def test_module_row_is_tristate_and_propagates(panel):
    model = build_model("small-cnn", 10, seed=0)
    panel.set_model(model)
    first = next(name for name, _ in model.named_children())  # a conv block
    block = panel.module_item(first)
    block.setCheckState(0, Qt.CheckState.Unchecked)
    for name, param in model.named_parameters():
        assert param.requires_grad == (not name.startswith(first + "."))
    root = block.parent()
    assert root.checkState(0) == Qt.CheckState.PartiallyChecked
    one = next(n for n, _ in model.named_parameters() if n.startswith(first + "."))
    panel.parameter_items()[one].setCheckState(0, Qt.CheckState.Checked)
    assert block.checkState(0) == Qt.CheckState.PartiallyChecked
    block.setCheckState(0, Qt.CheckState.Checked)
    assert all(p.requires_grad for p in model.parameters())


@pytest.mark.parametrize("name", MODELS)
def test_freeze_all_but_head_and_unfreeze_all(panel, name):
    model = build_model(name, 10, seed=0)
    panel.set_model(model)
    head = head_name(model)
    panel.head_button.click()
    for param_name, param in model.named_parameters():
        trainable = param_name.startswith(head + ".")
        assert param.requires_grad == trainable
        expected = Qt.CheckState.Checked if trainable else Qt.CheckState.Unchecked
        assert panel.parameter_items()[param_name].checkState(0) == expected
    assert "frozen" in panel.summary_label.text()
    panel.unfreeze_button.click()
    assert all(p.requires_grad for p in model.parameters())
    assert all(
        i.checkState(0) == Qt.CheckState.Checked
        for i in panel.parameter_items().values()
    )


def test_mask_reaches_the_run(qtbot, window):
    from .helpers import run_to_end

    window.freeze_panel.head_button.click()
    run_to_end(qtbot, window)
    run = window.current_run
    assert window.freeze_panel.model is run.model
    frozen = [n for n, p in run.model.named_parameters() if not p.requires_grad]
    assert frozen == [
        "hidden.1.weight",
        "hidden.1.bias",
        "hidden.3.weight",
        "hidden.3.bias",
    ]
    assert run.config.frozen == tuple(frozen)
