"""The Loader panel's class weights and balanced sampler set the run's config."""

from __future__ import annotations

import pytest

from tests.image_folders import make_folder
from workbench.core.data.folder_check import check_folder
from workbench.ui import dialogs
from workbench.ui.data_check_view import finding_lines
from workbench.ui.panels.loader import LoaderPanel

pytestmark = pytest.mark.gui

WEIGHTS = (1.0, 2.0, 0.5, 8.0, 1.0, 1.0, 3.0, 1.0, 0.25, 1.0)


def _choose(panel: LoaderPanel, value: str) -> None:
    """Pick the combo entry whose data is ``value``, as a click would."""
    combo = panel.class_weights_combo
    index = combo.findData(value)
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def test_the_combo_and_the_check_box_set_the_config(qtbot):
    panel = LoaderPanel()
    qtbot.addWidget(panel)
    assert panel.config_values()["class_weights"] == "none"
    assert panel.config_values()["balanced_sampler"] is False
    assert "n_samples" in panel.class_weights_combo.toolTip()
    assert "equally likely" in panel.sampler_check.toolTip()
    with qtbot.waitSignal(panel.changed):
        _choose(panel, "balanced")
    assert panel.config_values()["class_weights"] == "balanced"
    with qtbot.waitSignal(panel.changed):
        panel.sampler_check.setChecked(True)
    assert panel.config_values()["balanced_sampler"] is True


def test_from_file_reads_the_weights_into_the_config(qtbot, tmp_path, monkeypatch):
    panel = LoaderPanel()
    qtbot.addWidget(panel)
    path = tmp_path / "weights.json"
    path.write_text(str(list(WEIGHTS)))
    monkeypatch.setattr(dialogs, "get_open_path", lambda *args: path)
    _choose(panel, "file")
    assert panel.config_values()["class_weights"] == WEIGHTS
    index = panel.class_weights_combo.currentIndex()
    assert panel.class_weights_combo.itemText(index) == "From file (10)…"

    # A bad file is said, and the weights read before stay.
    path.write_text("1, -2")
    errors = []
    monkeypatch.setattr(dialogs, "show_error", lambda *args: errors.append(args[2]))
    _choose(panel, "balanced")
    _choose(panel, "file")
    assert errors == [
        f"class weights file {path}: weight 1 is -2; each must be a "
        "number above 0 and at most 1e30"
    ]
    assert panel.config_values()["class_weights"] == "balanced"
    # Cancelled: the choice before stays too.
    monkeypatch.setattr(dialogs, "get_open_path", lambda *args: None)
    _choose(panel, "file")
    assert panel.config_values()["class_weights"] == "balanced"


def test_a_loaded_config_shows_its_weights_and_gives_them_back(qtbot, window):
    cfg = window.current_config().replace(class_weights=WEIGHTS, balanced_sampler=True)
    window.apply_config(cfg)
    panel = window.loader_panel
    assert panel.class_weights_combo.currentData() == "file"
    assert panel.sampler_check.isChecked()
    assert window.current_config() == cfg
    window.apply_config(cfg.replace(class_weights="none", balanced_sampler=False))
    assert panel.class_weights_combo.currentData() == "none"
    assert window.current_config().class_weights == "none"


def test_the_data_check_names_the_windows_options(tmp_path):
    root = tmp_path / "d"
    make_folder(root, ["many"], 10, size=12)
    make_folder(root, ["few"], 1, size=12, seed=1)
    assert (
        "warning: strong class imbalance: many has 10 images, few 1; train with "
        "Class weights: Balanced or Balanced sampler (Loader panel)"
        in finding_lines(check_folder(root))
    )
