"""Your own image folder in the window: the Data panel, and Start checks it first."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QFileDialog

from workbench.core.config import TrainConfig
from workbench.ui.panels.data import DataPanel
from workbench.ui.panels.image_folder import BLOCKED, IMAGE_FOLDER_KEY
from workbench.ui.window import state as window_state

from .test_data_check_view import image_folder

pytestmark = pytest.mark.gui


def folder_panel(qtbot, folder, **changes) -> DataPanel:
    panel = DataPanel()
    qtbot.addWidget(panel)
    cfg = TrainConfig(dataset="folder", data_dir=str(folder), **changes)
    panel.apply_config(cfg)
    qtbot.waitUntil(lambda: not panel.check_row.checker.is_checking(), timeout=10_000)
    return panel


def test_the_panel_round_trips_folder_image_size_and_validation_share(qtbot, tmp_path):
    root = image_folder(tmp_path / "pets", bad=False)
    panel = folder_panel(qtbot, root, image_size=96, val_fraction=0.125)
    assert panel.folder_field.isVisibleTo(panel)
    assert panel.share_spin.isVisibleTo(panel)
    assert not panel.dir_edit.isVisibleTo(panel)  # MNIST's folder: not this one
    assert panel.size_spin.value() == 96
    assert panel.share_spin.value() == 12  # shown rounded, kept exact
    values = panel.config_values()
    assert values["dataset"] == "folder"
    assert values["data_dir"] == str(root)
    assert values["image_size"] == 96
    assert values["val_fraction"] == 0.125
    panel.size_spin.setValue(48)
    panel.share_spin.setValue(30)
    assert panel.config_values()["image_size"] == 48
    assert panel.config_values()["val_fraction"] == 0.3
    # No size named: the dataset's own (64) is shown and the config keeps None.
    panel.apply_config(TrainConfig(dataset="folder", data_dir=str(root)))
    assert panel.size_spin.value() == 64
    assert panel.config_values()["image_size"] is None
    panel.apply_config(TrainConfig(dataset="digits"))
    assert not panel.size_spin.isVisibleTo(panel)  # 28x28 stays 28x28
    assert panel.config_values()["image_size"] is None
    assert panel.config_values()["data_dir"] is None
    assert panel.folder_field.folder() == str(root)  # kept for coming back
    qtbot.waitUntil(lambda: not panel.is_busy(), timeout=30_000)  # digits load


def test_browse_sets_the_folder_checks_it_and_remembers_it(
    qtbot, tmp_path, monkeypatch
):
    root = image_folder(tmp_path / "pets")
    monkeypatch.setattr(
        QFileDialog, "getExistingDirectory", lambda *args, **kw: str(root)
    )
    panel = DataPanel()
    qtbot.addWidget(panel)
    panel.dataset_combo.setCurrentIndex(panel.dataset_combo.findData("folder"))
    assert "Choose the folder" in panel.count_label.text()
    with qtbot.waitSignal(panel.check_row.checker.checked, timeout=10_000):
        panel.folder_field.button.click()
    assert panel.config_values()["data_dir"] == str(root)
    text = panel.count_label.text()
    assert text.startswith("3 classes · 9 images: 2 files will be skipped")
    assert "Show report" in text
    settings = window_state.open_window_settings()
    assert settings.value(IMAGE_FOLDER_KEY) == str(root)
    again = DataPanel()  # the next session
    qtbot.addWidget(again)
    assert again.folder_field.folder() == str(root)


def test_a_folder_that_does_not_exist_says_so_without_a_dialog(qtbot, tmp_path):
    missing = tmp_path / "nowhere"
    panel = folder_panel(qtbot, missing)
    assert panel.count_label.text() == f"No such folder: {missing}"
    assert not panel.check_row.checker.is_checking()
    with qtbot.waitSignal(panel.check_row.checker.checked, timeout=10_000):
        panel.check_row.check_button.click()
    dialog = panel.check_row.report_dialog()
    assert dialog.isVisible()
    assert "no such folder" in dialog.view.findings_edit.toPlainText()
    assert dialog.view.verdict_label.text().startswith("Cannot train")
    dialog.close()


def test_errors_hold_start_and_show_why(qtbot, tmp_path):
    root = image_folder(tmp_path / "pets", empty_class=True)
    panel = DataPanel()
    qtbot.addWidget(panel)
    panel.apply_config(TrainConfig(dataset="folder", data_dir=str(root)))
    with qtbot.assertNotEmitted(panel.start_cleared, wait=200):
        with qtbot.waitSignal(panel.check_row.checker.checked, timeout=10_000):
            panel.request_start()
    dialog = panel.check_row.report_dialog()
    assert dialog.isVisible()
    assert dialog.view.reason_label.text() == BLOCKED
    assert panel.count_label.text().startswith(
        "Cannot train: class &#x27;owl&#x27; has no readable images"
    )
    dialog.close()


def test_warnings_only_let_start_go_on_with_a_summary(qtbot, tmp_path):
    root = image_folder(tmp_path / "pets")
    panel = folder_panel(qtbot, root, image_size=16)
    with qtbot.waitSignal(panel.start_cleared, timeout=1000):
        panel.request_start()  # checked already and nothing changed: at once
    assert panel.count_label.text().startswith(
        "3 classes · 9 images: 2 files will be skipped"
    )
    assert panel.check_row._dialog is None  # no report forced on the user
