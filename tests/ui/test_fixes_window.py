"""Fixes in the window: relabel, exclude, keep and undo in the data issues
dialog (an overlay saved at once, the images never touched), and the Data
panel's Use fixes putting exactly the overlay's fixes into a run's config."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QKeySequence

from tests.image_folders import make_folder
from workbench.core.config import TrainConfig
from workbench.core.data.fixes import Fix, Overlay, image_key
from workbench.core.data.registry import ImageArrays
from workbench.core.data_issues.images import NamedImages
from workbench.core.data_issues.report import DataIssues, find_data_issues
from workbench.ui.data_issues_view import DataIssuesDialog
from workbench.ui.panels.data import DataPanel

from .helpers import FAST, run_to_end
from .test_data_issues_window import _probabilities

pytestmark = pytest.mark.gui

NAMES = ("cat", "dog", "fox")


def _digests(folder: Path) -> dict[str, str]:
    """Every file under ``folder``: its SHA-256."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def folder(tmp_path) -> Path:
    """An image folder of 3 classes, 5 images each."""
    return make_folder(tmp_path / "images", list(NAMES), per_class=5, size=8)


@pytest.fixture
def made(folder) -> tuple[DataIssues, NamedImages, TrainConfig]:
    """The folder's files as data issues: 4 of each class training, 1 validation,
    held-out probabilities that doubt 4 of them."""
    files = sorted(_digests(folder))
    train = [f for f in files if not f.endswith("004.jpg")]
    val = [f for f in files if f.endswith("004.jpg")]
    assert (len(train), len(val)) == (12, 3)
    train_labels = np.array([NAMES.index(f.split("/")[0]) for f in train])
    val_labels = np.array([NAMES.index(f.split("/")[0]) for f in val])
    rng = np.random.default_rng(0)
    images = NamedImages(
        ImageArrays(
            torch.from_numpy(rng.integers(0, 256, (12, 8, 8), dtype=np.uint8)),
            torch.from_numpy(train_labels),
            torch.from_numpy(rng.integers(0, 256, (3, 8, 8), dtype=np.uint8)),
            torch.from_numpy(val_labels),
        ),
        train,
        val,
    )
    train_p = _probabilities(train_labels, {1: (1, 0.9), 6: (2, 0.7), 9: (0, 0.6)})
    val_p = _probabilities(val_labels, {2: (1, 0.95)})
    issues = find_data_issues(images, train_p, val_p, NAMES)
    return issues, images, TrainConfig(dataset="folder", data_dir=str(folder))


@pytest.fixture
def dialog(qtbot, made) -> DataIssuesDialog:
    issues, images, cfg = made
    view = DataIssuesDialog()
    qtbot.addWidget(view)
    view.show_issues(issues, images.arrays, "hand-made probabilities", cfg)
    return view


def _select(table, *rows: int) -> None:
    """Select ``rows`` of an IssueTable, as a Ctrl+click would."""
    table.clearSelection()
    flags = (
        QItemSelectionModel.SelectionFlag.Select
        | QItemSelectionModel.SelectionFlag.Rows
    )
    for row in rows:
        table.selectionModel().select(table.issues.index(row, 0), flags)


def _saved(cfg: TrainConfig) -> list[tuple[str, str, str, str]]:
    """The overlay file's fixes, in order: key, file, action, label."""
    path = Overlay("fixes", Overlay.open("fixes", cfg).dataset).path
    data = json.loads(path.read_text(encoding="utf-8"))
    return [(f["key"], f["file"], f["action"], f["label"]) for f in data["fixes"]]


