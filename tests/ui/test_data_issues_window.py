"""Data ▸ Find data issues…: the lists in their dialog (rank order, names, the
class filter, the most-confused pairs), the menu entry, and the pass from the
window: a finished cross-validation reused, or its folds trained first."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtGui import QKeySequence

from workbench.cli.commands import main as cli_main
from workbench.core.config import TrainConfig
from workbench.core.crossval.group import list_groups
from workbench.core.data.registry import ImageArrays
from workbench.core.data_issues.held_out import (
    matching_group,
    training_probabilities,
    validation_probabilities,
)
from workbench.core.data_issues.images import NamedImages, named_images
from workbench.core.data_issues.report import DataIssues, find_data_issues
from workbench.ui import dialogs
from workbench.ui.data_issues_view import DataIssuesDialog, top_loss_count

from .helpers import FAST

pytestmark = pytest.mark.gui

NAMES = ("cat", "dog", "fox")
DIGITS = tuple(str(d) for d in range(10))
TIMEOUT_MS = 120_000


def _probabilities(labels: np.ndarray, doubted: dict[int, tuple[int, float]]):
    """Sure of each given label, but for ``doubted`` rows: (class, its probability)."""
    p = np.full((len(labels), 3), 0.05)
    p[np.arange(len(labels)), labels] = 0.9
    for row, (cls, value) in doubted.items():
        p[row] = (1 - value) / 2
        p[row, cls] = value
    return p


@pytest.fixture
def made() -> tuple[DataIssues, NamedImages]:
    """:func:`made_issues`."""
    return made_issues()


def made_issues() -> tuple[DataIssues, NamedImages]:
    """12 training and 3 validation images of 3 classes, held-out probabilities
    that doubt 4 of them, and a validation image that copies a training one."""
    rng = np.random.default_rng(0)
    train_labels = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2])
    val_labels = np.array([0, 1, 2])
    train = rng.integers(0, 256, (12, 8, 8), dtype=np.uint8)
    val = rng.integers(0, 256, (3, 8, 8), dtype=np.uint8)
    val[0] = train[2]
    images = NamedImages(
        ImageArrays(
            torch.from_numpy(train),
            torch.from_numpy(train_labels),
            torch.from_numpy(val),
            torch.from_numpy(val_labels),
        ),
        [f"{NAMES[c]}/{i}.png" for i, c in enumerate(train_labels)],
        [f"val/{NAMES[c]}-{i}.png" for i, c in enumerate(val_labels)],
    )
    train_p = _probabilities(train_labels, {1: (1, 0.9), 6: (2, 0.7), 9: (0, 0.6)})
    val_p = _probabilities(val_labels, {2: (1, 0.95)})
    return find_data_issues(images, train_p, val_p, NAMES), images


@pytest.fixture
def dialog(qtbot, made) -> DataIssuesDialog:
    issues, images = made
    view = DataIssuesDialog()
    qtbot.addWidget(view)
    view.show_issues(issues, images.arrays, "hand-made probabilities")
    return view


def _label_rows(issues: DataIssues, keep=lambda given: True):
    """The label errors as the table should show them: #, image, file, split,
    given, likely, self-confidence, fix (none made)."""
    found, names = issues.label_issues, issues.class_names
    return [
        (
            str(place + 1),
            "",
            issues.names[i],
            str(issues.splits[i]),
            names[given],
            names[suggested],
            f"{score:.3f}",
            "",
        )
        for place, (i, given, suggested, score) in enumerate(
            zip(found.index, found.given, found.suggested, found.score, strict=True)
        )
        if keep(given)
    ]


def test_the_label_errors_are_listed_in_rank_order_with_file_labels_and_score(
    dialog, made
):
    issues, _images = made
    assert len(issues.label_issues.index) == 3  # the fixture doubts enough
    assert np.all(np.diff(issues.label_issues.score) > 0)
    rows = dialog.label_errors.row_texts()
    assert rows == _label_rows(issues)
    assert rows[0][2:6] == ("val/fox-2.png", "val", "fox", "dog")
    # Each row's image is the flagged image's own thumbnail.
    model = dialog.label_errors.issues
    assert model.rows[0].cells[0].image == issues.label_issues.index[0]
    assert not model.data(model.index(0, 1), 1).isNull()  # DecorationRole
    # Top losses: highest first; the copy across the splits: exact, 1.000.
    losses = dialog.top_losses.row_texts()
    assert len(losses) == min(len(issues.names), top_loss_count(issues))
    order = issues.top_losses(len(losses))
    assert [r[2] for r in losses] == [issues.names[i] for i in order]
    scores = [float(r[-2]) for r in losses]  # before the Fix column
    assert scores == sorted(scores, reverse=True)
    (pair,) = dialog.duplicates.row_texts()
    assert pair == (
        "1",
        "",
        "cat/2.png",
        "cat",
        "",
        "val/cat-0.png",
        "cat",
        "1.000 exact",
        "",
    )
    assert dialog.tabs.tabText(0) == "Likely label errors (3)"
    assert dialog.tabs.tabText(3) == "Duplicates (1)"
    assert "Confident learning" in dialog.tabs.tabToolTip(0)
    assert dialog.summary_label.text().startswith("15 images (12 training, 3 valid")


def test_the_class_filter_keeps_only_that_given_label(dialog, made):
    issues, _images = made
    combo = dialog.class_filter
    items = [combo.itemText(i) for i in range(combo.count())]
    assert items == ["All classes", *NAMES]
    for cls, name in enumerate(NAMES):
        combo.setCurrentIndex(cls + 1)
        assert dialog.given_class == cls
        rows = dialog.label_errors.row_texts()
        assert rows == _label_rows(issues, lambda given, c=cls: given == c)
        losses = dialog.top_losses.row_texts()
        assert {r[4] for r in losses} == {name}
        assert len(losses) == int((issues.labels == cls).sum())
        assert all(name in (r[3], r[6]) for r in dialog.duplicates.row_texts())
        assert {r[0] for r in dialog.pair_texts()} <= {name}
    combo.setCurrentIndex(0)
    assert dialog.given_class is None
    assert dialog.label_errors.row_texts() == _label_rows(issues)


def test_the_most_confused_table_is_the_cores_and_a_pair_lists_its_images(dialog, made):
    issues, _images = made
    assert dialog.pair_texts() == [
        (NAMES[p.given], NAMES[p.predicted], str(p.count)) for p in issues.confused
    ]
    assert dialog.pair_images.row_texts() == []
    row = next(
        r for r, p in enumerate(issues.confused) if (p.given, p.predicted) == (2, 1)
    )
    dialog.pairs.selectRow(row)
    (image,) = dialog.pair_images.row_texts()
    assert image[2:6] == ("val/fox-2.png", "val", "fox", "dog")
    assert "labelled fox that the held-out models predict as dog" in (
        dialog.pair_label.text()
    )


def test_find_data_issues_is_in_the_data_menu_with_its_own_shortcut(window):
    action = window.commands.find_issues
    assert action.shortcut() == QKeySequence("Ctrl+Shift+I")
    (data_menu,) = [a.menu() for a in window.menuBar().actions() if a.text() == "&Data"]
    assert action in data_menu.actions()
    taken = [key for a in window.actions() if a is not action for key in a.shortcuts()]
    assert action.shortcut() not in taken
    assert "cross-validation" in action.toolTip()
    assert action.isEnabled()


def _find(qtbot, window) -> DataIssuesDialog:
    """Trigger the action; wait until the pass ended, all idle; its dialog."""
    window.commands.find_issues.trigger()
    finder = window.data_issues
    assert finder.searching
    qtbot.waitUntil(
        lambda: not finder.searching and window.state == "idle", timeout=TIMEOUT_MS
    )
    assert finder.dialog is not None
    return finder.dialog


def _core_issues(cfg: TrainConfig) -> DataIssues:
    """What ``data-issues`` computes for ``cfg``'s finished group."""
    images = named_images(cfg)
    group = matching_group(cfg, images.arrays.train_labels)
    assert group is not None
    return find_data_issues(
        images,
        training_probabilities(group),
        validation_probabilities(group, cfg),
        DIGITS,
    )


