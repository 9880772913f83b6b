"""The per-class accuracy bars: value labels that never run into each other."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from PySide6.QtCore import QRectF

from workbench.ui.plots.class_accuracy import ClassAccuracyChart

pytestmark = pytest.mark.gui

# Ten classes, all close to 97% (as a trained MNIST model has them).
ACCURACY = [0.971, 0.973, 1.0, 0.956, 0.982, 0.969, 0.99, 0.961, 0.948, 0.977]


def confusion(accuracy: list[float], per_class: int = 1000) -> np.ndarray:
    n = len(accuracy)
    matrix = np.zeros((n, n), dtype=int)
    for i, a in enumerate(accuracy):
        right = round(a * per_class)
        matrix[i, i] = right
        matrix[i, (i + 1) % n] = per_class - right
    return matrix


def ink(label) -> QRectF:
    """The scene rectangle of a label's text, without the text item's margins."""
    margin = label.textItem.document().documentMargin()
    return label.sceneBoundingRect().adjusted(margin, margin, -margin, -margin)


@pytest.mark.parametrize("width", [180, 230, 300, 420, 900])
def test_value_labels_never_overlap(qtbot, width):
    chart = ClassAccuracyChart()
    qtbot.addWidget(chart)
    chart.resize(width, 260)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_matrix(confusion(ACCURACY), [str(i) for i in range(10)])
    qtbot.wait(20)
    labels = chart.bar_labels()
    rects = [ink(label) for label in labels]
    for left, right in itertools.pairwise(rects):
        assert left.right() + 2 <= right.left(), (width, left, right)
    texts = [label.toPlainText() for label in labels]
    if width >= 420:  # room for the tenths
        assert texts == [f"{100 * a:.1f}" for a in ACCURACY]
    elif texts:  # whole percents, or nothing rather than a jumble
        assert texts == [f"{100 * a:.0f}" for a in ACCURACY]
    # Every value stays in the tooltip, whatever the width.
    assert "2: 100.0%" in chart.toolTip()
    assert "8: 94.8%" in chart.toolTip()


def test_labels_follow_the_width(qtbot):
    chart = ClassAccuracyChart()
    qtbot.addWidget(chart)
    chart.resize(900, 260)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_matrix(confusion(ACCURACY), [str(i) for i in range(10)])
    assert chart.bar_labels()[0].toPlainText() == "97.1"
    chart.resize(180, 260)  # the splitter narrows the tab
    qtbot.waitUntil(lambda: chart.getPlotItem().getViewBox().width() < 200)
    assert all(label.toPlainText() != "97.1" for label in chart.bar_labels())
    chart.resize(900, 260)
    qtbot.waitUntil(lambda: len(chart.bar_labels()) == 10)
    assert chart.bar_labels()[0].toPlainText() == "97.1"


def test_more_classes_than_labels_draw_bars_without_labels(qtbot):
    chart = ClassAccuracyChart()
    qtbot.addWidget(chart)
    chart.resize(900, 260)
    chart.show()
    qtbot.waitExposed(chart)
    n = ClassAccuracyChart.MAX_BAR_LABELS + 20  # CIFAR-100 has 100
    accuracy = [0.5 + i / (2 * n) for i in range(n)]
    chart.set_matrix(confusion(accuracy, 100), [str(i) for i in range(n)])
    assert chart.bar_labels() == []
    heights = chart.bar_item().opts["height"]
    assert np.allclose(heights, [round(100 * a) for a in accuracy])
    chart.set_matrix(confusion(ACCURACY), [str(i) for i in range(10)])  # back to ten
    assert len(chart.bar_labels()) == 10
