"""The Evaluation tab's per-class precision, recall and F1 table.

Fed hand-built lopsided predictions (a class never predicted, one predicted
but absent, one taking most mistakes), the table must show scikit-learn's
figures for each class and both averages, follow the epoch slider, sort its
classes while the averages stay in view under them.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QPoint, QRect, Qt
from PySide6.QtWidgets import QApplication, QWidget
from sklearn.metrics import precision_recall_fscore_support

from workbench.core.events import Evaluation
from workbench.ui.panels.evaluation import EvaluationPanel
from workbench.ui.widgets.class_scores_table import COLUMNS, ClassScoresTable

pytestmark = pytest.mark.gui

NAMES = ["cat", "dog", "ape", "owl"]  # not in alphabetical order
# (true, predicted, count). Everything that is not a cat is mostly read as a
# cat; owls are never predicted; no image is an ape but two read as one.
LOPSIDED = [
    (0, 0, 30), (0, 2, 2),
    (1, 0, 9), (1, 1, 6),
    (3, 0, 4), (3, 1, 1),
]  # fmt: skip
# A later epoch: much better, owls all found (F1 100%: sorts as a number).
BETTER = [(0, 0, 31), (0, 2, 1), (1, 1, 14), (1, 0, 1), (3, 3, 5)]


def _evaluation(epoch: int, cells: list[tuple[int, int, int]]) -> Evaluation:
    labels = np.repeat([t for t, _, n in cells], [n for *_, n in cells])
    predictions = np.repeat([p for _, p, n in cells], [n for *_, n in cells])
    n = len(labels)
    return Evaluation(
        epoch=epoch,
        global_step=10 * (epoch + 1),
        labels=labels.astype(np.int64),
        predictions=predictions.astype(np.int64),
        confidences=np.full(n, 0.9, dtype=np.float32),
        losses=np.linspace(0.1, 1.0, n).astype(np.float32),
        num_classes=len(NAMES),
    )


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _expected(cells: list[tuple[int, int, int]]) -> list[list[str]]:
    """The rows scikit-learn's figures make: each class, then both averages."""
    ev = _evaluation(0, cells)
    truth, guess = ev.labels, ev.predictions
    precision, recall, f1, support = precision_recall_fscore_support(
        truth, guess, labels=list(range(len(NAMES))), zero_division=0
    )
    rows = [
        [name, f"{support[c]:,}", _pct(precision[c]), _pct(recall[c]), _pct(f1[c])]
        for c, name in enumerate(NAMES)
    ]
    for label, average in (("macro avg", "macro"), ("weighted avg", "weighted")):
        values = precision_recall_fscore_support(
            truth, guess, average=average, zero_division=0
        )[:3]
        rows.append([label, f"{len(truth):,}", *map(_pct, values)])
    return rows


@pytest.fixture
def panel(qtbot):
    widget = EvaluationPanel()
    qtbot.addWidget(widget)
    widget.resize(900, 700)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _table(panel: EvaluationPanel) -> ClassScoresTable:
    table = panel.findChild(ClassScoresTable, "classScoresTable")
    assert table is not None
    return table


def test_each_class_and_both_averages_are_scikit_learns(panel):
    panel.set_class_names(NAMES)
    panel.add_evaluation(_evaluation(0, LOPSIDED), None)
    table = _table(panel)
    headers = [
        table.classes.horizontalHeaderItem(c).text()
        for c in range(table.classes.columnCount())
    ]
    assert headers == list(COLUMNS) == ["class", "support", "precision", "recall", "F1"]
    rows = table.row_texts()
    assert rows == _expected(LOPSIDED)
    # What makes it lopsided, by hand: owls never predicted, apes never there.
    assert rows[3] == ["owl", "5", "0.0%", "0.0%", "0.0%"]
    assert rows[2] == ["ape", "0", "0.0%", "0.0%", "0.0%"]
    assert rows[0][2:4] == ["69.8%", "93.8%"]  # cat: 30 of 43, 30 of 32
    assert rows[4] != rows[5]  # macro and weighted differ
    # The tooltips give the counts behind a share, and say why a 0 is 0.
    assert table.classes.item(0, 2).toolTip() == (
        "30 of the 43 images predicted as cat are cat"
    )
    assert (
        table.classes.item(1, 3).toolTip() == "6 of the 15 dog images predicted right"
    )
    assert table.classes.item(3, 2).toolTip() == (
        "no image was predicted as owl (precision counted as 0)"
    )
    assert table.classes.item(2, 3).toolTip() == (
        "no validation image is ape (recall counted as 0)"
    )


