"""The freeze tree at the size of real networks: filter, freeze up to here, presets."""

from __future__ import annotations

import pytest
import torchvision
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication

from workbench.core.models.builtins import build_model
from workbench.core.train.freezing import all_but_head, first_blocks, names_up_to
from workbench.ui.panels.freeze import FreezePanel

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def resnet50():
    return torchvision.models.resnet50(weights=None)  # ~1 s, built once


@pytest.fixture
def panel(qtbot, resnet50):
    for param in resnet50.parameters():
        param.requires_grad_(True)
    widget = FreezePanel()
    qtbot.addWidget(widget)
    widget.set_model(resnet50)
    return widget


def _visible_names(panel):
    return {
        item.data(0, Qt.ItemDataRole.UserRole)
        for item in panel._all_items()
        if not item.isHidden()
    }


def _frozen(model):
    return [n for n, p in model.named_parameters() if not p.requires_grad]


def test_resnet50_has_a_row_per_parameter_tensor(panel, resnet50):
    assert list(panel.parameter_items()) == [n for n, _ in resnet50.named_parameters()]
    assert len(panel.parameter_items()) == 161


def test_filter_shows_matches_and_their_ancestors_and_clearing_restores(panel):
    panel.module_item("layer1").setExpanded(False)  # a choice clearing keeps
    everything = _visible_names(panel)
    panel.filter_edit.setText("LAYER4")
    visible = _visible_names(panel)
    assert visible == {"", "layer4"} | {
        n for n in everything if n.startswith("layer4.")
    }
    # Ancestors of a match are shown and opened, so the match can be seen.
    assert panel.module_item("layer4.0").isExpanded()
    params = panel.parameter_items()
    assert not params["layer4.2.bn3.bias"].isHidden()
    assert params["layer3.0.conv1.weight"].isHidden()
    panel.filter_edit.clear()
    assert _visible_names(panel) == everything
    assert not panel.module_item("layer1").isExpanded()
    assert panel.module_item("layer2").isExpanded()


def test_hidden_rows_keep_their_check_state(panel, resnet50):
    panel.filter_edit.setText("fc")
    panel.parameter_items()["layer1.0.conv1.weight"].setCheckState(
        0, Qt.CheckState.Unchecked
    )
    panel.head_button.click()
    panel.filter_edit.clear()
    assert _frozen(resnet50) == all_but_head(resnet50)
    for name, item in panel.parameter_items().items():
        trainable = name.startswith("fc.")
        assert (item.checkState(0) == Qt.CheckState.Checked) == trainable


def test_freeze_up_to_layer2_from_its_menu(qtbot, panel, resnet50):
    names = [n for n, _ in resnet50.named_parameters()]
    last = max(i for i, n in enumerate(names) if n.startswith("layer2."))
    panel.tree.setCurrentItem(panel.module_item("layer2"))
    # The menu key: a keyboard context-menu event opens the current row's menu.
    outside = QPoint(-5, -5)  # no row there: the current row is meant
    event = QContextMenuEvent(
        QContextMenuEvent.Reason.Keyboard,
        outside,
        panel.tree.viewport().mapToGlobal(outside),
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(panel.tree.viewport(), event)
    assert panel.row_menu.isVisible()
    assert panel.up_to_action.data() == "layer2"
    with qtbot.waitSignal(panel.mask_changed):
        panel.up_to_action.trigger()
    panel.row_menu.hide()
    assert _frozen(resnet50) == names[: last + 1]
    assert names[last + 1] == "layer3.0.conv1.weight"
    items = panel.parameter_items()
    assert items["layer2.3.bn3.bias"].checkState(0) == Qt.CheckState.Unchecked
    assert items["layer3.0.conv1.weight"].checkState(0) == Qt.CheckState.Checked
    assert "frozen" in panel.summary_label.text()


def test_freeze_up_to_a_parameter_and_to_the_model(panel, resnet50):
    assert names_up_to(resnet50, "bn1.weight") == ["conv1.weight", "bn1.weight"]
    panel.freeze_up_to("")
    assert not any(p.requires_grad for p in resnet50.parameters())


def test_first_two_blocks_preset(qtbot, panel, resnet50):
    assert panel.blocks_spin.maximum() == 7  # conv1 bn1 layer1-4 fc
    panel.blocks_spin.setValue(2)
    with qtbot.waitSignal(panel.mask_changed):
        panel.first_button.click()
    assert _frozen(resnet50) == ["conv1.weight", "bn1.weight", "bn1.bias"]
    assert first_blocks(resnet50, 2) == _frozen(resnet50)
    with qtbot.waitSignal(panel.mask_changed):
        panel.unfreeze_button.click()  # the "nothing frozen" preset
    assert _frozen(resnet50) == []


def test_presets_and_menu_are_locked_with_the_tree(panel):
    panel.set_editable(False)
    assert not panel.first_button.isEnabled()
    assert not panel.blocks_spin.isEnabled()
    assert not panel.up_to_action.isEnabled()
    panel.freeze_up_to("layer2")
    assert _frozen(panel.model) == []


def test_small_cnn_presets(qtbot):
    widget = FreezePanel()
    qtbot.addWidget(widget)
    model = build_model("small-cnn", 10, seed=0)
    widget.set_model(model)
    blocks = [n for n, c in model.named_children() if list(c.parameters())]
    assert widget.blocks_spin.maximum() == len(blocks)
    widget.blocks_spin.setValue(1)
    widget.first_button.click()
    assert _frozen(model) == [
        n for n, _ in model.named_parameters() if n.startswith(blocks[0] + ".")
    ]
    widget.filter_edit.setText("no such layer")
    assert _visible_names(widget) == set()
    widget.head_button.click()
    assert _frozen(model) == all_but_head(model)
