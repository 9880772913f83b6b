"""The Data panel: samples of the loaded set; download with progress and Cancel."""

from __future__ import annotations

import threading

import pytest

from workbench.core.config import DATASETS
from workbench.core.data.registry import DataError, DownloadCancelled, DownloadProgress
from workbench.ui.panels.data import DataPanel, sample_strip

pytestmark = pytest.mark.gui


def test_digits_load_with_counts_and_examples(qtbot, window):
    panel = window.data_panel
    assert panel.count_label.text() == "1,437 training · 360 test images"
    assert not panel.strip_label.pixmap().isNull()
    assert not panel.download_button.isEnabled()  # bundled
    arrays = panel.cache.get("digits", None)
    strip = sample_strip(arrays)
    assert strip.shape == (2 * 28 + 2, 10 * 28 + 18)


def test_missing_dataset_says_so(qtbot, window):
    combo = window.data_panel.dataset_combo
    with qtbot.waitSignal(window.data_panel.arrays_changed, timeout=10_000):
        combo.setCurrentIndex(DATASETS.index("mnist"))
    assert window.data_panel.count_label.text().startswith("Not in the data folder")
    assert "missing" in window.data_panel.count_label.toolTip()
    assert window.data_panel.download_button.isEnabled()


def test_download_shows_progress_and_cancels(qtbot, monkeypatch):
    started = threading.Event()

    def fake_load(
        name, data_dir=None, *, download=True, progress=None, cancel=None, **kw
    ):
        if not download:
            raise DataError(f"{name} is not downloaded")
        progress(DownloadProgress(name, "train-images.gz", 1, 4, 500, 1000))
        started.set()
        while not cancel():
            threading.Event().wait(0.01)
        raise DownloadCancelled("cancelled")

    monkeypatch.setattr("workbench.ui.panels.data.load_arrays", fake_load)
    panel = DataPanel()
    qtbot.addWidget(panel)
    panel.dataset_combo.setCurrentIndex(DATASETS.index("mnist"))
    qtbot.waitUntil(lambda: not panel.is_busy())
    panel.download_button.click()
    assert panel.cancel_button.isVisibleTo(panel)
    qtbot.waitUntil(lambda: panel.download_bar.value() == 500, timeout=10_000)
    assert panel.download_bar.format().startswith("1/4")
    panel.cancel_button.click()
    qtbot.waitUntil(lambda: not panel.is_busy(), timeout=10_000)
    assert panel.count_label.text() == "Download cancelled"
    assert not panel.cancel_button.isVisibleTo(panel)
    assert panel.download_button.isVisibleTo(panel)


def test_cancel_and_the_bar_stay_hidden_and_disabled_with_nothing_to_cancel(qtbot):
    # Issue 34 item 30: switching to an image folder and back showed the
    # hidden Cancel and progress bar of the Download row.
    panel = DataPanel()
    qtbot.addWidget(panel)
    panel.show()
    for name in ("mnist", "folder", "mnist", "digits", "mnist"):
        panel.dataset_combo.setCurrentIndex(DATASETS.index(name))
        qtbot.waitUntil(lambda: not panel.is_busy())
        assert not panel.cancel_button.isVisible(), name
        assert not panel.cancel_button.isEnabled(), name
        assert not panel.download_bar.isVisible(), name
    assert panel.download_button.isVisible()