def test_the_table_follows_the_epoch_shown(panel):
    panel.set_class_names(NAMES)
    panel.add_evaluation(_evaluation(0, LOPSIDED), None)
    panel.add_evaluation(_evaluation(1, BETTER), None)
    table = _table(panel)
    assert table.row_texts() == _expected(BETTER)
    panel.epoch_slider.setValue(0)
    assert table.row_texts() == _expected(LOPSIDED)
    panel.clear()
    assert table.row_texts() == []
    assert table.classes.rowCount() == 0
    assert not table.averages.isVisible()


def test_sorting_orders_the_classes_and_the_averages_stay_in_view(panel, qtbot):
    panel.set_class_names(NAMES)
    panel.add_evaluation(_evaluation(0, LOPSIDED), None)
    table = _table(panel)
    expected = _expected(LOPSIDED)
    f1 = COLUMNS.index("F1")
    header = table.classes.horizontalHeader()
    qtbot.mouseClick(
        header.viewport(),
        Qt.MouseButton.LeftButton,
        pos=QPoint(header.sectionViewportPosition(f1) + 5, header.height() // 2),
    )
    rows = table.row_texts()
    by_f1 = sorted(expected[:4], key=lambda row: (float(row[4][:-1]), row[0]))
    shown_f1 = [float(row[4][:-1]) for row in rows[:4]]
    assert shown_f1 == sorted(shown_f1) == [float(r[4][:-1]) for r in by_f1]
    assert rows[4:] == expected[4:]  # the averages, still last
    table.classes.sortByColumn(f1, Qt.SortOrder.DescendingOrder)
    rows = table.row_texts()
    assert [float(row[4][:-1]) for row in rows[:4]] == sorted(shown_f1, reverse=True)
    assert rows[4:] == expected[4:]
    # A new epoch keeps the order the user chose.
    panel.add_evaluation(_evaluation(1, BETTER), None)
    shown = [float(row[4][:-1]) for row in table.row_texts()[:4]]
    assert shown == sorted(shown, reverse=True)
    # Back to class order by the class column.
    table.classes.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    assert table.row_texts() == _expected(BETTER)


def test_the_averages_are_in_view_under_many_classes(qtbot, tmp_path):
    panel = EvaluationPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 700)
    panel.show()
    qtbot.waitExposed(panel)
    rng = np.random.default_rng(5)
    n = 40
    labels = rng.integers(0, n, 2000)
    predictions = np.where(rng.random(2000) < 0.7, labels, rng.integers(0, n, 2000))
    panel.add_evaluation(
        Evaluation(0, 1, labels, predictions, np.ones(2000, np.float32),
                   np.ones(2000, np.float32), n),
        None,
    )  # fmt: skip
    table = _table(panel)
    assert table.classes.rowCount() == n
    qtbot.waitUntil(table.classes.verticalScrollBar().isVisible)  # they scroll
    averages = table.averages
    assert averages.isVisible()
    corner = averages.mapTo(panel, QPoint(0, 0))
    assert corner.y() >= 0
    assert corner.y() + averages.height() <= panel.height()
    for row in range(2):  # both rows wholly drawn in the footer
        assert averages.rowViewportPosition(row) >= 0
        bottom = averages.rowViewportPosition(row) + averages.rowHeight(row)
        assert bottom <= averages.viewport().height()
    # The footer's columns line up with the classes' columns.
    for column in range(len(COLUMNS)):
        assert averages.columnWidth(column) == table.classes.columnWidth(column)
    # Every number fits its column: nothing is elided.
    metrics = averages.fontMetrics()
    for column in range(1, len(COLUMNS)):
        text = averages.item(1, column).text()
        assert metrics.horizontalAdvance(text) < averages.columnWidth(column)
    assert panel.grab().save(str(tmp_path / "class_scores.png"))