def test_fixes_of_selected_rows_are_saved_in_order_and_undo_takes_the_last(
    qtbot, dialog, made, folder
):
    issues, _images, cfg = made
    before = _digests(folder)
    fixes = dialog.fixes
    assert not fixes.exclude_button.isEnabled()  # nothing selected
    assert not fixes.undo_button.isEnabled()
    # Two likely label errors: each to its own likely class, in the list's order.
    _select(dialog.label_errors, 0, 1)
    assert fixes.likely_button.isEnabled()
    rows = dialog.label_errors.issues.rows[:2]
    fixes.likely_button.click()
    likely = [
        (issues.names[i], NAMES[s])
        for i, s in zip(
            issues.label_issues.index, issues.label_issues.suggested, strict=True
        )
    ][:2]
    # A top loss excluded, one relabelled to a class chosen, one kept.
    dialog.tabs.setCurrentIndex(1)
    _select(dialog.top_losses, 3)
    fixes.exclude_button.click()
    _select(dialog.top_losses, 4)
    (fox,) = [a for a in fixes.relabel_menu.actions() if a.text() == "fox"]
    fox.trigger()
    _select(dialog.top_losses, 5)
    fixes.keep_button.click()
    losses = dialog.top_losses.issues.rows
    excluded, relabelled, kept = (issues.names[losses[r].image] for r in (3, 4, 5))

    expected = [
        (likely[0][0], "relabel", likely[0][1]),
        (likely[1][0], "relabel", likely[1][1]),
        (excluded, "exclude", ""),
        (relabelled, "relabel", "fox"),
        (kept, "keep", ""),
    ]
    saved = _saved(cfg)
    assert [s[1:] for s in saved] == expected
    # Keys are the files' contents, so a moved file keeps its fix.
    assert [s[0] for s in saved] == [before[file] for file, _a, _l in expected]
    assert [issues.names[r.image] for r in rows] == [likely[0][0], likely[1][0]]
    # The rows show their fix; the row says the counts.
    assert [r[-1] for r in dialog.label_errors.row_texts()[:2]] == [
        f"→ {likely[0][1]}",
        f"→ {likely[1][1]}",
    ]
    shown = {r[2]: r[-1] for r in dialog.top_losses.row_texts()}
    assert (shown[excluded], shown[relabelled], shown[kept]) == (
        "excluded",
        "→ fox",
        "kept",
    )
    assert fixes.summary.text() == "Fixes 'fixes': 3 relabelled, 1 excluded, 1 kept"

    fixes.undo_button.click()  # the keep
    assert [s[1:] for s in _saved(cfg)] == expected[:-1]
    assert {r[2]: r[-1] for r in dialog.top_losses.row_texts()}[kept] == ""
    fixes.undo_button.click()  # the relabel to fox
    assert [s[1:] for s in _saved(cfg)] == expected[:-2]
    assert Overlay.open("fixes", cfg).config_entries() == tuple(
        sorted((before[f], a, lab) for f, a, lab in expected[:3])
    )
    # Not a byte of the images changed, and nothing was added beside them.
    assert _digests(folder) == before


def test_the_buttons_have_shortcuts_in_the_dialog(qtbot, dialog, made):
    _issues, _images, cfg = made
    fixes = dialog.fixes
    keys = [b.shortcut() for b in (*fixes.action_buttons(), fixes.undo_button)]
    assert keys == [
        QKeySequence(k) for k in ("Ctrl+R", "Ctrl+Shift+R", "Del", "Ctrl+K", "Ctrl+Z")
    ]
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)
    _select(dialog.label_errors, 0)
    # A button's shortcut clicks it after a short flash: wait for the fix.
    qtbot.keyClick(dialog.label_errors, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: [f.action for f in fixes.overlay.fixes] == ["exclude"])
    assert [s[2] for s in _saved(cfg)] == ["exclude"]
    qtbot.keyClick(
        dialog.label_errors, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier
    )
    qtbot.waitUntil(lambda: not fixes.overlay.fixes)
    assert _saved(cfg) == []


def test_a_failed_save_is_shown_and_nothing_is_half_saved(
    qtbot, dialog, made, monkeypatch, error_dialogs
):
    _issues, _images, cfg = made
    fixes = dialog.fixes
    _select(dialog.label_errors, 0)
    fixes.exclude_button.click()
    first = _saved(cfg)

    def full(_self):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Overlay, "save", full)
    _select(dialog.label_errors, 1, 2)
    fixes.keep_button.click()
    ((_title, message, _details),) = error_dialogs.shown
    error_dialogs.shown.clear()
    assert "No space left on device" in message
    assert "Nothing was changed" in message
    assert _saved(cfg) == first  # the file as it was
    assert [f.action for f in fixes.overlay.fixes] == ["exclude"]  # memory too
    assert [r[-1] for r in dialog.label_errors.row_texts()] == ["excluded", "", ""]
    fixes.undo_button.click()  # an undo that cannot be saved is no undo
    assert len(error_dialogs.shown) == 1
    error_dialogs.shown.clear()
    assert [f.action for f in fixes.overlay.fixes] == ["exclude"]
    assert fixes.summary.text() == "Fixes 'fixes': 0 relabelled, 1 excluded, 0 kept"