def test_a_finished_cross_validation_is_reused_without_training(
    qtbot, window, runs_root, monkeypatch
):
    asked: list[str] = []
    monkeypatch.setattr(dialogs, "confirm", lambda _p, title, _t: asked.append(title))
    argv = ["train", "--dataset", "digits", "--model", "mlp", "--epochs", "1"]
    assert cli_main([*argv, "--folds", "3", "--quiet"]) == 0
    (group,) = list_groups(runs_root)
    cfg = TrainConfig.from_dict(group.info()["config"])
    window.apply_config(cfg)  # Folds 3: the group's K, its settings
    runs = sorted(runs_root.glob("*/run.json"))
    dialog = _find(qtbot, window)
    assert asked == []  # reused: no question
    assert sorted(runs_root.glob("*/run.json")) == runs  # nothing trained
    assert dialog.issues is not None
    expected = _core_issues(cfg)
    assert dialog.label_errors.issues.rowCount() == len(expected.label_issues.index)
    assert dialog.label_errors.row_texts() == _label_rows(expected)
    assert dialog.pair_texts() == [
        (str(p.given), str(p.predicted), f"{p.count:,}") for p in expected.confused
    ]
    assert group.id in dialog.source_label.text()
    assert window.status_label.text().startswith("Data issues: 1,797 images")
    assert dialog.isVisible()
    assert not dialog.cancel_button.isVisible()
    dialog.close()


