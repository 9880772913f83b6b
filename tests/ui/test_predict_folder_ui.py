"""Predict a whole folder on the Try-an-image tab: the table, sorting, CSV, Cancel.

The tab (a ``DrawPanel``) reads with a CIFAR-10-shaped photo model whose weights
are drawn from a seeded generator; every row must be what opening that one
file on the tab reads.
"""

from __future__ import annotations

import csv
import io
import threading
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog

from workbench.core.predict import Predictor
from workbench.core.predict_batch import FileResult
from workbench.ui import dialogs
from workbench.ui.panels.draw import DrawPanel
from workbench.ui.panels.predictions_table import PredictionsTable

pytestmark = pytest.mark.gui


@pytest.fixture
def panel(qtbot):
    """The tab reading like a CIFAR-10 run, with seeded (not zero) weights."""
    tab = DrawPanel()
    qtbot.addWidget(tab)
    tab.set_reader("small-cnn", "cifar10")
    generator = torch.Generator().manual_seed(0)
    state = tab.predictor.model.state_dict()  # BatchNorm's statistics as reset
    for key, value in tab.predictor.model.named_parameters():
        state[key] = torch.randn(value.shape, generator=generator) * 0.3
    tab.set_weights(state, "seeded weights")
    tab.resize(900, 700)
    tab.show()
    yield tab
    tab.shutdown()


def photo(path: Path, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(rng.integers(0, 256, (30, 40, 3), dtype=np.uint8)).save(path)
    return path


def drop(target, paths) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path)) for path in paths])
    where = QPointF(target.rect().center())
    enter = QDragEnterEvent(
        where.toPoint(), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier
    )
    QApplication.sendEvent(target, enter)
    assert enter.isAccepted()
    event = QDropEvent(where, Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(target, event)
    assert event.isAccepted()


def read_batch(qtbot, panel, action):
    """Do ``action`` and wait until its batch is shown and its thread ended."""
    with qtbot.waitSignal(panel.batch.batch_finished, timeout=30_000) as signal:
        action()
    return signal.args[0]


def expected_row(panel, path: Path) -> tuple[str, str]:
    """(class, confidence) as opening that one file on the tab reads it."""
    reading = panel.predictor.read_file(path)
    assert np.isfinite(reading.probabilities).all()
    name = reading.class_names[reading.label]
    return name, f"{100 * reading.confidence:.1f}%"


def pets(tmp_path) -> Path:
    root = tmp_path / "pets"
    for name, seed in (("b.png", 1), ("A.JPG", 2), ("sub/c.png", 3)):
        photo(root / name, seed)
    (root / "sub" / "broken.png").write_bytes(b"")
    (root / "notes.txt").write_text("not an image")
    return root


def test_a_dropped_folder_is_read_into_a_table_of_file_class_confidence(
    qtbot, panel, tmp_path
):
    root = pets(tmp_path)
    table = panel.predictions
    assert not table.isVisibleTo(panel)
    batch = read_batch(qtbot, panel, lambda: drop(panel.preview, [root]))
    assert table.isVisibleTo(panel)
    assert table.source_label.text() == "Folder pets: 4 image files"
    assert table.status_label.text() == "3 read, 1 skipped"
    assert not table.cancel_button.isVisibleTo(panel)
    assert table.export_button.isEnabled()
    assert len(batch.results) == batch.total == 4
    rows = table.shown_rows()
    assert [row[0] for row in rows] == ["A.JPG", "b.png", "sub/broken.png", "sub/c.png"]
    for row in rows:
        if row[0] == "sub/broken.png":
            assert row[1:] == ("not read: the file is empty (0 bytes)", "")
        else:
            assert row[1:] == expected_row(panel, root / row[0])
    assert panel.reading is None  # the tab itself opened nothing

    # A click on a row opens that file on the tab, as opening it does.
    view = table.view
    index = view.model().index(3, 0)
    QTest.mouseClick(
        view.viewport(), Qt.LeftButton, Qt.NoModifier, view.visualRect(index).center()
    )
    assert panel.reading is not None
    assert torch.equal(
        panel.reading.input, panel.predictor.read_file(root / "sub/c.png").input
    )


def test_several_chosen_files_fill_the_table_and_one_reads_as_before(
    qtbot, panel, tmp_path, monkeypatch
):
    files = [photo(tmp_path / f"{name}.png", seed) for seed, name in enumerate("zxy")]
    chosen = [str(path) for path in files]
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: (chosen, ""))
    read_batch(qtbot, panel, panel.open_image_button.click)
    table = panel.predictions
    assert table.source_label.text() == "3 files"
    assert [row[0] for row in table.shown_rows()] == ["z.png", "x.png", "y.png"]
    assert panel.reading is None

    chosen = [str(files[1])]  # one file: read on the tab, the table untouched
    panel.open_image_button.click()
    assert not panel.batch.is_running()
    assert panel.reading is not None
    assert torch.equal(panel.reading.input, panel.predictor.read_file(files[1]).input)
    assert len(table.shown_rows()) == 3
    # One file dropped reads on the tab too.
    drop(panel, [files[2]])
    assert not panel.batch.is_running()
    assert torch.equal(panel.reading.input, panel.predictor.read_file(files[2]).input)


def click_header(qtbot, table, column) -> None:
    header = table.view.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    QTest.mouseClick(header.viewport(), Qt.LeftButton, Qt.NoModifier, QPoint(x, 5))


