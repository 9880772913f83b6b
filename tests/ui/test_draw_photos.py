"""Try any image: photo models read an image file; colour validation images.

A tiny image-folder run (three classes named by their folders) is trained in
the window; the Draw tab then reads image files opened with the dialog, with
Ctrl+I or dropped on the tab, exactly as the run's loaders would feed them.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog

from tests.image_folders import make_folder, shape_image
from workbench.core.config import TrainConfig
from workbench.core.events import Evaluation
from workbench.core.predict import photo_input
from workbench.ui.panels.evaluation import EvaluationPanel
from workbench.ui.widgets.cell_images import THUMB_SIDE

from .helpers import run_to_end

pytestmark = pytest.mark.gui

CLASSES = ["cat", "dog", "zebra crossing"]
SIZE = 16


def train_folder_run(qtbot, window, root):
    make_folder(root, CLASSES, per_class=8, size=24)
    cfg = TrainConfig(
        dataset="folder",
        data_dir=str(root),
        image_size=SIZE,
        model="small-cnn",
        batch_size=8,
        epochs=1,
        log_every=1,
    )
    window.apply_config(cfg)
    qtbot.waitUntil(lambda: not window.data_panel.is_busy(), timeout=30_000)
    run_to_end(qtbot, window)
    run = window.current_run
    assert run is not None
    assert run.config.dataset == "folder"
    return run


def show_draw_tab(window):
    window.tabs.setCurrentWidget(window.draw_page)
    return window.draw_panel


def photo(path, seed, size=(40, 30)):
    """An RGB file, larger than the run's size and not square (a real crop)."""
    rng = np.random.default_rng(seed)
    shape_image(seed % 3, rng, max(size), "RGB").resize(size).save(path)
    return path


def denormalised(x: torch.Tensor, info) -> np.ndarray:
    """The model's input back on the 0..1 scale, by hand, channel by channel."""
    planes = [
        x[0, c].numpy() * np.float32(info.std[c]) + np.float32(info.mean[c])
        for c in range(x.shape[1])
    ]
    return np.clip(np.stack(planes), 0, 1)


def check_reading_is_the_runs(panel, run, path):
    """The reading is the run's model on photo_input, shown as the tensor it got."""
    info = run.loaders.info
    reading = panel.reading
    assert reading is not None
    expected = photo_input(path, info)
    assert torch.equal(reading.input, expected)
    assert torch.equal(panel.preview_tensor, expected)
    run.model.eval()
    with torch.no_grad():
        probs = torch.softmax(run.model(expected).float(), 1)[0].double().numpy()
    np.testing.assert_allclose(reading.probabilities, probs, rtol=1e-5, atol=1e-7)
    shown = panel.preview.shown_image()
    assert shown.shape == (3, SIZE, SIZE)  # in colour, at the run's size
    np.testing.assert_allclose(shown, denormalised(expected, info), atol=1e-6)
    name = CLASSES[int(np.argmax(probs))]
    assert panel.prediction_label.text().startswith(name)


def drop(panel, path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    where = QPointF(panel.rect().center())
    enter = QDragEnterEvent(
        where.toPoint(), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier
    )
    QApplication.sendEvent(panel, enter)
    assert enter.isAccepted()
    event = QDropEvent(where, Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(panel, event)
    assert event.isAccepted()


def test_a_folder_run_reads_opened_and_dropped_files_with_its_class_names(
    qtbot, window, tmp_path, monkeypatch
):
    run = train_folder_run(qtbot, window, tmp_path / "pets")
    assert run.loaders.info.class_names == tuple(CLASSES)
    panel = show_draw_tab(window)
    assert panel.photo_mode
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Try an image"
    assert not panel.canvas.isVisibleTo(window)
    assert panel.photo.isVisibleTo(window)
    assert panel.bars.class_names() == CLASSES
    assert "Drop an image file" in panel.photo.hint()

    first = photo(tmp_path / "first.png", seed=1)
    asked = []

    def answer(*args, **kwargs):
        asked.append(args)
        return [str(first)], "Images"

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", answer)
    panel.open_image_button.click()
    assert len(asked) == 1
    check_reading_is_the_runs(panel, run, first)
    assert panel.photo.picture().size().toTuple() == (40, 30)  # the file, whole
    assert "16x16 colour" in panel.preview_caption.text()

    # Ctrl+I anywhere in the window while the tab is shown opens the dialog too.
    second = photo(tmp_path / "second.jpg", seed=2)
    asked.clear()
    monkeypatch.setattr(
        QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(second)], "")
    )
    QTest.keyClick(window, Qt.Key_I, Qt.ControlModifier)
    check_reading_is_the_runs(panel, run, second)

    third = photo(tmp_path / "third.png", seed=3, size=(30, 50))
    drop(panel, third)
    check_reading_is_the_runs(panel, run, third)
    # A drop on a child widget (the bars) reaches the tab as well.
    drop(panel.preview, first)
    check_reading_is_the_runs(panel, run, first)