def test_a_damaged_overlay_is_shown_and_left_alone(qtbot, made, folder):
    issues, images, cfg = made
    path = Overlay.open("fixes", cfg).path
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    view = DataIssuesDialog()
    qtbot.addWidget(view)
    view.show_issues(issues, images.arrays, "", cfg)
    _select(view.label_errors, 0)
    assert not view.fixes.exclude_button.isEnabled()
    assert "is damaged" in view.fixes.summary.text()
    assert view.minimumSizeHint().width() < 900  # its long path wraps
    panel = DataPanel()
    qtbot.addWidget(panel)
    panel.apply_config(cfg)
    check = panel.fixes_check
    assert not check.isEnabled()
    assert not check.isChecked()
    assert "is damaged" in check.toolTip()
    assert "\n" not in check.toolTip()
    assert panel.config_values()["fixes"] == ()
    assert path.read_text(encoding="utf-8") == "{not json"
    panel.shutdown()


def _digit_overlay(*fixes: Fix) -> Overlay:
    overlay = Overlay.open("fixes", FAST)
    for fix in fixes:
        overlay.add(fix)
    overlay.save()
    return overlay


@pytest.fixture
def panel(qtbot) -> DataPanel:
    view = DataPanel()
    qtbot.addWidget(view)
    yield view
    view.shutdown()


def test_use_fixes_puts_exactly_the_overlays_fixes_in_the_config(qtbot, panel):
    overlay = _digit_overlay(
        Fix("train #5", "train #5", "relabel", "3"),
        Fix("val #2", "val #2", "exclude"),
        Fix("train #1", "train #1", "keep"),
    )
    panel.apply_config(FAST)
    check = panel.fixes_check
    assert not check.isChecked()
    assert check.isEnabled()
    assert check.text() == "Use fixes 'fixes' (2)"
    assert "1 relabelled, 1 excluded" in check.toolTip()
    assert panel.config_values()["fixes"] == ()
    with qtbot.waitSignal(panel.changed):
        check.setChecked(True)
    values = panel.config_values()
    assert values["fixes"] == overlay.config_entries()
    assert values["fixes_name"] == "fixes"
    cfg = FAST.replace(**values)  # a valid config, as --fixes fixes makes
    assert cfg.fixes == overlay.config_entries()
    with qtbot.waitSignal(panel.changed):
        check.setChecked(False)
    assert (panel.config_values()["fixes"], panel.config_values()["fixes_name"]) == (
        (),
        "",
    )


def test_a_configs_own_fixes_check_the_box_and_are_kept_as_given(qtbot, panel):
    recorded = (("train #7", "exclude", ""),)
    overlay = _digit_overlay(Fix("train #5", "train #5", "relabel", "3"))
    panel.apply_config(FAST.replace(fixes=recorded, fixes_name="fixes"))
    check = panel.fixes_check
    assert check.isChecked()
    assert check.text() == "Use fixes 'fixes' (1)"
    assert "as its run recorded them" in check.toolTip()
    assert panel.config_values()["fixes"] == recorded  # not the overlay's now
    assert panel.config_values()["fixes_name"] == "fixes"
    # Toggled by the user: the overlay as it is now.
    check.setChecked(False)
    check.setChecked(True)
    assert panel.config_values()["fixes"] == overlay.config_entries()
    panel.apply_config(FAST)
    assert not check.isChecked()
    assert panel.config_values()["fixes"] == ()


