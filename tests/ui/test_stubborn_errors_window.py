"""Stubborn errors in the data issues dialog: the images every finished run of
the ledger on the same data gets wrong, sorted and filtered like the other
lists, how many runs were asked, and why the list is empty when it is (fewer
than 2 runs on the data, or none wrong every time)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from workbench.cli.commands import main as cli_main
from workbench.core.config import TrainConfig
from workbench.core.crossval.group import list_groups
from workbench.core.data_issues.images import named_images
from workbench.core.data_issues.stubborn import Stubborn, stubborn_errors
from workbench.core.runs.listing import list_runs
from workbench.ui.data_issues_view import DataIssuesDialog
from workbench.ui.tasks import TaskThread

from .test_data_issues_window import (
    NAMES,
    TIMEOUT_MS,
    _core_issues,
    _find,
    made_issues,
)

pytestmark = pytest.mark.gui

RUNS = ("20260101-000000-a", "20260102-000000-b")


def _stubborn_rows(issues, stubborn, keep=lambda given: True):
    """The stubborn errors as the table should show them, by hand: lowest
    held-out probability of the given label first; #, image, file, split,
    given, likely, self-confidence, fix (none made)."""
    rows = sorted(
        (int(i) for i in stubborn.rows),
        key=lambda i: (issues.probabilities[i, issues.labels[i]], i),
    )
    names = issues.class_names
    return [
        (
            str(place + 1),
            "",
            issues.names[i],
            str(issues.splits[i]),
            names[issues.labels[i]],
            names[int(np.argmax(issues.probabilities[i]))],
            f"{issues.probabilities[i, issues.labels[i]]:.3f}",
            "",
        )
        for place, i in enumerate(rows)
        if keep(issues.labels[i])
    ]


@pytest.fixture
def shown(qtbot):
    """The hand-made issues with 5 stubborn errors of 2 runs, in a dialog."""
    issues, images = made_issues()
    # Rows 1, 6 and 9 are doubted by the held-out models, 14 (val/fox) too;
    # row 3 is read as labelled by them (the runs alone get it wrong).
    stubborn = Stubborn(np.array([1, 3, 6, 9, 14]), RUNS)
    issues = dataclasses.replace(issues, stubborn=stubborn)
    view = DataIssuesDialog()
    qtbot.addWidget(view)
    view.show_issues(issues, images.arrays, "hand-made probabilities")
    return view, issues


def test_stubborn_errors_are_listed_lowest_self_confidence_first(shown):
    dialog, issues = shown
    rows = dialog.stubborn.table.row_texts()
    assert rows == _stubborn_rows(issues, issues.stubborn)
    assert [r[2] for r in rows][:2] == ["val/fox-2.png", "cat/1.png"]  # 0.025, 0.05
    assert rows[-1][2:6] == ("cat/3.png", "train", "cat", "cat")  # read as labelled
    confidences = [float(r[6]) for r in rows]
    assert confidences == sorted(confidences)
    assert dialog.tabs.tabText(4) == "Stubborn errors (5)"
    assert "2 runs or more asked" in dialog.tabs.tabToolTip(4)
    said = dialog.stubborn.label.text()
    assert said.startswith("5 images every one of the 2 finished runs on this data")
    assert all(run in said for run in RUNS)
    assert not dialog.stubborn.table.isHidden()
    # Each row's thumbnail is its own image.
    model = dialog.stubborn.table.issues
    assert [r.image for r in model.rows][:2] == [14, 1]


def test_the_class_filter_keeps_the_stubborn_errors_of_that_label(shown):
    dialog, issues = shown
    for cls in range(len(NAMES)):
        dialog.class_filter.setCurrentIndex(cls + 1)
        rows = dialog.stubborn.table.row_texts()
        expected = _stubborn_rows(issues, issues.stubborn, lambda g, c=cls: g == c)
        assert rows == expected  # numbered by their place among all
        assert dialog.tabs.tabText(4) == f"Stubborn errors ({len(expected)})"
    dialog.class_filter.setCurrentIndex(0)
    assert len(dialog.stubborn.table.row_texts()) == 5


def test_relabel_to_likely_skips_a_stubborn_error_read_as_labelled(shown):
    dialog, _issues = shown
    dialog.tabs.setCurrentIndex(4)
    assert dialog.current_table() is dialog.stubborn.table
    row = dialog.stubborn.table.issues.rows[-1]
    assert dialog._likely(row) is None  # cat/3.png: likely "cat" is its label
    first = dialog.stubborn.table.issues.rows[0]
    assert dialog._likely(first) == 1  # val/fox-2.png: dog


@pytest.mark.parametrize(
    ("stubborn", "said"),
    [
        (Stubborn(np.zeros(0, np.int64), ()), "no finished run of the ledger is on"),
        (Stubborn(np.zeros(0, np.int64), RUNS[:1]), "only one finished run"),
        (Stubborn(np.array([1, 6]), RUNS[:1]), "only one finished run"),
        (Stubborn(np.zeros(0, np.int64), RUNS), "None: each image was read as"),
    ],
)
def test_too_few_runs_or_none_wrong_say_why_nothing_is_listed(qtbot, stubborn, said):
    issues, images = made_issues()
    dialog = DataIssuesDialog()
    qtbot.addWidget(dialog)
    dialog.show_issues(issues, images.arrays, "")
    assert dialog.stubborn.label.text() == "Stubborn errors were not looked for."
    dialog.show_stubborn_asking()
    assert dialog.stubborn.label.text().startswith("Asking every finished run")
    dialog.show_stubborn(stubborn)
    assert said in dialog.stubborn.label.text()
    assert dialog.stubborn.table.row_texts() == []
    assert dialog.stubborn.table.isHidden()
    listed = len(stubborn.runs) >= 2
    assert dialog.tabs.tabText(4) == (
        "Stubborn errors (0)" if listed else "Stubborn errors"
    )
    if stubborn.runs:
        assert stubborn.runs[0] in dialog.stubborn.label.text()


def _train(*flags: str) -> None:
    argv = ["train", "--dataset", "digits", "--model", "mlp", "--epochs", "1"]
    assert cli_main([*argv, *flags, "--quiet"]) == 0


def test_the_pass_asks_every_run_on_the_data_and_lists_what_all_got_wrong(
    qtbot, window, runs_root
):
    _train("--folds", "3")  # the pass's cross-validation: its runs do not count
    (group,) = list_groups(runs_root)
    cfg = TrainConfig.from_dict(group.info()["config"])
    window.apply_config(cfg)
    finder = window.data_issues
    # The lists show while the runs are asked; closing the window waits for it.
    with qtbot.waitSignal(window.controller.issues_found, timeout=TIMEOUT_MS):
        window.commands.find_issues.trigger()
    assert finder.searching
    assert finder.dialog.stubborn.label.text().startswith("Asking every finished")
    assert finder.dialog.tabs.tabText(4) == "Stubborn errors"
    assert finder.dialog.label_errors.issues.rowCount() > 0
    finder.shutdown()
    assert TaskThread.running_threads() == []
    qtbot.waitUntil(lambda: not finder.searching)

    dialog = _find(qtbot, window)
    assert "no finished run of the ledger is on this data" in (
        dialog.stubborn.label.text()
    )
    assert dialog.tabs.tabText(4) == "Stubborn errors"

    _train("--seed", "1")
    dialog = _find(qtbot, window)
    (one,) = [r for r in list_runs(runs_root) if r.config["folds"] == 1]
    said = dialog.stubborn.label.text()
    assert "only one finished run is on this data" in said
    assert one.id in said
    assert dialog.stubborn.table.row_texts() == []

    _train("--seed", "2")
    dialog = _find(qtbot, window)
    expected = stubborn_errors(cfg, named_images(cfg))
    assert len(expected.runs) == 2
    assert 0 < len(expected.rows) < 1797  # one epoch: some, not all
    issues = _core_issues(cfg)
    assert dialog.stubborn.table.row_texts() == _stubborn_rows(issues, expected)
    count = len(expected.rows)
    assert dialog.tabs.tabText(4) == f"Stubborn errors ({count:,})"
    said = dialog.stubborn.label.text()
    assert "every one of the 2 finished runs on this data" in said
    assert all(run in said for run in expected.runs)
    assert window.state == "idle"
    assert not window.data_issues.searching