def test_files_that_are_no_image_give_a_message_in_the_tab(
    qtbot, window, tmp_path, monkeypatch
):
    run = train_folder_run(qtbot, window, tmp_path / "pets")
    panel = show_draw_tab(window)
    good = photo(tmp_path / "good.png", seed=4)
    assert panel.open_image_file(good)
    before = panel.reading
    whole = good.read_bytes()
    bad = {
        "empty.png": b"",
        "notes.png": b"a shopping list, not a picture",
        "cut.png": whole[: len(whole) // 2],
    }
    messages = {}
    for name, data in bad.items():
        (tmp_path / name).write_bytes(data)
        drop(panel, tmp_path / name)
        message = messages[name] = panel.file_message.text()
        assert panel.file_message.isVisibleTo(window)
        assert message.startswith(f"Could not read {name}:"), message
        assert message.count(name) == 1, message  # said once, no long path
        assert panel.reading is before  # what was shown stays
    assert "(0 bytes)" in messages["empty.png"]
    # Pillow's own text names its in-memory buffer (<_io.BytesIO object at 0x...>).
    assert (
        "not a readable image (not an image format Pillow knows)"
        in (messages["notes.png"])
    )
    assert "BytesIO" not in messages["notes.png"]
    assert "truncated" in messages["cut.png"]
    assert panel.open_image_file(good)  # a good file clears the message
    assert not panel.file_message.isVisibleTo(window)
    check_reading_is_the_runs(panel, run, good)


def test_a_digit_run_keeps_the_canvas_and_reads_a_file_through_it(
    qtbot, window, tmp_path
):
    run_to_end(qtbot, window)
    panel = show_draw_tab(window)
    assert not panel.photo_mode
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Draw a digit"
    assert panel.canvas.isVisibleTo(window)
    assert not panel.photo.isVisibleTo(window)
    assert panel.mine.isVisibleTo(window)
    seven = np.full((60, 40), 250, np.uint8)  # dark ink on light paper
    seven[8:14, 6:34] = 10
    seven[14:54, 26:32] = 10
    Image.fromarray(seven).save(tmp_path / "seven.png")
    drop(panel, tmp_path / "seven.png")
    assert not panel.canvas.is_empty()  # on the canvas, to draw on
    reading = panel.reading
    assert reading.input.shape == (1, 1, 28, 28)
    assert reading.field.max() > 0.9  # the ink, white on black after inverting
    (tmp_path / "blank.png").write_bytes(b"")
    assert not panel.open_image_file(tmp_path / "blank.png")
    assert panel.file_message.text().startswith("Could not read blank.png")
    assert panel.reading is reading


def test_the_gallery_and_draw_tab_show_a_colour_runs_validation_images(
    qtbot, window, tmp_path
):
    run = train_folder_run(qtbot, window, tmp_path / "pets")
    stored = run.loaders.val_images.numpy()
    assert stored.shape[1:] == (3, SIZE, SIZE)
    evaluation = window.evaluation_panel
    window.tabs.setCurrentIndex(window.tabs.indexOf(evaluation.parentWidget()))
    matrix = evaluation.shown_matrix()
    true, predicted = np.argwhere(matrix > 0)[0]
    evaluation.select_cell(int(true), int(predicted))
    item = evaluation.gallery.item(0)
    assert item.text().endswith(f"\n{CLASSES[true]} → {CLASSES[predicted]}")
    index = int(evaluation.gallery_indices()[0])
    check_thumbnail(item.icon().pixmap(THUMB_SIDE, THUMB_SIDE).toImage(), stored[index])
    assert CLASSES[true] in evaluation.cell_images.caption.text()

    evaluation.open_button.click()
    panel = window.draw_panel
    assert window.tabs.currentWidget() is window.draw_page
    reading = panel.reading
    stored_input = run.loaders.info.normalise(
        torch.from_numpy(stored[index]).float().div(255)
    )[None]
    assert torch.equal(reading.input, stored_input)
    assert panel.opened_label.isVisibleTo(window)
    assert f"true class {CLASSES[true]}" in panel.opened_label.text()
    np.testing.assert_allclose(
        panel.preview.shown_image(),
        denormalised(stored_input, run.loaders.info),
        atol=1e-6,
    )


def check_thumbnail(image, stored: np.ndarray) -> None:
    """Each stored pixel's centre, in the scaled thumbnail, has its RGB colour."""
    side = stored.shape[-1]
    scale = image.width() / side
    assert image.width() == THUMB_SIDE
    for row, col in [(0, 0), (side // 2, side // 3), (side - 1, side - 1), (3, 9)]:
        x, y = int((col + 0.5) * scale), int((row + 0.5) * scale)
        colour = image.pixelColor(x, y)
        got = (colour.red(), colour.green(), colour.blue())
        assert got == tuple(int(v) for v in stored[:, row, col]), (row, col)


def test_the_gallery_paints_red_green_and_blue_planes_in_their_colours(qtbot):
    panel = EvaluationPanel()
    qtbot.addWidget(panel)
    n = 4
    images = np.zeros((n, 3, 20, 20), np.uint8)
    images[0, 0] = 200  # red
    images[1, 1] = 200  # green
    images[2, 2] = 200  # blue
    images[3] = np.random.default_rng(0).integers(0, 256, (3, 20, 20))
    labels = np.zeros(n, np.int64)
    ev = Evaluation(
        epoch=0,
        global_step=1,
        num_classes=2,
        labels=labels,
        predictions=labels.copy(),
        confidences=np.linspace(0.9, 0.6, n).astype(np.float32),
        losses=np.linspace(1.0, 0.1, n).astype(np.float32),
    )
    panel.set_class_names(["zebra crossing", "cat"])
    panel.add_evaluation(ev, images)
    panel.select_cell(0, 0)
    shown = {}
    for row in range(panel.gallery.count()):
        item = panel.gallery.item(row)
        assert item.text().endswith("\nzebra crossing → zebra crossing")
        index = int(panel.gallery_indices()[row])
        picture = item.icon().pixmap(THUMB_SIDE, THUMB_SIDE).toImage()
        check_thumbnail(picture, images[index])
        shown[index] = picture.pixelColor(QPoint(28, 28)).getRgb()[:3]
    assert shown[0] == (200, 0, 0)
    assert shown[1] == (0, 200, 0)
    assert shown[2] == (0, 0, 200)