def test_without_one_it_asks_and_declined_trains_nothing(
    qtbot, window, runs_root, monkeypatch
):
    asked: list[tuple[str, str]] = []

    def answer(_parent, title: str, text: str) -> bool:
        asked.append((title, text))
        return False

    monkeypatch.setattr(dialogs, "confirm", answer)
    window.apply_config(FAST)  # Folds off: the pass uses 5
    dialog = _find(qtbot, window)
    ((title, text),) = asked
    assert title == "Train 5 folds first?"
    assert "5-fold cross-validation of these settings" in text
    said = "Data issues not searched: the 5 folds were not trained"
    assert window.status_label.text() == said
    assert dialog.summary_label.text() == said
    assert dialog.issues is None
    assert not any(runs_root.iterdir())
    assert window.current_config().folds == 1  # the panels are as they were


def test_with_yes_the_folds_train_in_the_window_then_the_lists_open(
    qtbot, window, runs_root, monkeypatch
):
    monkeypatch.setattr(dialogs, "confirm", lambda *_args: True)
    cfg = FAST.replace(folds=3)
    window.apply_config(cfg)
    dialog = _find(qtbot, window)
    assert dialog.issues is not None
    (group,) = list_groups(runs_root)
    assert group.info()["status"] == "finished"
    assert len(group.run_ids()) == 3
    expected = _core_issues(cfg)
    assert dialog.label_errors.issues.rowCount() == len(expected.label_issues.index)
    assert dialog.label_errors.row_texts() == _label_rows(expected)
    assert group.id in dialog.source_label.text()


def test_cancel_ends_the_search_and_leaves_the_window_idle(qtbot, window, runs_root):
    window.apply_config(FAST.replace(folds=3))
    window.commands.find_issues.trigger()
    dialog = window.data_issues.dialog
    assert dialog.cancel_button.isVisible()
    assert not window.commands.find_issues.isEnabled()  # one pass at a time
    with qtbot.waitSignal(window.controller.issues_failed, timeout=TIMEOUT_MS):
        dialog.cancel_button.click()
    assert window.status_label.text() == "Finding data issues cancelled"
    assert dialog.summary_label.text() == "Finding data issues cancelled"
    assert window.state == "idle"
    assert window.commands.find_issues.isEnabled()
    assert not window.data_issues.searching
    assert dialog.issues is None
