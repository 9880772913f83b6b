"""The Runs tab in the window: the ledger of its runs, overlay, reproduce."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDoubleSpinBox, QScrollArea, QSlider

from workbench.core.runs.listing import list_runs, read_events

from .helpers import FAST, bias_corrected_average, run_to_end

pytestmark = pytest.mark.gui


@pytest.mark.slow
def test_runs_are_listed_overlaid_and_reproduced(qtbot, window):
    window.apply_config(FAST.replace(max_steps=None, epochs=2, seed=1))
    run_to_end(qtbot, window)
    window.apply_config(FAST.replace(max_steps=None, epochs=2, seed=2))
    window.reset_run()
    run_to_end(qtbot, window)
    panel = window.runs_panel
    runs = list_runs()
    assert len(runs) == 2
    assert panel.table.rowCount() == 2
    assert all(r.status == "finished" for r in runs)

    panel.select_ids([r.id for r in runs])
    names = window.overlay.curve_names()
    assert len(names) == 2  # one curve per selected run, on each plot
    for name in names:
        assert window.loss_plot.has_series(name)
        assert window.accuracy_plot.has_series(name)
    panel.select_ids([runs[0].id])
    assert len(window.overlay.curve_names()) == 1
    assert not window.loss_plot.has_series(names[1])
    assert window.loss_plot.has_series("loss")  # the live run's curves stay

    with qtbot.waitSignal(window.controller.run_finished, timeout=60_000) as ended:
        panel.reproduce_button.click()
    assert ended.args[0].reproduction_of == runs[0].folder
    assert ended.args[0].reproduction.reproduced
    assert "reproduced: all" in panel.message_label.text()
    assert runs[0].folder.info()["last_reproduction"].startswith("reproduced")
    assert len(list_runs()) == 3  # the repeat is a run of its own


def test_pause_and_freeze_changes_go_to_the_runs_events(qtbot, window):
    from tests.ui.test_window import start_long_run

    start_long_run(qtbot, window)
    with qtbot.waitSignal(window.controller.pause_reached, timeout=10_000):
        window.toggle_pause()
    window.freeze_panel.head_button.click()
    window.toggle_pause()
    with qtbot.waitSignal(window.controller.run_finished, timeout=10_000):
        window.stop()
    kinds = [e["kind"] for e in read_events(window.run_folder)]
    assert kinds == ["start", "pause", "freeze", "resume", "stop requested", "stop"]
    freeze = read_events(window.run_folder)[2]
    assert freeze["frozen"] == [
        "hidden.1.weight",
        "hidden.1.bias",
        "hidden.3.weight",
        "hidden.3.bias",
    ]


def test_an_overlaid_run_is_smoothed_like_the_live_curve(qtbot, window):
    run_to_end(qtbot, window)
    window.runs_tab.refresh()
    window.runs_panel.select_ids([window.run_folder.id])
    overlaid = [
        n for n in window.overlay.curve_names() if window.loss_plot.has_series(n)
    ]
    assert len(overlaid) == 1
    steps, smoothed = window.loss_plot.data(overlaid[0])
    live_steps, live = window.loss_plot.data("smoothed")
    np.testing.assert_array_equal(steps, live_steps)
    np.testing.assert_allclose(smoothed, live, rtol=1e-6)


def test_the_smoothing_control_resmooths_the_live_and_the_overlaid_curves(
    qtbot, window
):
    run_to_end(qtbot, window)
    window.runs_tab.refresh()
    window.runs_panel.select_ids([window.run_folder.id])
    (overlaid,) = [
        n for n in window.overlay.curve_names() if window.loss_plot.has_series(n)
    ]
    page = window.curves.build_page()  # the lead puts it in the window's tab
    qtbot.addWidget(page)
    page.show()
    spin = page.findChild(QDoubleSpinBox, "smoothingSpin")
    slider = page.findChild(QSlider, "smoothingSlider")
    _, raw = window.loss_plot.data("loss")
    for beta, control, value in ((0.3, spin, 0.3), (0.95, slider, 95)):
        control.setValue(value)
        expected = bias_corrected_average(raw, beta)
        for name in ("smoothed", overlaid):  # drawn, not only kept
            window.loss_plot.refresh()
            (item,) = [
                i
                for i in window.loss_plot.getPlotItem().listDataItems()
                if i.name() == name
            ]
            np.testing.assert_allclose(item.getData()[1], expected, rtol=1e-9)
    # The live run goes on (or a new one starts): the same smoothing.
    window.curves.clear()
    window.loss_plot.refresh()
    (item,) = [
        i
        for i in window.loss_plot.getPlotItem().listDataItems()
        if i.name() == overlaid
    ]
    np.testing.assert_allclose(item.getData()[1], expected, rtol=1e-9)


def test_every_runs_column_is_in_view_at_the_default_window_sizes(qtbot, window):
    from workbench.core.config import TrainConfig
    from workbench.core.runs.folder import RunFolder

    cfg = TrainConfig(dataset="fashion-mnist", model="small-cnn")
    for i in range(12):
        folder = RunFolder.create(cfg.replace(seed=i), origin="test")
        folder.update(
            status="finished",
            best_val_accuracy=0.9 + i / 1000,
            seconds=4000.0 + i,
            tags=["lr-sweep", "cpu", "baseline"] if i % 3 == 0 else [],
            name="a run with a long descriptive name" if i == 2 else "",
        )
    page = window.findChild(QScrollArea, "runsPage")
    window.tabs.setCurrentWidget(page)
    window.runs_tab.refresh()
    table = window.runs_panel.table
    header = table.horizontalHeader()
    for size in ((1500, 920), (1600, 1000)):
        window.resize(*size)
        qtbot.waitUntil(lambda size=size: window.size().toTuple() == size)
        QApplication.processEvents()
        assert table.rowCount() == 12
        width = table.viewport().width()
        for column in range(header.count()):
            left = header.sectionViewportPosition(column)
            name = table.horizontalHeaderItem(column).text()
            assert left >= 0, (size, name)
            assert left + header.sectionSize(column) <= width, (size, name)
        assert table.horizontalScrollBar().maximum() == 0, size
        assert page.horizontalScrollBar().maximum() == 0, size
        assert header.sectionSize(0) >= 120, "the run's name stays readable"
        # An unnamed run shows the start of its id (dataset and model have
        # columns), whole: a prefix `ptcore-workbench runs show` accepts.
        cells = [table.item(row, 0) for row in range(table.rowCount())]
        first = next(c for c in cells if "descriptive" not in c.text())
        run_id = first.data(Qt.ItemDataRole.UserRole)
        assert run_id.startswith(first.text() + "-fashion-mnist-small-cnn-")
        text_width = table.fontMetrics().horizontalAdvance(first.text())
        assert text_width + 12 <= header.sectionSize(0)
