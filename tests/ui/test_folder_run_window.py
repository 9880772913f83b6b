"""An image-folder run in the window: the Loader panel's path, augmentation choices."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QCheckBox

from tests.image_folders import make_folder
from tests.ui.helpers import event_signal, run_to_end
from workbench.core.events import RunStarted
from workbench.ui.panels.loader import budget_text


@pytest.fixture(autouse=True)
def data_dir(tmp_path_factory, monkeypatch):
    folder = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("PTCORE_DATA_DIR", str(folder))
    return folder


def test_augmentation_choices_round_trip_and_redraw_the_strip(window, tmp_path):
    root = make_folder(tmp_path / "pets", ["cat", "dog"], 4)
    panel = window.data_panel
    cfg = window.current_config().replace(
        dataset="folder", data_dir=str(root), image_size=16
    )
    window.apply_config(cfg)
    box = panel.augment_box
    assert box.strip.strip() is not None  # the folder's images are shown
    before = box.strip.strip().copy()
    box.findChild(QCheckBox, "augment_flip").setChecked(True)
    box.findChild(QCheckBox, "augment_crop").setChecked(True)
    assert window.current_config().augment == ("crop", "flip")
    assert (box.strip.strip() != before).any()
    window.apply_config(window.current_config().replace(augment=("jitter",)))
    assert box.choices() == ("jitter",)


def test_the_loader_panel_says_which_path_a_folder_run_took(qtbot, window, tmp_path):
    root = make_folder(tmp_path / "pets", ["cat", "dog"], 6)
    assert window.loader_panel.path_label.text() == budget_text()
    cfg = window.current_config().replace(
        dataset="folder", data_dir=str(root), image_size=16, epochs=1, max_steps=2
    )
    window.apply_config(cfg)
    started = event_signal(window, RunStarted)
    seen: list[bool] = []
    # The run owns its data: its augmentation cannot change under it.
    started.connect(
        lambda _ev: seen.append(
            window.data_panel.augment_box.checks["flip"].isEnabled()
        )
    )
    run_to_end(qtbot, window)
    assert seen == [False]
    assert window.data_panel.augment_box.checks["flip"].isEnabled()  # idle again
    text = window.loader_panel.path_label.text()
    assert text.startswith("In memory: 12 images decoded once")
    assert window.controller.run.loaders.info.class_names == ("cat", "dog")
