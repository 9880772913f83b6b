"""The data check's report in the window: verdict, bars per class, every finding."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from workbench.core.data.folder_check import check_folder
from workbench.ui.data_check_view import (
    ClassCountChart,
    DataCheckView,
    FolderChecker,
    summary_line,
)

pytestmark = pytest.mark.gui

# Readable images per class in the folder image_folder() writes.
COUNTS = {"cat": 4, "dog": 3, "fox": 2}


def write_png(path: Path, seed: int, size: int = 16) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = np.random.default_rng(seed).integers(0, 256, (size, size, 3), np.uint8)
    Image.fromarray(pixels, "RGB").save(path)
    return path


def image_folder(root: Path, *, bad: bool = True, empty_class: bool = False) -> Path:
    """Classes of 16x16 PNGs; ``bad`` adds a zero-byte .jpg, a .txt, a truncated PNG.

    ``empty_class`` adds a class folder without images (an error: cannot train).
    """
    for c, (name, count) in enumerate(COUNTS.items()):
        for i in range(count):
            write_png(root / name / f"{i}.png", seed=10 * c + i)
    if bad:
        (root / "cat" / "empty.jpg").write_bytes(b"")
        (root / "dog" / "notes.txt").write_text("not an image")
        whole = write_png(root / "fox" / "whole.png", seed=99).read_bytes()
        (root / "fox" / "whole.png").unlink()
        (root / "fox" / "cut.png").write_bytes(whole[: len(whole) // 2])
    if empty_class:
        (root / "owl").mkdir()
    return root


def test_the_report_shows_counts_as_bars_and_every_bad_file(qtbot, tmp_path):
    root = image_folder(tmp_path / "pets", empty_class=True)
    report = check_folder(root, image_size=16)
    view = DataCheckView()
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show_report(report, "Why it shows")
    assert view.chart.heights() == [4, 3, 2, 0]
    assert view.chart.tick_names() == ["cat", "dog", "fox", "owl"]
    assert view.verdict_label.text().startswith("Cannot train: 4 classes · 9 images")
    lines = view.findings_edit.toPlainText().splitlines()
    assert lines[0].startswith("error: class 'owl' has no readable images")
    for name in ("empty.jpg", "cut.png", "notes.txt"):
        assert any(str(root) in line and name in line for line in lines), name
    assert any(
        line.startswith("warning: skipped") and "cut.png" in line for line in lines
    )
    assert view.reason_label.text() == "Why it shows"
    text = view.text()
    assert "cannot train: 1 errors, 2 warnings" in text
    assert "notes.txt" in text


def test_a_warnings_only_summary_says_what_a_run_skips(tmp_path):
    report = check_folder(image_folder(tmp_path / "pets"), image_size=16)
    assert report.can_train
    assert summary_line(report) == "3 classes · 9 images: 2 files will be skipped"


def test_many_classes_name_every_kth_bar_and_the_tooltip_names_all(qtbot):
    counts = {f"class-{i:02d}": i + 1 for i in range(40)}
    chart = ClassCountChart()
    qtbot.addWidget(chart)
    chart.resize(600, 300)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_counts(counts)
    names = chart.tick_names()
    assert chart.heights() == list(range(1, 41))
    assert names[0] in {"class-00", "class-01", "class-02"}
    assert 2 <= len(names) < 40
    assert all(name in counts for name in names)  # whole names, not "c…"
    assert all(name in chart.toolTip() for name in counts)
    chart.resize(3000, 300)
    qtbot.waitUntil(lambda: len(chart.tick_names()) == 40)


def test_the_checker_keeps_the_report_until_the_folder_changes(qtbot, tmp_path):
    root = image_folder(tmp_path / "pets", bad=False)
    checker = FolderChecker()
    progress = []
    checker.progressed.connect(lambda done, total: progress.append((done, total)))
    with qtbot.waitSignal(checker.checked, timeout=10_000) as blocker:
        assert checker.check(str(root), 16) is None  # runs in the background
    report = blocker.args[0]
    assert report.images_per_class() == COUNTS
    assert progress[-1] == (9, 9)
    with qtbot.assertNotEmitted(checker.checked):
        assert checker.check(str(root), 16) is report  # nothing changed: no check
    write_png(root / "dog" / "new.png", seed=5)
    os.utime(root / "dog", ns=(1, 1))  # a coarse clock must not hide the change
    assert checker.cached(str(root), 16) is None
    with qtbot.waitSignal(checker.checked, timeout=10_000) as blocker:
        checker.check(str(root), 16)
    assert blocker.args[0].images_per_class()["dog"] == 4
    qtbot.waitUntil(lambda: not checker.is_checking())  # its thread has ended
