"""Evaluation tab: matrix per epoch, per-class bars, the images of a cell."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QListWidget, QPushButton, QSlider, QWidget

from workbench.core.events import Evaluation
from workbench.ui.panels.evaluation import EvaluationPanel
from workbench.ui.plots.class_accuracy import ClassAccuracyChart
from workbench.ui.plots.confusion_matrix import ConfusionMatrix, cell_color

pytestmark = pytest.mark.gui

N = 300
CLASSES = 10
NAMES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
]


def make_evaluation(
    epoch: int = 0, n: int = N, classes: int = CLASSES, error_rate: float = 0.2
) -> Evaluation:
    """Random labels, mostly right predictions, random confidences and losses."""
    rng = np.random.default_rng(100 + epoch)
    labels = rng.integers(0, classes, n)
    wrong = rng.random(n) < error_rate
    # Most mistakes confuse a class with the one three further (3 -> 6, 8 -> 1):
    # a few well-filled error cells, the rest scattered.
    scattered = (labels + rng.integers(1, classes, n)) % classes
    shifted = np.where(rng.random(n) < 0.6, (labels + 3) % classes, scattered)
    predictions = np.where(wrong, shifted, labels)
    return Evaluation(
        epoch=epoch,
        global_step=(epoch + 1) * 50,
        labels=labels.astype(np.int64),
        predictions=predictions.astype(np.int64),
        confidences=rng.uniform(0.3, 1.0, n).astype(np.float32),
        losses=rng.exponential(0.5, n).astype(np.float32),
        num_classes=classes,
    )


def make_images(n: int = N) -> np.ndarray:
    """Image i carries i in two pixels (i % 256, i // 256), plus a stroke of ink."""
    images = np.zeros((n, 28, 28), dtype=np.uint8)
    index = np.arange(n)
    images[:, 0, 0] = index % 256
    images[:, 0, 1] = index // 256
    images[:, 6:22, 12:16] = 255
    return images


def decode(image: np.ndarray) -> int:
    return int(image[0, 0]) + 256 * int(image[0, 1])


@pytest.fixture
def panel(qtbot):
    widget = EvaluationPanel()
    qtbot.addWidget(widget)
    widget.resize(900, 700)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def gallery(panel: EvaluationPanel) -> QListWidget:
    return panel.findChild(QListWidget, "sampleGallery")


def gallery_text(panel: EvaluationPanel) -> str:
    return panel.findChild(QLabel, "galleryLabel").text()


def matrix_widget(panel: EvaluationPanel) -> ConfusionMatrix:
    return panel.findChild(ConfusionMatrix, "confusionMatrix")


def click_cell(panel: EvaluationPanel, true: int, predicted: int) -> None:
    widget = matrix_widget(panel)
    rect = widget.cell_rect(true, predicted)
    assert rect.width() >= 8, "cells too small to click"
    QTest.mouseClick(widget, Qt.MouseButton.LeftButton, pos=rect.center())


def test_object_names_and_empty_state(panel):
    for cls, name in [
        (QWidget, "confusionMatrix"),
        (QWidget, "perClassAccuracy"),
        (QSlider, "epochSlider"),
        (QListWidget, "sampleGallery"),
        (QLabel, "galleryLabel"),
        (QPushButton, "openInCanvasButton"),
    ]:
        assert panel.findChild(cls, name) is not None, name
    assert panel.objectName() == "evaluationPanel"
    assert panel.shown_epoch() is None
    assert panel.shown_matrix() is None
    assert not panel.findChild(QSlider, "epochSlider").isEnabled()
    assert len(panel.gallery_indices()) == 0
    panel.select_cell(1, 2)  # nothing to select: no error
    assert panel.selected_cell() is None


def test_every_cell_lists_exactly_its_images_hardest_first(panel):
    ev = make_evaluation()
    images = make_images()
    panel.set_class_names(NAMES)
    panel.add_evaluation(ev, images)
    confusion = ev.confusion()
    assert confusion.sum() == N
    assert (confusion - np.diag(np.diag(confusion))).sum() > 20  # real confusions
    view = gallery(panel)
    for i in range(CLASSES):
        for j in range(CLASSES):
            panel.select_cell(i, j)
            count = int(confusion[i, j])
            assert view.count() == count, (i, j)
            shown = panel.gallery_indices()
            np.testing.assert_array_equal(shown, ev.cell(i, j))
            assert np.all(np.diff(ev.losses[shown]) <= 0)  # hardest first
            for row in range(count):
                item = view.item(row)
                # The confidence first: a long class name cannot cut it off.
                confidence = f"{ev.confidences[shown[row]]:.0%}"
                assert item.text() == f"{confidence}\n{NAMES[i]} → {NAMES[j]}"
                assert item.toolTip().startswith(f"{NAMES[i]} → {NAMES[j]}\n")
                assert f"loss {ev.losses[shown[row]]:.3f}" in item.toolTip()
            if count:
                assert gallery_text(panel).startswith(f"{count} image")
                assert f"true {NAMES[i]}, predicted {NAMES[j]}" in gallery_text(panel)
            else:
                assert gallery_text(panel).startswith("no images")


def test_thumbnails_are_the_cell_images_at_2x_crisp(panel):
    ev = make_evaluation()
    images = make_images()
    panel.add_evaluation(ev, images)
    confusion = ev.confusion()
    i, j = np.argwhere(confusion == confusion.max())[0]
    panel.select_cell(int(i), int(j))
    view = gallery(panel)
    assert view.iconSize().width() == 56
    for row in range(view.count()):
        index = int(panel.gallery_indices()[row])
        image = view.item(row).icon().pixmap(56, 56).toImage()
        assert image.width() == 56
        # Nearest-neighbour 2x: source pixel (0, 0) fills the 2x2 block unblended.
        for x, y in [(0, 0), (1, 0), (0, 1), (1, 1)]:
            assert image.pixelColor(x, y).red() == index % 256


def test_mouse_click_on_a_cell_selects_it(panel, qtbot):
    ev = make_evaluation()
    panel.add_evaluation(ev, make_images())
    widget = matrix_widget(panel)
    confusion = ev.confusion()
    for true, predicted in [(3, 5), (0, 0), (9, 2), (7, 7)]:
        with qtbot.waitSignal(widget.cell_clicked) as blocker:
            click_cell(panel, true, predicted)
        assert blocker.args == [true, predicted]
        assert panel.selected_cell() == (true, predicted)
        assert widget.selected() == (true, predicted)
        assert gallery(panel).count() == confusion[true, predicted]
    # Outside the grid (the name column): nothing happens.
    with qtbot.assertNotEmitted(widget.cell_clicked):
        QTest.mouseClick(widget, Qt.MouseButton.LeftButton, pos=QPoint(2, 2))
    assert panel.selected_cell() == (7, 7)


def test_keyboard_moves_the_cursor_and_enter_selects(panel, qtbot):
    panel.add_evaluation(make_evaluation(), make_images())
    widget = matrix_widget(panel)
    panel.select_cell(2, 2)
    widget.setFocus()
    QTest.keyClick(widget, Qt.Key.Key_Right)
    QTest.keyClick(widget, Qt.Key.Key_Right)
    QTest.keyClick(widget, Qt.Key.Key_Down)
    assert widget.cursor_cell() == (3, 4)
    assert panel.selected_cell() == (2, 2)
    QTest.keyClick(widget, Qt.Key.Key_Return)
    assert panel.selected_cell() == (3, 4)
    for _ in range(20):  # clamps at the edge
        QTest.keyClick(widget, Qt.Key.Key_Left)
    assert widget.cursor_cell() == (3, 0)


def test_tooltip_names_the_cell():
    widget = ConfusionMatrix()
    matrix = np.zeros((10, 10), dtype=np.int64)
    matrix[3, 3] = 988
    matrix[3, 5] = 12
    widget.set_matrix(matrix, [str(i) for i in range(10)])
    assert (
        widget.cell_tooltip(3, 5) == "true 3, predicted 5: 12 images (1.2% of the 3s)"
    )
    assert widget.cell_tooltip(3, 4) == "true 3, predicted 4: 0 images (0.0% of the 3s)"
    widget.deleteLater()


def test_colours_separate_right_from_wrong():
    right = cell_color(95, 100, diagonal=True)
    wrong = cell_color(5, 100, diagonal=False)
    assert right.green() > right.red()
    assert wrong.red() > wrong.green()
    # More errors: darker.
    assert cell_color(50, 100, False).lightness() < wrong.lightness()
    assert cell_color(0, 100, False) != wrong  # a zero is not an error colour


def test_epochs_and_slider_replay(panel):
    slider = panel.findChild(QSlider, "epochSlider")
    label = panel.findChild(QLabel, "epochLabel")
    evs = [make_evaluation(epoch) for epoch in range(4)]
    images = make_images()
    panel.add_evaluation(evs[0], images)
    assert not slider.isEnabled()  # a single epoch: nothing to replay
    for ev in evs[1:]:
        panel.add_evaluation(ev, images)
        assert panel.shown_epoch() == ev.epoch  # moves to the newest
        assert panel.shown_matrix().sum() == N
        assert slider.value() == slider.maximum() == ev.epoch
    assert slider.isEnabled()
    for ev in evs:
        slider.setValue(ev.epoch)
        assert panel.shown_epoch() == ev.epoch
        np.testing.assert_array_equal(panel.shown_matrix(), ev.confusion())
        np.testing.assert_array_equal(matrix_widget(panel)._matrix, ev.confusion())
        accuracy = np.trace(ev.confusion()) / N
        assert (
            label.text() == f"epoch {ev.epoch + 1} of 4 · val accuracy {accuracy:.1%}"
        )
    # The selected cell stays while replaying; the gallery follows the epoch.
    panel.select_cell(4, 1)
    for ev in evs:
        slider.setValue(ev.epoch)
        np.testing.assert_array_equal(panel.gallery_indices(), ev.cell(4, 1))
    # Replacing an epoch keeps one entry per epoch.
    again = make_evaluation(1)
    panel.add_evaluation(again, images)
    assert slider.maximum() == 3
    assert panel.shown_epoch() == 3


def test_history_then_the_last_epoch(panel):
    evs = [make_evaluation(epoch) for epoch in range(3)]
    images = make_images()
    panel.add_evaluation(make_evaluation(7), images)  # replaced by the history
    panel.set_history([ev.confusion() for ev in evs])
    slider = panel.findChild(QSlider, "epochSlider")
    assert slider.maximum() == 2
    assert panel.shown_epoch() == 2
    panel.select_cell(2, 6)
    count = evs[2].confusion()[2, 6]
    # History only: the matrix, no images.
    assert gallery(panel).count() == 0
    assert len(panel.gallery_indices()) == 0
    text = gallery_text(panel)
    assert text.startswith(f"{count} image")
    assert "per-image predictions of epoch 3 are not kept" in text
    assert "only the latest epochs of this session have them" in text
    # The run goes on: the last epoch arrives with its images.
    panel.add_evaluation(evs[2], images)
    assert slider.maximum() == 2
    assert gallery(panel).count() == count
    np.testing.assert_array_equal(panel.gallery_indices(), evs[2].cell(2, 6))
    slider.setValue(0)
    np.testing.assert_array_equal(panel.shown_matrix(), evs[0].confusion())
    assert gallery(panel).count() == 0
    assert "not kept" in gallery_text(panel)
    panel.add_evaluation(make_evaluation(3), images)
    assert panel.shown_epoch() == 3
    assert slider.maximum() == 3


def test_old_epochs_drop_their_images(panel):
    images = make_images()
    keep = EvaluationPanel.KEEP_SAMPLE_EPOCHS
    for epoch in range(keep + 2):
        panel.add_evaluation(make_evaluation(epoch), images)
    panel.select_cell(0, 0)
    assert gallery(panel).count() > 0
    panel.findChild(QSlider, "epochSlider").setValue(1)
    assert gallery(panel).count() == 0
    assert "not kept" in gallery_text(panel)
    panel.findChild(QSlider, "epochSlider").setValue(2)
    assert gallery(panel).count() > 0


def test_without_images_the_gallery_is_empty_and_says_so(panel):
    ev = make_evaluation()
    panel.add_evaluation(ev, None)
    panel.select_cell(1, 1)
    assert gallery(panel).count() == 0
    assert "not available" in gallery_text(panel)
    with pytest.raises(ValueError, match="images of shape"):
        panel.add_evaluation(ev, make_images(N - 1))


def test_big_cell_shows_the_500_hardest(panel):
    n = 1200
    ev = make_evaluation(n=n, error_rate=0.05)
    labels = np.full(n, 3, dtype=np.int64)
    labels[:40] = 5
    predictions = labels.copy()
    predictions[::97] = 8
    ev = Evaluation(
        0, 10, labels, predictions, ev.confidences, ev.losses, num_classes=10
    )
    panel.add_evaluation(ev, make_images(n))
    count = int(ev.confusion()[3, 3])
    assert count > 1000
    panel.select_cell(3, 3)
    assert gallery(panel).count() == 500
    np.testing.assert_array_equal(panel.gallery_indices(), ev.cell(3, 3)[:500])
    assert f"showing the 500 hardest of {count:,}" in gallery_text(panel)
    item = gallery(panel).item(499)
    assert int(item.data(Qt.ItemDataRole.UserRole)) == ev.cell(3, 3)[499]


def test_open_in_canvas_emits_the_selected_image(panel, qtbot):
    ev = make_evaluation()
    images = make_images()
    panel.add_evaluation(ev, images)
    button = panel.findChild(QPushButton, "openInCanvasButton")
    assert not button.isEnabled()  # no cell yet
    confusion = ev.confusion()
    true, predicted = np.argwhere((confusion >= 3) & ~np.eye(CLASSES, dtype=bool))[0]
    panel.select_cell(int(true), int(predicted))
    assert button.isEnabled()  # the hardest image is selected
    view = gallery(panel)
    view.setCurrentRow(2)
    index = int(panel.gallery_indices()[2])
    with qtbot.waitSignal(panel.open_in_canvas) as blocker:
        QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    scored = blocker.args[0]
    # The stored image as it was scored, with its true class and its score.
    assert scored.image.dtype == np.uint8
    assert scored.image.shape == (28, 28)
    assert decode(scored.image) == index == scored.index
    np.testing.assert_array_equal(scored.image, images[index])
    assert (scored.label, scored.predicted) == (true, predicted)
    assert scored.confidence == pytest.approx(float(ev.confidences[index]))
    assert scored.epoch == ev.epoch
    image = scored.pixels()
    assert image.dtype == np.float32
    np.testing.assert_allclose(image, images[index] / 255.0, rtol=1e-6)
    # A double-click on an item opens that one.
    item = view.item(1)
    with qtbot.waitSignal(panel.open_in_canvas) as blocker:
        view.itemDoubleClicked.emit(item)
    assert decode(blocker.args[0].image) == int(panel.gallery_indices()[1])


def cell_order(ev: Evaluation, true: int, predicted: int) -> np.ndarray:
    """Validation indices of a cell, highest loss first, from the raw arrays."""
    hits = [
        i
        for i in range(len(ev.labels))
        if ev.labels[i] == true and ev.predictions[i] == predicted
    ]
    return np.array(sorted(hits, key=lambda i: -float(ev.losses[i])), dtype=np.int64)


def test_open_in_canvas_emits_the_chosen_items_own_image(panel, qtbot):
    """Button and double-click emit images[cell index k] / 255, for any item k."""
    ev = make_evaluation()
    # Every image different all over (not just a marker pixel).
    images = np.random.default_rng(7).integers(0, 256, (N, 28, 28), dtype=np.uint8)
    panel.add_evaluation(ev, images)
    view = gallery(panel)
    button = panel.findChild(QPushButton, "openInCanvasButton")
    confusion = ev.confusion()
    off = np.argwhere((confusion >= 4) & ~np.eye(CLASSES, dtype=bool))
    cells = [tuple(int(v) for v in off[0]), tuple(int(v) for v in off[-1]), (6, 6)]
    checked = 0
    for true, predicted in cells:
        click_cell(panel, true, predicted)
        order = cell_order(ev, true, predicted)
        assert len(order) == view.count() >= 4
        for k in sorted({0, 1, len(order) // 2, len(order) - 1}):
            expected = images[order[k]].astype(np.float32) / 255.0
            view.setCurrentRow(k)
            with qtbot.waitSignal(panel.open_in_canvas, timeout=1000) as blocker:
                QTest.mouseClick(button, Qt.MouseButton.LeftButton)
            np.testing.assert_array_equal(blocker.args[0].pixels(), expected)
            # A real double-click on that item opens the same image.
            item = view.item(k)
            view.scrollToItem(item)
            center = view.visualItemRect(item).center()
            assert view.itemAt(center) is item
            with qtbot.waitSignal(panel.open_in_canvas, timeout=1000) as blocker:
                # Press, release, then the double-click (as a real one arrives).
                QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=center)
                QTest.mouseDClick(
                    view.viewport(), Qt.MouseButton.LeftButton, pos=center
                )
            np.testing.assert_array_equal(blocker.args[0].pixels(), expected)
            checked += 1
    assert checked >= 10


def test_one_bar_item_shows_per_class_accuracy(panel):
    plot = panel.findChild(QWidget, "perClassAccuracy")
    bars = panel.bar_item()
    assert bars in plot.getPlotItem().items
    images = make_images()
    ev = make_evaluation(0)
    # Class 9 absent: NaN accuracy, drawn as an empty bar.
    keep = ev.labels != 9
    ev = Evaluation(
        0,
        10,
        ev.labels[keep],
        ev.predictions[keep],
        ev.confidences[keep],
        ev.losses[keep],
        CLASSES,
    )
    for epoch_ev in [ev, make_evaluation(1)]:
        panel.add_evaluation(epoch_ev, images[: len(epoch_ev.labels)])
        assert panel.bar_item() is bars
        assert [i for i in plot.getPlotItem().items if type(i) is type(bars)] == [bars]
        expected = np.nan_to_num(epoch_ev.per_class_accuracy() * 100, nan=0.0)
        np.testing.assert_allclose(bars.opts["height"], expected)
        np.testing.assert_array_equal(bars.opts["x"], np.arange(CLASSES))
    panel.findChild(QSlider, "epochSlider").setValue(0)
    assert bars.opts["height"][9] == 0
    assert np.isnan(ev.per_class_accuracy()[9])


def test_clear_and_class_names(panel):
    panel.add_evaluation(make_evaluation(0), make_images())
    panel.add_evaluation(make_evaluation(1), make_images())
    panel.select_cell(1, 4)
    assert gallery(panel).count() > 0
    panel.set_class_names(NAMES)
    assert gallery(panel).item(0).text().endswith("\none → four")
    panel.set_class_names(["a", "b"])  # too few: the rest show their index
    assert gallery(panel).item(0).text().endswith("\nb → 4")
    panel.clear()
    assert panel.shown_epoch() is None
    assert panel.selected_cell() is None
    assert gallery(panel).count() == 0
    assert len(panel.bar_item().opts["height"]) == 0
    assert not panel.findChild(QSlider, "epochSlider").isEnabled()


def expected_cell_colours(matrix: np.ndarray) -> dict[tuple[int, int], tuple]:
    """Fill of cell (row = true t, column = predicted p), from the matrix alone."""
    n = matrix.shape[0]
    return {
        (t, p): cell_color(int(matrix[t, p]), int(matrix[t].sum()), t == p).getRgb()
        for t in range(n)
        for p in range(n)
    }


def assert_cells_painted(
    image, widget: ConfusionMatrix, matrix: np.ndarray, origin: QPoint
) -> None:
    """Every cell of ``widget`` is painted in its own colour in ``image``.

    ``origin`` is where the widget's (0, 0) lies in ``image``. Two points near
    opposite corners inside each cell: away from the centred count, from the
    selection outline (3 px) and from the 1 px grid gap.
    """
    n = matrix.shape[0]
    # Rows go down, columns go right (row = true class, column = predicted).
    assert widget.cell_rect(1, 0).top() > widget.cell_rect(0, 0).top()
    assert widget.cell_rect(1, 0).left() == widget.cell_rect(0, 0).left()
    assert widget.cell_rect(0, 1).left() > widget.cell_rect(0, 0).left()
    assert widget.cell_rect(0, 1).top() == widget.cell_rect(0, 0).top()
    expected = expected_cell_colours(matrix)
    wrong = []
    for t in range(n):
        for p in range(n):
            rect = widget.cell_rect(t, p)
            assert rect.width() >= 14, "cells too small to sample"
            for x, y in [
                (rect.left() + 4, rect.top() + 4),
                (rect.right() - 5, rect.bottom() - 5),
            ]:
                got = image.pixelColor(origin.x() + x, origin.y() + y).getRgb()
                if got != expected[(t, p)]:
                    wrong.append(((t, p), (x, y), got, expected[(t, p)]))
    assert not wrong, f"{len(wrong)} cell samples in the wrong colour: {wrong[:5]}"


def asymmetric_matrix() -> np.ndarray:
    """Counts whose transpose paints most cells differently (and an absent class)."""
    matrix = np.array(
        [
            [50, 3, 0, 7, 1, 0],
            [1, 20, 9, 0, 0, 4],
            [0, 0, 0, 0, 0, 0],  # class 2 absent from the validation split
            [12, 0, 2, 5, 0, 0],
            [0, 6, 0, 1, 33, 2],
            [4, 0, 15, 0, 0, 8],
        ],
        dtype=np.int64,
    )
    colours = expected_cell_colours(matrix)
    flipped = expected_cell_colours(matrix.T.copy())
    assert sum(colours[c] != flipped[c] for c in colours) >= 20
    return matrix


def test_cells_are_painted_where_their_counts_belong(qtbot):
    """Cell (true t, predicted p) is painted at row t, column p in its colour."""
    widget = ConfusionMatrix()
    qtbot.addWidget(widget)
    widget.resize(440, 440)
    widget.show()
    qtbot.waitExposed(widget)
    matrix = asymmetric_matrix()
    widget.set_matrix(matrix, [f"c{i}" for i in range(matrix.shape[0])])
    image = widget.grab().toImage()
    assert image.width() == widget.width()  # device pixel ratio 1: pixels = points
    assert_cells_painted(image, widget, matrix, QPoint(0, 0))
    # The 1 px gap between cells shows the background, not a cell colour.
    rect = widget.cell_rect(0, 0)
    gap = image.pixelColor(rect.right(), rect.center().y()).getRgb()
    assert gap != expected_cell_colours(matrix)[(0, 0)]
    # Another matrix replaces the colours (nothing stale).
    widget.set_matrix(matrix.T.copy(), [f"c{i}" for i in range(matrix.shape[0])])
    assert_cells_painted(widget.grab().toImage(), widget, matrix.T.copy(), QPoint())


def test_renders(panel, tmp_path):
    """The panel's picture: every cell in its colour, the selection outlined."""
    panel.set_class_names([str(i) for i in range(CLASSES)])
    panel.add_evaluation(make_evaluation(0), make_images())
    last = make_evaluation(1)
    panel.add_evaluation(last, make_images())
    panel.select_cell(3, 5)
    widget = matrix_widget(panel)
    widget.setFocus()
    pixmap = panel.grab()
    assert not pixmap.isNull()
    assert pixmap.save(str(tmp_path / "evaluation_panel.png"))
    image = pixmap.toImage()
    origin = widget.mapTo(panel, QPoint(0, 0))
    matrix = last.confusion()
    assert_cells_painted(image, widget, matrix, origin)
    # The selected cell (3, 5), and only it, has the blue outline on all sides.
    selected = (25, 95, 210, 255)

    def at(x: int, y: int) -> tuple:
        return image.pixelColor(origin.x() + x, origin.y() + y).getRgb()

    for t in range(CLASSES):
        for p in range(CLASSES):
            rect = widget.cell_rect(t, p)
            c = rect.center()
            sides = [
                at(rect.left() + 1, c.y()),
                at(rect.right() - 2, c.y()),
                at(c.x(), rect.top() + 1),
                at(c.x(), rect.bottom() - 2),
            ]
            if (t, p) == (3, 5):
                assert sides == [selected] * 4
            else:
                assert selected not in sides, (t, p)
    # The per-class accuracy bars are painted in their colour.
    plot = panel.findChild(QWidget, "perClassAccuracy")
    corner = plot.mapTo(panel, QPoint(0, 0))
    bar = ClassAccuracyChart.BAR_COLOR.getRgb()
    bar_pixels = sum(
        image.pixelColor(corner.x() + x, corner.y() + y).getRgb() == bar
        for x in range(0, plot.width(), 2)
        for y in range(0, plot.height(), 2)
    )
    assert bar_pixels > 100


def test_long_class_names_stand_up_and_cells_still_click(panel, qtbot):
    names = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat"]
    names += ["Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
    panel.set_class_names(names)
    panel.add_evaluation(make_evaluation(), make_images())
    widget = matrix_widget(panel)
    assert widget._grid().rotated
    with qtbot.waitSignal(widget.cell_clicked):
        click_cell(panel, 6, 9)
    assert panel.selected_cell() == (6, 9)
    assert gallery_text(panel).startswith(f"{ev_count(panel, 6, 9)} image")
    assert "true Shirt, predicted Ankle boot" in gallery_text(panel)


def ev_count(panel: EvaluationPanel, true: int, predicted: int) -> int:
    return int(panel.shown_matrix()[true, predicted])