def test_each_column_sorts_confidence_by_value_not_by_its_text(qtbot, tmp_path):
    table = PredictionsTable()
    qtbot.addWidget(table)
    results = [
        FileResult(Path("/p/b.png"), "dog", 0.5, (("dog", 0.5),)),
        FileResult(Path("/p/a.png"), "cat", 0.095, (("cat", 0.095),)),
        FileResult(Path("/p/c.png"), error="the file is empty (0 bytes)"),
        FileResult(Path("/p/d.png"), "ant", 0.102, (("ant", 0.102),)),
    ]
    table.start("4 files", 4)
    table.show_results(results, 4)
    table.resize(600, 300)
    table.show()
    click_header(qtbot, table, 2)  # "9.5%" before "10.2%" before "50.0%"
    ascending = [row[2] for row in table.shown_rows()]
    assert ascending == ["", "9.5%", "10.2%", "50.0%"]
    click_header(qtbot, table, 2)
    assert [row[2] for row in table.shown_rows()] == ascending[::-1]
    click_header(qtbot, table, 1)
    assert [row[1] for row in table.shown_rows()][:3] == ["ant", "cat", "dog"]
    click_header(qtbot, table, 0)
    assert [row[0] for row in table.shown_rows()] == [
        "a.png",
        "b.png",
        "c.png",
        "d.png",
    ]


def test_export_csv_writes_the_rows_shown_with_a_skipped_files_reason(
    qtbot, panel, tmp_path, monkeypatch, error_dialogs
):
    root = pets(tmp_path)
    read_batch(qtbot, panel, lambda: drop(panel, [root]))
    table = panel.predictions
    click_header(qtbot, table, 2)
    click_header(qtbot, table, 2)  # most confident first
    out = tmp_path / "export" / "table.csv"
    asked = []

    def answer(*args, **kwargs):
        asked.append(kwargs.get("name"))
        return out

    monkeypatch.setattr(dialogs, "get_save_path", answer)
    table.export_button.click()
    assert asked == ["predictions.csv"]
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert rows[0][:3] == ["file", "class", "confidence"]
    assert rows[0][-1] == "error"
    shown = table.shown_rows()
    assert [Path(row[0]).relative_to(root).as_posix() for row in rows[1:]] == [
        row[0] for row in shown
    ]
    for row, seen in zip(rows[1:], shown, strict=True):
        if seen[0] == "sub/broken.png":
            assert row[1] == row[2] == ""
            assert row[-1] == "the file is empty (0 bytes)"
        else:
            reading = panel.predictor.read_file(Path(row[0]))
            assert row[1] == seen[1]
            assert float(row[2]) == pytest.approx(reading.confidence, abs=5e-7)
            assert row[-1] == ""
    confidences = [float(row[2]) for row in rows[1:] if row[2]]
    assert confidences == sorted(confidences, reverse=True)

    # A file that cannot be written is one message.
    out.unlink()
    out.mkdir()
    table.export_button.click()
    assert len(error_dialogs.shown) == 1
    title, message, _ = error_dialogs.shown[0]
    assert title == "Could not export the predictions"
    assert message.startswith(f"Could not write {out}:")
    error_dialogs.shown.clear()


def test_cancel_stops_after_the_file_being_read_and_shows_what_was_read(
    qtbot, panel, tmp_path, monkeypatch
):
    root = tmp_path / "many"
    for index in range(5):
        photo(root / f"{index:02d}.png", index)
    gate = threading.Event()
    read_file = Predictor.read_file

    def waiting(self, path, **options):
        if path.name == "01.png":
            gate.wait(20)
        return read_file(self, path, **options)

    monkeypatch.setattr(Predictor, "read_file", waiting)
    table = panel.predictions
    with qtbot.waitSignal(panel.batch.batch_finished, timeout=30_000) as signal:
        drop(panel, [root])
        qtbot.waitUntil(lambda: table.status_label.text() == "Reading 1 of 5 files…")
        assert table.cancel_button.isVisibleTo(panel)
        assert not table.export_button.isEnabled()
        table.cancel_button.click()
        gate.set()
    assert len(signal.args[0].results) == 2
    assert [row[0] for row in table.shown_rows()] == ["00.png", "01.png"]
    assert table.status_label.text() == (
        "Stopped (cancelled) after 2 of 5: 2 read, 0 skipped"
    )
    assert not table.cancel_button.isVisibleTo(panel)
    assert table.export_button.isEnabled()


def test_weights_loaded_while_a_batch_reads_do_not_reach_it(
    qtbot, panel, tmp_path, monkeypatch
):
    # While a run trains, the tab's reader takes new weights every half second:
    # a batch reads every file with the weights it started with.
    files = [photo(tmp_path / "many" / f"{index:02d}.png", index) for index in range(3)]
    before = {path.name: expected_row(panel, path) for path in files}
    gate = threading.Event()
    read_file = Predictor.read_file

    def waiting(self, path, **options):
        if path.name == "01.png":
            gate.wait(20)
        return read_file(self, path, **options)

    monkeypatch.setattr(Predictor, "read_file", waiting)
    generator = torch.Generator().manual_seed(1)
    state = panel.predictor.model.state_dict()
    for key, value in panel.predictor.model.named_parameters():
        state[key] = torch.randn(value.shape, generator=generator) * 0.3
    table = panel.predictions
    with qtbot.waitSignal(panel.batch.batch_finished, timeout=30_000):
        drop(panel, [tmp_path / "many"])
        qtbot.waitUntil(lambda: table.status_label.text() == "Reading 1 of 3 files…")
        panel.set_weights(state, "newer weights")
        gate.set()
    assert {row[0]: row[1:] for row in table.shown_rows()} == before
    assert all(expected_row(panel, path) != before[path.name] for path in files)