def test_fixes_made_in_the_dialog_reach_the_data_panel_and_a_run(
    qtbot, window, runs_root, made
):
    overlay = _digit_overlay(Fix("train #3", "train #3", "exclude"))
    window.data_panel.refresh_fixes()
    check = window.data_panel.fixes_check
    assert check.text() == "Use fixes 'fixes' (1)"
    check.setChecked(True)
    # A fix saved in the window's dialog: the box follows. (The digits' images
    # are named as data-issues names a built-in's: train #i.)
    _issues, images, _cfg = made
    named = NamedImages(
        images.arrays,
        [f"train #{i}" for i in range(12)],
        [f"val #{i}" for i in range(3)],
    )
    issues = find_data_issues(
        named,
        _probabilities(images.arrays.train_labels.numpy(), {1: (1, 0.9)}),
        _probabilities(images.arrays.test_labels.numpy(), {}),
        NAMES,
    )
    finder = window.data_issues
    finder._open_dialog()
    finder.dialog.show_issues(issues, images.arrays, "", FAST)
    _select(finder.dialog.label_errors, 0)
    with qtbot.waitSignal(finder.fixes_saved):
        finder.dialog.fixes.exclude_button.click()
    assert check.text() == "Use fixes 'fixes' (2)"
    entries = Overlay.open("fixes", FAST).config_entries()
    assert len(entries) == 2
    assert window.current_config().fixes == entries
    assert overlay.fixes[0].key in {key for key, _action, _label in entries}
    finder.dialog.close()
    # The run trains with them and records them.
    run_to_end(qtbot, window)
    (path,) = runs_root.glob("*/run.json")
    recorded = json.loads(path.read_text(encoding="utf-8"))
    assert recorded["config"]["fixes"] == [list(e) for e in entries]
    assert recorded["config"]["fixes_name"] == "fixes"


def test_check_data_counts_the_folder_as_a_run_with_its_fixes_sees_it(
    qtbot, panel, folder
):
    before = _digests(folder)
    cfg = TrainConfig(dataset="folder", data_dir=str(folder), image_size=8)
    overlay = Overlay.open("fixes", cfg)
    for name, action, label in (
        ("cat/000.jpg", "relabel", "dog"),
        ("fox/001.png", "exclude", ""),
    ):
        overlay.add(Fix(image_key(cfg, name), name, action, label))
    overlay.save()
    row = panel.check_row
    with qtbot.waitSignal(row.checker.checked, timeout=20_000):
        panel.apply_config(cfg)
    assert panel.count_label.text().startswith("3 classes · 15 images: ")

    with qtbot.waitSignal(row.checker.checked, timeout=20_000):
        panel.fixes_check.setChecked(True)  # the summary follows the box

    label = panel.count_label.text()
    assert label.startswith("3 classes · 14 images with 1 relabelled, 1 excluded: ")
    report = row.last_report()
    assert report.images_per_class() == {"cat": 4, "dog": 6, "fox": 4}
    assert "fixes 'fixes' applied (your files are unchanged)" in report.lines()[1]
    with qtbot.waitSignal(row.checker.checked, timeout=20_000):
        panel.fixes_check.setChecked(False)
    assert panel.count_label.text().startswith("3 classes · 15 images: ")
    assert _digests(folder) == before


def test_check_data_with_a_fix_whose_image_is_gone_says_so(
    qtbot, panel, folder, error_dialogs
):
    cfg = TrainConfig(dataset="folder", data_dir=str(folder), image_size=8)
    overlay = Overlay.open("fixes", cfg)
    gone = folder / "dog" / "002.jpg"
    overlay.add(Fix(image_key(cfg, "dog/002.jpg"), "dog/002.jpg", "exclude"))
    overlay.save()
    gone.unlink()
    row = panel.check_row
    with qtbot.waitSignal(row.checker.checked, timeout=20_000):
        panel.apply_config(cfg)
    with qtbot.waitSignal(row.checker.failed, timeout=20_000):
        panel.fixes_check.setChecked(True)
    assert panel.count_label.text().startswith("The check failed: ")
    ((_title, message, _details),) = error_dialogs.shown
    error_dialogs.shown.clear()
    assert "1 of 1 name images that are not in the data any more (dog/002.jpg)" in (
        message
    )
    assert "nothing was applied" in message
    assert Overlay.open("fixes", cfg).fixes == overlay.fixes  # left as it was
