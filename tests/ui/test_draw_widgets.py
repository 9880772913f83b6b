"""The "Draw a digit" widgets: canvas drawing, undo, bars and input preview."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import (
    QHelpEvent,
    QImage,
    QKeySequence,
    QPointingDevice,
    QTabletEvent,
    qGray,
)
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolTip

from workbench.ui.widgets.draw_widgets import (
    CANVAS_SIDE,
    DigitCanvas,
    InputPreview,
    ProbabilityBars,
)

pytestmark = pytest.mark.gui


@pytest.fixture
def canvas(qtbot: Any) -> DigitCanvas:
    widget = DigitCanvas()
    qtbot.addWidget(widget)
    widget.resize(CANVAS_SIDE, CANVAS_SIDE)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def drag(widget: DigitCanvas, points: list[tuple[int, int]]) -> None:
    """A real left-button drag through widget points (QTest moves carry buttons)."""
    QTest.mousePress(widget, Qt.LeftButton, Qt.NoModifier, QPoint(*points[0]))
    for x, y in points[1:]:
        QTest.mouseMove(widget, QPoint(x, y))
    QTest.mouseRelease(widget, Qt.LeftButton, Qt.NoModifier, QPoint(*points[-1]))


def test_stroke_inks_its_path_and_emits(qtbot: Any, canvas: DigitCanvas) -> None:
    assert canvas.is_empty()
    with (
        qtbot.waitSignal(canvas.stroke_finished, timeout=1000),
        qtbot.waitSignal(canvas.changed, timeout=1000),
    ):
        drag(canvas, [(60, 140), (100, 140), (140, 140), (220, 140)])
    image = canvas.image()
    assert (image[140, 60:221] > 0.5).all()
    assert (image[135:146, 100] > 0.5).all()
    for y, x in [(0, 0), (0, -1), (-1, 0), (-1, -1), (40, 140), (240, 140)]:
        assert image[y, x] == 0
    assert canvas.stroke_count() == 1
    assert not canvas.is_empty()


def test_click_without_movement_leaves_a_round_dot(
    qtbot: Any, canvas: DigitCanvas
) -> None:
    with qtbot.waitSignal(canvas.stroke_finished, timeout=1000):
        QTest.mouseClick(canvas, Qt.LeftButton, Qt.NoModifier, QPoint(100, 80))
    image = canvas.image()
    radius = canvas.pen_width / 2
    assert image[80, 100] == 1.0
    assert image[80, int(100 + radius - 2)] > 0.5
    assert image[int(80 + radius - 2), 100] > 0.5
    # Round, not square: the bounding box corner stays dark.
    assert image[int(80 + radius - 2), int(100 + radius - 2)] == 0
    assert canvas.stroke_count() == 1


def test_undo_restores_exactly_the_earlier_strokes(
    qtbot: Any, canvas: DigitCanvas
) -> None:
    drag(canvas, [(50, 50), (120, 90), (200, 60)])
    after_first = canvas.stroke_image()
    drag(canvas, [(60, 220), (140, 120), (230, 230)])
    assert not np.array_equal(canvas.stroke_image(), after_first)
    with qtbot.waitSignal(canvas.changed, timeout=1000):
        assert canvas.undo()
    assert np.array_equal(canvas.stroke_image(), after_first)
    assert canvas.undo()
    assert not canvas.stroke_image().any()
    assert canvas.is_empty()
    with qtbot.assertNotEmitted(canvas.changed):
        assert not canvas.undo()


def test_escape_clears_and_undo_key_undoes(qtbot: Any, canvas: DigitCanvas) -> None:
    canvas.setFocus()
    qtbot.waitUntil(canvas.hasFocus, timeout=1000)
    drag(canvas, [(50, 50), (200, 200)])
    drag(canvas, [(50, 200), (200, 50)])
    undo_key = QKeySequence(QKeySequence.Undo)[0]
    with qtbot.waitSignal(canvas.changed, timeout=1000):
        QTest.keyClick(canvas, undo_key.key(), undo_key.keyboardModifiers())
    assert canvas.stroke_count() == 1
    with qtbot.waitSignal(canvas.changed, timeout=1000):
        QTest.keyClick(canvas, Qt.Key_Escape)
    assert canvas.stroke_count() == 0
    assert canvas.is_empty()


def tablet_stroke(widget: DigitCanvas, y: float, pressure: float) -> bool:
    """Press, move and release a tablet pen; True if every event was accepted."""
    device = QPointingDevice.primaryPointingDevice()
    accepted = True
    for kind, x in [
        (QEvent.TabletPress, 40.0),
        (QEvent.TabletMove, 120.0),
        (QEvent.TabletRelease, 120.0),
    ]:
        held = Qt.NoButton if kind == QEvent.TabletRelease else Qt.LeftButton
        pos = QPointF(x, y)
        event = QTabletEvent(
            kind, device, pos, pos, pressure, 0, 0, 0, 0, 0,
            Qt.NoModifier, Qt.LeftButton, held,
        )  # fmt: skip
        QApplication.sendEvent(widget, event)
        accepted = accepted and event.isAccepted()
    return accepted


def test_tablet_pressure_modulates_width(qtbot: Any, canvas: DigitCanvas) -> None:
    with qtbot.waitSignal(canvas.stroke_finished, timeout=1000):
        assert tablet_stroke(canvas, 60, pressure=0.2)
    assert tablet_stroke(canvas, 200, pressure=0.0)  # no pressure data = full
    column = canvas.image()[:, 80] > 0.5
    light, full = column[:130].sum(), column[130:].sum()
    assert canvas.stroke_count() == 2
    assert light == pytest.approx(0.64 * canvas.pen_width, abs=1.5)
    assert full == pytest.approx(1.2 * canvas.pen_width, abs=1.5)


def test_widget_to_image_mapping_when_larger(qtbot: Any, canvas: DigitCanvas) -> None:
    canvas.resize(560, 560)
    qtbot.waitUntil(lambda: canvas.width() == 560, timeout=1000)
    QTest.mouseClick(canvas, Qt.LeftButton, Qt.NoModifier, QPoint(280, 280))
    ys, xs = np.nonzero(canvas.image() > 0.5)
    assert abs(ys.mean() - 140) < 1
    assert abs(xs.mean() - 140) < 1
    # A wide widget centres the square: x offset 100 on a 760x560 widget.
    canvas.clear()
    canvas.resize(760, 560)
    qtbot.waitUntil(lambda: canvas.width() == 760, timeout=1000)
    QTest.mouseClick(canvas, Qt.LeftButton, Qt.NoModifier, QPoint(100 + 80, 400))
    ys, xs = np.nonzero(canvas.image() > 0.5)
    assert abs(ys.mean() - 200) < 1
    assert abs(xs.mean() - 40) < 1


def test_image_arrays_are_typed_copies(canvas: DigitCanvas) -> None:
    drag(canvas, [(40, 40), (240, 240)])
    image, strokes = canvas.image(), canvas.stroke_image()
    assert image.dtype == np.float32
    assert image.shape == (CANVAS_SIDE, CANVAS_SIDE)
    assert strokes.dtype == np.uint8
    assert strokes.shape == (CANVAS_SIDE, CANVAS_SIDE)
    assert 0 <= image.min()
    assert image.max() <= 1
    assert image.max() == 1
    image[:] = 0.5
    strokes[:] = 7
    assert canvas.image()[0, -1] == 0
    assert canvas.stroke_image()[0, -1] == 0


def test_set_image_fills_canvas_and_undoes_to_blank(
    qtbot: Any, canvas: DigitCanvas
) -> None:
    digit = np.zeros((28, 28), dtype=np.float32)
    digit[4:24, 12:16] = 1.0
    with qtbot.waitSignal(canvas.changed, timeout=1000):
        canvas.set_image(digit)
    image = canvas.image()
    assert canvas.stroke_count() == 1
    assert not canvas.is_empty()
    assert image[140, 140] == 1.0  # inside the bar, scaled 10x
    assert image[140, 40] == 0
    assert image[20, 140] == 0
    # Downscaled back it is the same picture.
    small = image.reshape(28, 10, 28, 10).mean(axis=(1, 3))
    assert np.abs(small - digit).max() < 0.3  # bilinear edges
    assert canvas.undo()
    assert canvas.is_empty()
    assert not canvas.stroke_image().any()


def test_probability_bars_show_values_and_names(qtbot: Any) -> None:
    bars = ProbabilityBars()
    qtbot.addWidget(bars)
    bars.resize(400, 220)
    assert bars.objectName() == "probabilityPlot"
    names = ["zero", "one", "two", "three"]
    bars.set_class_names(names)
    assert bars.class_names() == names
    assert np.array_equal(bars.probabilities(), np.zeros(4))
    assert bars.top_class() is None
    probs = [0.1, 0.6, 0.2, 0.1]
    bars.set_probabilities([0.25, 0.25, 0.4, 0.1])
    bars.set_probabilities(probs)
    assert np.allclose(bars.probabilities(), probs)
    assert bars.top_class() == 1
    # Painted: the top bar in its colour, the others in theirs, as tall as
    # their values (a bar of 0.6 reaches 0.6 of the way to the 1 line).
    image = bars.grab().toImage()
    full, top = bars.bar_rect(1), bars.bar_rect(1, 0.6)
    assert abs(top.height() / full.height() - 0.6) < 1e-6
    # A certain answer's value still fits above its bar, inside the widget.
    assert full.top() >= bars.fontMetrics().height()
    inside = top.center().toPoint()
    assert image.pixelColor(inside) == ProbabilityBars.TOP_COLOR
    other = bars.bar_rect(2, 0.2).center().toPoint()
    assert image.pixelColor(other) == ProbabilityBars.BAR_COLOR
    above = QPoint(other.x(), int(bars.bar_rect(2, 0.2).top()) - 3)
    assert image.pixelColor(above) != ProbabilityBars.BAR_COLOR
    bars.clear_probabilities()
    assert not bars.probabilities().any()
    assert bars.grab().toImage().pixelColor(inside) != ProbabilityBars.TOP_COLOR
    with pytest.raises(ValueError, match="expected 4"):
        bars.set_probabilities([0.5, 0.5])


def test_probability_bars_fit_their_widget_and_name_each_bar(qtbot: Any) -> None:
    bars = ProbabilityBars()
    qtbot.addWidget(bars)
    bars.resize(300, 160)
    bars.set_class_names([f"class {i}" for i in range(10)])
    rects = [bars.bar_rect(i) for i in range(10)]
    for left, right in itertools.pairwise(rects):
        assert left.right() < right.left()  # side by side, apart
    for rect in rects:
        assert QRectF(bars.rect()).contains(rect)
    # Hovering a bar names its class and value.
    bars.set_probabilities([0.0] * 3 + [0.625] + [0.0] * 6)
    bars.show()
    qtbot.waitExposed(bars)
    point = rects[3].center().toPoint()
    help_event = QHelpEvent(QEvent.ToolTip, point, bars.mapToGlobal(point))
    QApplication.sendEvent(bars, help_event)
    assert QToolTip.text() == "class 3: 62.5%"


def sample_digit() -> np.ndarray:
    image = np.zeros((28, 28), dtype=np.float32)
    image[5:23, 13] = 1.0
    image[5, 10:18] = 0.6
    return image


def test_input_preview_shows_image_and_saliency(qtbot: Any) -> None:
    preview = InputPreview()
    qtbot.addWidget(preview)
    preview.resize(280, 280)  # 10 px per cell
    preview.show()
    qtbot.waitExposed(preview)
    image = sample_digit()
    saliency = np.zeros((28, 28), dtype=np.float32)
    saliency[10:18, 8:20] = 1.0
    preview.set_image(image, saliency)
    assert np.array_equal(preview.shown_image(), image)
    assert np.array_equal(preview.shown_saliency(), saliency)
    with_overlay = preview.grab().toImage()
    preview.set_show_saliency(False)
    without = preview.grab().toImage()
    assert with_overlay != without
    # Centre of the white cell (row 8, col 13) of a 280 px square at (0, 0).
    scale = without.width() / preview.width()  # device pixel ratio
    centre = QPoint(int((13 * 10 + 5) * scale), int((8 * 10 + 5) * scale))
    assert without.pixelColor(centre).name() == "#ffffff"
    assert without.pixelColor(centre + QPoint(int(30 * scale), 0)).name() == "#000000"
    preview.clear()
    assert preview.shown_image() is None
    assert preview.shown_saliency() is None


def test_input_preview_rejects_mismatched_saliency(qtbot: Any) -> None:
    preview = InputPreview()
    qtbot.addWidget(preview)
    with pytest.raises(ValueError, match="saliency shape"):
        preview.set_image(sample_digit(), np.zeros((14, 14)))


def test_a_fast_stroke_is_one_unbroken_line(qtbot: Any, canvas: DigitCanvas) -> None:
    """Moves far apart (a fast hand) still ink every pixel between them.

    The moves go through the window, as a real mouse's do (Qt may merge them);
    every move that arrives is a point joined to the one before by a segment.
    """
    window = canvas.windowHandle()
    path = [(20, 20), (260, 30), (30, 250), (250, 250), (140, 20)]
    QTest.mousePress(window, Qt.LeftButton, Qt.NoModifier, QPoint(*path[0]))
    for x, y in path[1:]:
        QTest.mouseMove(window, QPoint(x, y))
    QTest.mouseRelease(window, Qt.LeftButton, Qt.NoModifier, QPoint(*path[-1]))
    assert canvas.stroke_count() == 1
    image = canvas.image()
    for (x0, y0), (x1, y1) in itertools.pairwise(path):
        for t in np.linspace(0.0, 1.0, 400):
            x, y = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
            assert image[round(y), round(x)] > 0.9, (x, y)
    # What the widget paints is that image.
    shown = canvas.grab().toImage().convertToFormat(QImage.Format.Format_Grayscale8)
    for (x0, y0), (x1, y1) in itertools.pairwise(path):
        for t in np.linspace(0.0, 1.0, 100):
            x, y = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
            assert qGray(shown.pixel(round(x), round(y))) > 200, (x, y)


class PaintRects(QObject):
    """Records the rect of every paint event a widget gets."""

    def __init__(self, widget: DigitCanvas) -> None:
        super().__init__()
        self.rects: list[QRect] = []
        widget.installEventFilter(self)

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.rects.append(QRect(event.rect()))
        return False


def test_pen_up_repaints_no_more_than_the_last_segment(
    qtbot: Any, canvas: DigitCanvas
) -> None:
    points = [(60, 140), (100, 150), (140, 160)]
    QTest.mousePress(canvas, Qt.LeftButton, Qt.NoModifier, QPoint(*points[0]))
    for x, y in points[1:]:
        QTest.mouseMove(canvas, QPoint(x, y))
    QApplication.processEvents()
    paints = PaintRects(canvas)
    with qtbot.waitSignal(canvas.stroke_finished, timeout=1000):
        QTest.mouseRelease(canvas, Qt.LeftButton, Qt.NoModifier, QPoint(180, 160))
    for _ in range(3):
        QApplication.processEvents()
    # The new segment's neighbourhood was painted, never the whole canvas.
    assert paints.rects
    assert all(rect.contains(QPoint(180, 160)) for rect in paints.rects)
    assert all(rect != canvas.rect() for rect in paints.rects)
    assert all(rect.width() < 100 and rect.height() < 100 for rect in paints.rects)
    # What is on screen is the whole stroke, without the hint.
    shown = canvas.grab().toImage()
    assert all(qGray(shown.pixel(x, y)) > 200 for x, y in [*points, (180, 160)])
    assert not canvas.is_empty()


@pytest.mark.parametrize("colour", [False, True])
def test_input_preview_paints_from_ready_images_the_same_pixels(
    qtbot: Any, colour: bool
) -> None:
    from workbench.ui.widgets.input_preview import _heat_qimage, array_qimage

    preview = InputPreview()
    qtbot.addWidget(preview)
    preview.resize(200, 200)
    preview.show()
    qtbot.waitExposed(preview)
    rng = np.random.default_rng(7)
    image = rng.random((3, 28, 28) if colour else (28, 28)).astype(np.float32)
    saliency = rng.random((28, 28)).astype(np.float32)
    preview.set_image(image, saliency)
    # Converted once, to what QPainter blends in: no conversion on each paint.
    assert preview._image.format() == QImage.Format.Format_RGB32
    assert preview._overlay.format() == QImage.Format.Format_ARGB32_Premultiplied
    ready = preview.grab().toImage()
    # The same picture as painting the plain gray/RGB and RGBA images gave.
    preview._image = array_qimage(image)
    preview._overlay = _heat_qimage(saliency, InputPreview.MAX_SALIENCY_ALPHA)
    assert preview.grab().toImage() == ready
