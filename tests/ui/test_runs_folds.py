"""The Runs tab's cross-validations: a "Show:" entry per group, its folds, its scores.

Every run and group here is written by hand (run.json, group.json): no training.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from workbench.core.config import TrainConfig
from workbench.core.crossval.group import GROUP_FILE, SCORES, FoldGroup, groups_dir
from workbench.core.crossval.report import estimate_text
from workbench.core.crossval.stats import estimate
from workbench.core.runs.folder import RunFolder
from workbench.ui.panels.runs import COLUMNS, RunsPanel
from workbench.ui.panels.runs_groups import CrossValidation

pytestmark = pytest.mark.gui

BASE = TrainConfig(model="mlp", epochs=2, batch_size=64)
GROUP = "20261206-101500-mnist-12fold-ab12"
OTHER = "20261207-080000-mnist-2fold-cd34"  # newer: listed first
FOLD = COLUMNS.index("Sweep")  # the column sweep trials and fold runs share
# Each finished fold's scores on its held-out fold (group.json), by fold.
SCORED = {
    0: {"val_accuracy": 0.98, "val_loss": 0.06, "macro_f1": 0.975},
    1: {"val_accuracy": 0.99, "val_loss": 0.05, "macro_f1": 0.985},
    9: {"val_accuracy": 0.97, "val_loss": 0.07, "macro_f1": 0.965},
}
# mean 98.00%, t(0.975, 2) * 0.01 / sqrt(3) = 2.48 points, cut at 100%.
ACCURACY = "validation accuracy 98.00% ± 2.48 (95% CI 95.52% to 100.00%, 3 folds)"


def _run(name: str, hour: int, **fields) -> RunFolder:
    folder = RunFolder.create(BASE, origin="test")
    folder.update(
        name=name,
        status="finished",
        created=f"2026-12-06T{hour:02d}:00:00+00:00",
        best_val_accuracy=0.5,  # not a fold score: the summary must not use it
        **fields,
    )
    return folder


def _fold_run(name: str, hour: int, group: str, fold: int, of: int) -> RunFolder:
    return _run(name, hour, folds={"group": group, "fold": fold, "of": of})


def _write_group(
    root: Path, group: str, folds: int, runs: dict[int, str], scores: dict
) -> Path:
    path = groups_dir(root) / group
    path.mkdir(parents=True, exist_ok=True)
    done = len(scores) == folds
    data = {
        "id": group,
        "folds": folds,
        "seed": 0,
        "config": BASE.to_dict(),
        "status": "finished" if done else "running",
        "runs": {str(k): v for k, v in runs.items()},
        "scores": {str(k): v for k, v in scores.items()},
    }
    (path / GROUP_FILE).write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def cv(runs_root) -> dict[str, RunFolder]:
    """Folds 1, 2 and 10 of a 12-fold group (scored), a plain run P.

    Newest first by date is F2, P, F10, F1: neither fold order (F1, F2, F10)
    nor the fold label's text order (fold 1, fold 10, fold 2).
    """
    runs = {
        "F1": _fold_run("F1", 9, GROUP, 0, 12),
        "F2": _fold_run("F2", 12, GROUP, 1, 12),
        "F10": _fold_run("F10", 10, GROUP, 9, 12),
        "P": _run("P", 11),
    }
    ids = {0: runs["F1"].id, 1: runs["F2"].id, 9: runs["F10"].id}
    _write_group(runs_root, GROUP, 12, ids, SCORED)
    return runs


@pytest.fixture
def panel(qtbot, cv) -> RunsPanel:
    widget = RunsPanel()
    qtbot.addWidget(widget)
    widget.resize(1000, 600)
    widget.show()
    return widget


def _titles(panel: RunsPanel) -> list[str]:
    return [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())]


def _column(panel: RunsPanel, column: int) -> list[str]:
    table = panel.table
    return [table.item(r, column).text() for r in range(table.rowCount())]


def _entries(panel: RunsPanel) -> list[str]:
    combo = panel.group_combo
    return [combo.itemText(i) for i in range(combo.count())]


def _choose(panel: RunsPanel, text: str) -> None:
    """Pick the "Show:" entry whose text starts with ``text``, as the user would."""
    (index,) = [i for i, t in enumerate(_entries(panel)) if t.startswith(text)]
    panel.group_combo.setCurrentIndex(index)


def _accuracies(*folds: int) -> list[float]:
    return [SCORED[f]["val_accuracy"] for f in folds]


def test_a_cross_validation_gets_a_show_entry_with_its_folds_and_accuracy(
    panel, cv, runs_root
):
    combo = panel.group_combo
    assert combo.isVisible()
    assert panel.group_label.isVisible()
    assert "cross-validation" in combo.toolTip()
    # The same figures as the core's Student's t estimate on group.json's scores.
    value = estimate(_accuracies(0, 1, 9))
    shown = f"{100 * value.mean:.2f}% ± {100 * value.half_width:.2f}"
    assert shown == "98.00% ± 2.48"
    assert _entries(panel) == [
        "All runs",
        "Runs outside cross-validations",
        f"Cross-validation {GROUP}: 3 of 12 folds, accuracy {shown}",
    ]
    assert combo.itemData(2) == CrossValidation(GROUP)
    assert combo.currentText() == "All runs"
    assert panel.fold_summary.isHidden()  # no group chosen: no summary

    # A finished group says its fold count alone; newest group first.
    a = _fold_run("G1", 8, OTHER, 0, 2)
    b = _fold_run("G2", 8, OTHER, 1, 2)
    scores = {0: {"val_accuracy": 0.9}, 1: {"val_accuracy": 0.8}}
    _write_group(runs_root, OTHER, 2, {0: a.id, 1: b.id}, scores)
    panel.refresh()
    other = estimate([0.9, 0.8])
    assert _entries(panel)[2:] == [
        f"Cross-validation {OTHER}: 2 folds, accuracy "
        f"{100 * other.mean:.2f}% ± {100 * other.half_width:.2f}",
        f"Cross-validation {GROUP}: 3 of 12 folds, accuracy {shown}",
    ]


def test_choosing_a_group_lists_exactly_its_folds_in_fold_order(panel, cv, runs_root):
    a = _fold_run("G1", 13, OTHER, 0, 2)  # another group's fold: never listed
    _write_group(runs_root, OTHER, 2, {0: a.id}, {})
    panel.refresh()
    assert _titles(panel) == ["G1", "F2", "P", "F10", "F1"]  # newest first
    _choose(panel, f"Cross-validation {GROUP}")
    assert panel.group_combo.choice() == CrossValidation(GROUP)
    assert _titles(panel) == ["F1", "F2", "F10"]  # fold 1, 2, 10: not as text
    assert _column(panel, FOLD) == ["fold 1 of 12", "fold 2 of 12", "fold 10 of 12"]
    assert panel.table.horizontalHeaderItem(FOLD).text() == "Fold"
    _choose(panel, f"Cross-validation {OTHER}")
    assert _titles(panel) == ["G1"]
    _choose(panel, "Runs outside cross-validations")
    assert _titles(panel) == ["P"]
    _choose(panel, f"Cross-validation {GROUP}")
    _choose(panel, "All runs")
    assert _titles(panel) == ["G1", "F2", "P", "F10", "F1"]  # sorted as before
    header = panel.table.horizontalHeader()
    assert header.sortIndicatorSection() == COLUMNS.index("Date")
    assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder


def test_the_summary_gives_each_scores_mean_and_interval_from_group_json(panel, cv):
    label = panel.fold_summary
    _choose(panel, f"Cross-validation {GROUP}")
    assert label.isVisible()
    text = label.text()
    assert text.startswith("3 of 12 folds finished")
    assert str(groups_dir() / GROUP) in label.toolTip()
    assert ACCURACY in text.splitlines()
    for name in SCORES:  # each score: the core's estimate of group.json's numbers
        value = estimate([SCORED[f][name] for f in (0, 1, 9)])
        assert estimate_text(name, value) in text.splitlines(), name
    assert "validation loss 0.0600 ± 0.0248" in text
    assert "50.00%" not in text  # the runs' own best accuracy is not a fold score
    assert label.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    combo_bottom = panel.group_combo.mapTo(panel, panel.group_combo.rect().bottomLeft())
    label_top = label.mapTo(panel, label.rect().topLeft())
    table_top = panel.table.mapTo(panel, panel.table.rect().topLeft())
    assert combo_bottom.y() <= label_top.y() < table_top.y()  # under the box
    _choose(panel, "All runs")
    assert label.isHidden()
    _choose(panel, "Runs outside")
    assert label.isHidden()


def test_the_chosen_group_survives_a_refresh_and_falls_back_when_it_goes(
    qtbot, panel, cv, runs_root
):
    _choose(panel, f"Cross-validation {GROUP}")
    # Fold 4 finishes (its run and its scores) and a sweep's trial appears:
    # the entries change, the choice stays.
    f4 = _fold_run("F4", 14, GROUP, 3, 12)
    _run("Q", 15, sweep={"study": "s", "trial": 1})
    scores = {**SCORED, 3: {"val_accuracy": 0.96}}
    ids = {0: cv["F1"].id, 1: cv["F2"].id, 9: cv["F10"].id, 3: f4.id}
    _write_group(runs_root, GROUP, 12, ids, scores)
    # The watcher's refresh lists F4; then the user's Refresh.
    qtbot.waitUntil(lambda: "F4" in _titles(panel), timeout=5_000)
    panel.refresh()
    assert panel.group_combo.choice() == CrossValidation(GROUP)
    assert _entries(panel)[1:3] == [
        "Runs outside sweeps and cross-validations",
        "Sweep s: 1 trial, best 50.00%",
    ]
    assert _titles(panel) == ["F1", "F2", "F4", "F10"]
    value = estimate([0.98, 0.99, 0.97, 0.96])
    assert panel.group_combo.currentText() == (
        f"Cross-validation {GROUP}: 4 of 12 folds, accuracy "
        f"{100 * value.mean:.2f}% ± {100 * value.half_width:.2f}"
    )
    assert "4 of 12 folds finished" in panel.fold_summary.text()
    assert estimate_text("val_accuracy", value) in panel.fold_summary.text()
    # The scores of the fold after it come in group.json alone, after its run
    # ended: the summary follows without Refresh (the group folder is watched).
    scores[2] = {"val_accuracy": 0.95}
    FoldGroup(groups_dir() / GROUP).update(
        scores={str(k): v for k, v in scores.items()}
    )
    qtbot.waitUntil(
        lambda: "5 of 12 folds finished" in panel.fold_summary.text(), timeout=5_000
    )
    # The group's runs are deleted (outside the window): every run again.
    for name in ("F1", "F2", "F10"):
        shutil.rmtree(cv[name].path)
    shutil.rmtree(f4.path)
    panel.refresh()
    assert panel.group_combo.currentText() == "All runs"
    assert panel.fold_summary.isHidden()
    assert sorted(_titles(panel)) == ["P", "Q"]


def test_show_is_hidden_without_sweeps_or_cross_validations(qtbot):
    _run("P", 9)
    _run("R", 10, folds="not a fold")  # a hand-edited run.json: no group
    widget = RunsPanel()
    qtbot.addWidget(widget)
    widget.show()
    assert widget.group_combo.isHidden()
    assert widget.group_label.isHidden()
    assert widget.fold_summary.isHidden()
    assert widget.table.isColumnHidden(FOLD)
    # A fold run whose group.json is gone still gets its entry, and says so.
    _fold_run("F", 11, GROUP, 0, 5)
    widget.refresh()
    assert widget.group_combo.isVisible()
    assert _entries(widget)[2] == (
        f"Cross-validation {GROUP}: 1 fold run, no group record"
    )
    _choose(widget, "Cross-validation")
    assert _titles(widget) == ["F"]
    assert "group.json is missing or unreadable" in widget.fold_summary.text()


def test_fold_runs_say_so_in_the_table_beside_sweep_trials(panel, cv):
    # All runs: the fold label where a sweep trial has its label.
    assert not panel.table.isColumnHidden(FOLD)
    assert panel.table.horizontalHeaderItem(FOLD).text() == "Fold"
    shown = dict(zip(_titles(panel), _column(panel, FOLD), strict=True))
    assert shown == {
        "F1": "fold 1 of 12",
        "F2": "fold 2 of 12",
        "F10": "fold 10 of 12",
        "P": "",
    }
    row = _titles(panel).index("F2")
    tip = panel.table.item(row, FOLD).toolTip()
    assert tip == f"Cross-validation {GROUP}, fold 2 of 12"  # which group
    cv["P"].update(sweep={"study": "s", "trial": 3})
    panel.refresh()
    assert panel.table.horizontalHeaderItem(FOLD).text() == "Sweep / fold"
    assert _entries(panel)[1:3] == [
        "Runs outside sweeps and cross-validations",
        "Sweep s: 1 trial, best 50.00%",
    ]
    panel.table.sortByColumn(FOLD, Qt.SortOrder.AscendingOrder)
    folds = [t for t in _titles(panel) if t.startswith("F")]
    assert folds == ["F1", "F2", "F10"]  # a group's folds together, in order
    _choose(panel, "Runs outside")
    assert _titles(panel) == []  # P is a sweep's trial now
