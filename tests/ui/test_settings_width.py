"""The settings column fits its content at the window sizes users have (issue
34, item 24): an image folder's rows, photos in the augmentation strip and a
long path cut nothing on the right and never scroll the column sideways."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication, QScrollArea

from tests.image_folders import make_folder


@pytest.mark.parametrize("size", [(1024, 700), (1600, 1000)])
def test_an_image_folder_leaves_the_settings_column_whole(
    qtbot, window, tmp_path, size
):
    root = make_folder(
        tmp_path / ("a long folder name " * 4).strip(), ["cat", "dog"], 6, size=96
    )
    window.resize(*size)
    window.show()
    column = window.findChild(QScrollArea, "settingsScroll")
    for dataset, extra in (
        ("folder", {"data_dir": str(root), "image_size": 96}),
        ("digits", {"image_size": None}),
    ):
        window.apply_config(window.current_config().replace(dataset=dataset, **extra))
        qtbot.waitUntil(lambda: not window.data_panel.is_busy(), timeout=10_000)
        QApplication.processEvents()
        content = column.widget()
        assert column.horizontalScrollBar().maximum() == 0, dataset
        assert content.width() <= column.viewport().width(), dataset
        assert content.minimumSizeHint().width() <= column.viewport().width(), dataset
        # Photos in the augmentation strip shrink to the column, not widen it.
        assert column.minimumWidth() < 0.5 * 1024, dataset
        window.grab().save(f"/tmp/window_{dataset}_{size[0]}x{size[1]}.png")