def test_in_the_evaluation_tab_the_scores_are_in_view_not_stretched_names(qtbot):
    """The class column is as wide as its names: in a narrow tab (the window at
    800 px) every score is in view, no sideways scroll."""
    panel = EvaluationPanel()
    qtbot.addWidget(panel)
    panel.resize(450, 700)
    panel.show()
    panel.set_class_names(NAMES)
    panel.add_evaluation(_evaluation(0, BETTER), None)
    rows = panel.scores_table.classes
    assert rows.horizontalScrollBar().maximum() == 0
    f1 = COLUMNS.index("F1")
    end = rows.columnViewportPosition(f1) + rows.columnWidth(f1)
    assert end <= rows.viewport().width()


def _settle() -> None:
    """Let pending layout requests run (each level posts one to its parent)."""
    for _ in range(4):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        QApplication.processEvents()


def _in_window(widget: QWidget) -> QRect:
    return widget.rect().translated(widget.mapTo(widget.window(), QPoint(0, 0)))


def _ten_classes() -> Evaluation:
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 10, 300)
    wrong = rng.random(300) < 0.2
    predictions = np.where(wrong, (labels + 3) % 10, labels)
    return Evaluation(0, 50, labels, predictions, np.full(300, 0.9, np.float32),
                      np.ones(300, np.float32), 10)  # fmt: skip


def test_in_the_window_at_1500_px_every_column_is_in_view(qtbot, window):
    """At the window's usual size the whole table shows, nothing scrolled away:
    every column (class to F1), all ten classes and both averages; at the
    minimum width the columns keep their width (the tab scrolls sideways)."""
    window.resize(1500, 950)
    tabs = window.tabs
    titles = [tabs.tabText(i) for i in range(tabs.count())]
    tabs.setCurrentIndex(titles.index("Evaluation"))
    panel = window.evaluation_panel
    panel.set_class_names(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    )
    panel.add_evaluation(_ten_classes(), None)
    _settle()
    table = panel.scores_table
    rows, averages = table.classes, table.averages
    assert rows.rowCount() == 10
    assert rows.horizontalScrollBar().maximum() == 0
    assert rows.verticalScrollBar().maximum() == 0  # all ten classes in view
    view = rows.viewport().width()
    header = rows.horizontalHeader()
    for column in range(len(COLUMNS)):
        end = header.sectionViewportPosition(column) + header.sectionSize(column)
        assert 0 <= header.sectionViewportPosition(column), COLUMNS[column]
        assert end <= view, COLUMNS[column]
    # Nor does the tab's page cut the table or the averages at the right or bottom.
    page = tabs.currentWidget()
    shown = _in_window(page.viewport())
    assert page.horizontalScrollBar().maximum() == 0
    assert shown.contains(_in_window(rows.viewport()))
    assert averages.isVisible()
    assert shown.contains(_in_window(averages))
    assert table.row_texts()[-2][0] == "macro avg"
    # Every text fits its column: nothing elided.
    metrics = rows.fontMetrics()
    for column in range(len(COLUMNS)):
        widest = max(metrics.horizontalAdvance(r[column]) for r in table.row_texts())
        assert widest < rows.columnWidth(column), COLUMNS[column]

    window.resize(800, 600)
    _settle()
    assert window.width() <= 800
    # Narrow, the numbers keep their fitted widths: scroll, never elide.
    for column in range(1, len(COLUMNS)):
        text = averages.item(1, column).text()
        assert metrics.horizontalAdvance(text) < averages.columnWidth(column)
        assert averages.columnWidth(column) == rows.columnWidth(column)
    assert averages.isVisible()
    assert _in_window(averages).bottom() <= _in_window(page.viewport()).bottom()
