"""The Runs tab: list, select, overlay, compare, rename, tag, delete, buttons."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from workbench.core.config import TrainConfig
from workbench.core.events import EpochMetrics
from workbench.core.runs.folder import METRICS_FILE, RunFolder
from workbench.core.runs.listing import list_runs
from workbench.core.runs.recorder import RunRecorder
from workbench.core.train.engine import iter_fit, prepare_run
from workbench.ui import dialogs
from workbench.ui.panels.runs import COLUMNS, RunsPanel, duration
from workbench.ui.plots.live_plot import LivePlot
from workbench.ui.plots.overlay import RunOverlay, steps_per_epoch

pytestmark = pytest.mark.gui

LIVE_LOSS = ["loss", "smoothed"]
LIVE_ACCURACY = ["train", "validation"]
BASE = TrainConfig(model="mlp", epochs=2, batch_size=64, log_every=1)


def _train(root: Path, cfg: TrainConfig, arrays, *, autosave: int) -> RunFolder:
    folder = RunFolder.create(cfg, origin="test", root=root)
    run = prepare_run(cfg, arrays=arrays)
    recorder = RunRecorder(folder, autosave)
    recorder.start(run)
    for event in iter_fit(run):
        recorder.on_event(event, run)
    return folder


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_arrays) -> Path:
    """Three finished runs, trained once; A and B checkpointed, C not."""
    root = tmp_path_factory.mktemp("trained-runs")
    a = _train(root, BASE.replace(lr=0.01, seed=0), tiny_arrays, autosave=1)
    a.update(name="A")
    b = _train(root, BASE.replace(lr=0.02, seed=1), tiny_arrays, autosave=1)
    b.update(name="B")
    c = _train(root, BASE.replace(lr=0.01, seed=0, epochs=1), tiny_arrays, autosave=0)
    c.update(name="C")
    return root


@pytest.fixture
def runs(trained, runs_root) -> dict[str, RunFolder]:
    """The trained runs copied into this test's runs folder, by name."""
    found = {}
    for path in trained.iterdir():
        copy = RunFolder(Path(shutil.copytree(path, runs_root / path.name)))
        found[copy.info()["name"]] = copy
    return found


@pytest.fixture
def panel(qtbot, runs) -> RunsPanel:
    widget = RunsPanel()
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    widget.show()
    return widget


@pytest.fixture
def plots(qtbot) -> tuple[LivePlot, LivePlot]:
    """Loss and accuracy plots with the window's live series, partly filled."""
    loss = LivePlot("Training loss", "step", "loss")
    loss.add_series("loss", (120, 170, 220), width=1)
    loss.add_series("smoothed", (20, 70, 160), width=2.5)
    accuracy = LivePlot("Accuracy per epoch", "epoch", "accuracy (%)")
    accuracy.add_series("train", (230, 120, 20), symbol="o")
    accuracy.add_series("validation", (30, 150, 60), symbol="o")
    for step in range(1, 4):
        loss.append("loss", step, 2.0 / step)
        loss.append("smoothed", step, 2.0 / step)
    accuracy.append("train", 1.0, 50.0)
    accuracy.append("validation", 1.0, 55.0)
    for plot in (loss, accuracy):
        qtbot.addWidget(plot)
        plot.refresh()
    return loss, accuracy


def _row_of(panel: RunsPanel, title: str) -> int:
    for row in range(panel.table.rowCount()):
        if panel.table.item(row, 0).text() == title:
            return row
    raise AssertionError(f"no row {title!r}")


def _cells(panel: RunsPanel, title: str) -> list[str]:
    row = _row_of(panel, title)
    return [panel.table.item(row, c).text() for c in range(panel.table.columnCount())]


def test_table_lists_runs_with_columns(panel, runs):
    table = panel.table
    assert table.objectName() == "runsTable"
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert headers == list(COLUMNS)
    assert table.rowCount() == 3
    _title, date, dataset, model, best, spent, status, tags, sweep = _cells(panel, "A")
    info = runs["A"].info()
    assert len(date) == len("2026-11-30 12:05")
    assert date[4] == "-"
    assert (dataset, model, status, tags, sweep) == (
        BASE.dataset,
        "mlp",
        "finished",
        "",
        "",
    )
    assert best == f"{100 * info['best_val_accuracy']:.2f}%"
    assert spent == duration(info["seconds"])
    tooltip = table.item(_row_of(panel, "A"), 0).toolTip()
    assert runs["A"].id in tooltip
    assert str(runs["A"].path) in tooltip
    assert table.isSortingEnabled()


def test_sorting_by_sweep_puts_a_sweeps_trials_together_in_order(panel, runs):
    column = COLUMNS.index("Sweep")
    assert panel.table.isColumnHidden(column)  # no sweep listed: no room taken
    runs["A"].update(sweep={"study": "s", "trial": 10})
    runs["B"].update(sweep={"study": "s", "trial": 2})
    runs["C"].update(sweep={"study": "r", "trial": 1})
    panel.refresh()
    assert not panel.table.isColumnHidden(column)
    panel.table.sortByColumn(column, Qt.SortOrder.AscendingOrder)
    texts = [panel.table.item(r, column).text() for r in range(3)]
    assert texts == ["r #1", "s #2", "s #10"]  # not "s #10" before "s #2"


def test_a_run_that_stopped_early_says_so_and_why(panel, runs):
    why = "validation accuracy did not improve for 2 epochs after epoch 8 (99.72%)"
    runs["A"].update(early_stop={"epoch": 10, "why": why})
    panel.refresh()
    column = COLUMNS.index("Status")
    assert _cells(panel, "A")[column] == "finished early"
    assert _cells(panel, "B")[column] == "finished"
    tip = panel.table.item(_row_of(panel, "A"), column).toolTip()
    assert tip == f"Stopped early after epoch 10: {why}"


def test_durations_and_best_sort_by_value(panel, runs):
    assert duration(83) == "1:23"
    assert duration(3725) == "1:02:05"
    assert duration(0) == "0:00"
    runs["A"].update(best_val_accuracy=0.5)
    runs["B"].update(best_val_accuracy=1.0)
    runs["C"].update(best_val_accuracy=0.9872)
    panel.refresh()
    panel.table.sortByColumn(4, Qt.SortOrder.AscendingOrder)
    column = [panel.table.item(r, 4).text() for r in range(3)]
    assert column == ["50.00%", "98.72%", "100.00%"]  # not "100.00%" first


def test_overlay_shows_one_curve_per_selected_run(qtbot, panel, plots):
    loss_plot, accuracy_plot = plots
    overlay = RunOverlay(loss_plot, accuracy_plot)
    panel.overlay_changed.connect(overlay.show)
    for names in (["A"], ["A", "B"], ["A", "B", "C"]):
        ids = [r.id for r in list_runs() if r.title in names]
        with qtbot.waitSignal(panel.overlay_changed) as blocker:
            panel.select_ids(ids)
        emitted = blocker.args[0]
        assert sorted(r.title for r in emitted) == names
        assert sorted(overlay.curve_names()) == names
        # Exactly one loss and one accuracy curve per run; live series untouched.
        assert loss_plot.series_names()[:2] == LIVE_LOSS
        assert sorted(loss_plot.series_names()[2:]) == names
        assert accuracy_plot.series_names()[:2] == LIVE_ACCURACY
        assert sorted(accuracy_plot.series_names()[2:]) == names
    # A: 2 epochs of 4 steps; its points lie where the window plots its own.
    (a,) = [r for r in panel.selected_runs() if r.title == "A"]
    lines = (a.folder.path / METRICS_FILE).read_text().splitlines()
    a_steps = sum(json.loads(line)["kind"] == "step" for line in lines)
    assert loss_plot.point_count("A") == a_steps == 8
    xs, ys = accuracy_plot.data("A")
    assert list(xs) == [1.0, 2.0]
    assert all(0 <= y <= 100 for y in ys)
    xs, _ = accuracy_plot.data("C")
    assert list(xs) == [1.0]

    with qtbot.waitSignal(panel.overlay_changed) as blocker:
        panel.table.clearSelection()
    assert blocker.args[0] == []
    assert overlay.curve_names() == []
    assert loss_plot.series_names() == LIVE_LOSS
    assert accuracy_plot.series_names() == LIVE_ACCURACY
    assert loss_plot.point_count("loss") == 3
    assert accuracy_plot.point_count("validation") == 1
    assert loss_plot.legend_text() == "   ".join(LIVE_LOSS)


def test_ctrl_click_extends_the_selection(qtbot, panel):
    table = panel.table
    emitted = []
    panel.overlay_changed.connect(emitted.append)

    def click(title, modifier=Qt.KeyboardModifier.NoModifier):
        rect = table.visualItemRect(table.item(_row_of(panel, title), 1))
        qtbot.mouseClick(
            table.viewport(), Qt.MouseButton.LeftButton, modifier, rect.center()
        )

    click("A")
    click("B", Qt.KeyboardModifier.ControlModifier)
    assert sorted(r.title for r in panel.selected_runs()) == ["A", "B"]
    assert [sorted(r.title for r in runs) for runs in emitted] == [["A"], ["A", "B"]]


def test_overlay_names_never_take_a_live_series(qtbot, panel, plots, runs):
    runs["A"].update(name="loss")
    panel.refresh()
    overlay = RunOverlay(*plots)
    overlay.show([r for r in list_runs() if r.title == "loss"])
    (name,) = overlay.curve_names()
    assert name != "loss"
    assert name.startswith("loss (")
    assert plots[0].point_count("loss") == 3
    overlay.clear()
    assert plots[0].series_names() == LIVE_LOSS


def test_diff_table_shows_only_differing_fields(panel, runs):
    panel.select_ids([runs["A"].id, runs["B"].id])
    diff = panel.diff_table
    assert diff.objectName() == "runDiffTable"
    fields = [diff.verticalHeaderItem(r).text() for r in range(diff.rowCount())]
    assert fields == ["macro F1", "weighted F1", "lr", "seed"]  # scores first
    titles = [diff.horizontalHeaderItem(c).text() for c in range(diff.columnCount())]
    values = {
        titles[c]: [diff.item(r, c).text() for r in range(2, diff.rowCount())]
        for c in range(diff.columnCount())
    }
    assert values == {"A": ["0.01", "0"], "B": ["0.02", "1"]}

    panel.select_ids([runs["A"].id])
    fields = [diff.verticalHeaderItem(r).text() for r in range(diff.rowCount())]
    assert diff.columnCount() == 1
    assert "lr" in fields
    assert "model" in fields
    assert len(fields) > 5


def _scored(folder: RunFolder, macro: float, weighted: float) -> None:
    """Give run.json's class_scores these averages (the rest as the run wrote)."""
    scores = dict(folder.info()["class_scores"])
    scores["macro"] = dict(scores["macro"], f1=macro)
    scores["weighted"] = dict(scores["weighted"], f1=weighted)
    folder.update(class_scores=scores)


def test_the_comparison_starts_with_each_runs_macro_and_weighted_f1(panel, runs):
    # Each trained run wrote its last validation's class scores into run.json.
    for folder in runs.values():
        scores = folder.info()["class_scores"]
        assert 0.0 <= scores["macro"]["f1"] <= 1.0
    _scored(runs["A"], 0.5, 0.875)
    _scored(runs["B"], 0.91234, 0.9)
    runs["C"].update(class_scores=None)  # as a run from before the scores reads
    panel.refresh()
    panel.select_ids([runs["A"].id, runs["B"].id, runs["C"].id])
    diff = panel.diff_table
    titles = [diff.horizontalHeaderItem(c).text() for c in range(diff.columnCount())]
    rows = [diff.verticalHeaderItem(r).text() for r in range(diff.rowCount())]
    assert rows[:2] == ["macro F1", "weighted F1"]
    shown = {t: [diff.item(r, c).text() for r in (0, 1)] for c, t in enumerate(titles)}
    assert shown == {
        "A": ["50.00%", "87.50%"],
        "B": ["91.23%", "90.00%"],
        "C": ["—", "—"],
    }
    assert "macro counts every class the same" in diff.item(0, 0).toolTip()

    panel.select_ids([runs["C"].id])  # no run with scores: no score rows
    rows = [diff.verticalHeaderItem(r).text() for r in range(diff.rowCount())]
    assert "macro F1" not in rows
    assert "lr" in rows


def test_rename_and_tag_change_run_json_and_table(panel, runs, monkeypatch):
    answers = iter(["Baseline", "fast, mlp ,"])
    asked = []

    def get_text(parent, title, label, text=""):
        asked.append((title, text))
        return next(answers)

    monkeypatch.setattr(dialogs, "get_text", get_text)
    panel.select_ids([runs["A"].id])
    panel.findChild(type(panel.rename_button), "renameRunButton").click()
    assert runs["A"].info()["name"] == "Baseline"
    assert _row_of(panel, "Baseline") >= 0
    assert [r.title for r in panel.selected_runs()] == ["Baseline"]  # kept by id

    panel.tag_button.click()
    assert runs["A"].info()["tags"] == ["fast", "mlp"]
    assert _cells(panel, "Baseline")[7] == "fast, mlp"
    assert asked == [("Rename run", "A"), ("Tag runs", "")]


def test_cancelled_rename_changes_nothing(panel, runs, monkeypatch):
    monkeypatch.setattr(dialogs, "get_text", lambda *a, **k: None)
    panel.select_ids([runs["A"].id])
    panel.rename_button.click()
    assert runs["A"].info()["name"] == "A"


def test_delete_asks_then_removes_folders(qtbot, panel, runs, monkeypatch):
    questions = []
    answer = [False]

    def confirm(parent, title, text):
        questions.append(text)
        return answer[0]

    monkeypatch.setattr(dialogs, "confirm", confirm)
    panel.select_ids([runs["A"].id, runs["B"].id])
    panel.delete_button.click()
    assert runs["A"].path.is_dir()
    assert runs["B"].path.is_dir()
    assert "2 runs" in questions[0]
    assert "checkpoints" in questions[0]

    answer[0] = True
    with qtbot.waitSignal(panel.overlay_changed) as blocker:
        qtbot.keyClick(panel.table, Qt.Key.Key_Delete)
    assert blocker.args[0] == []
    assert not runs["A"].path.exists()
    assert not runs["B"].path.exists()
    assert runs["C"].path.is_dir()
    assert [_cells(panel, "C")[0]] == [
        panel.table.item(r, 0).text() for r in range(panel.table.rowCount())
    ]


def test_reproduce_and_open_buttons(qtbot, panel, runs):
    reproduce, open_ = panel.reproduce_button, panel.open_button
    assert not reproduce.isEnabled()
    assert not open_.isEnabled()

    panel.select_ids([runs["A"].id])
    assert reproduce.isEnabled()
    assert open_.isEnabled()
    with qtbot.waitSignal(panel.reproduce_requested) as blocker:
        reproduce.click()
    assert blocker.args[0].id == runs["A"].id
    with qtbot.waitSignal(panel.open_requested) as blocker:
        open_.click()
    assert blocker.args[0].folder.checkpoint_path == runs["A"].checkpoint_path

    panel.select_ids([runs["C"].id])  # finished, but never autosaved
    assert reproduce.isEnabled()
    assert not open_.isEnabled()

    panel.select_ids([runs["A"].id, runs["B"].id])
    assert not reproduce.isEnabled()
    assert not open_.isEnabled()
    assert panel.delete_button.isEnabled()

    runs["B"].update(status="stopped")
    panel.refresh()
    panel.select_ids([runs["B"].id])
    assert not reproduce.isEnabled()
    assert open_.isEnabled()

    panel.set_current_run_id(runs["B"].id)
    panel.set_busy(True)
    assert not open_.isEnabled()
    assert not panel.delete_button.isEnabled()
    assert not panel.rename_button.isEnabled()  # the trainer rewrites run.json
    assert panel.table.item(_row_of(panel, "B"), 0).font().bold()
    assert not panel.table.item(_row_of(panel, "A"), 0).font().bold()
    panel.set_busy(False)
    assert open_.isEnabled()
    assert panel.delete_button.isEnabled()

    panel.show_message("Reproduced: same accuracy")
    assert panel.findChild(type(panel.message_label), "runsMessage").text() == (
        "Reproduced: same accuracy"
    )
    assert panel.findChild(type(panel.tensorboard_check), "tensorboardCheck")


def test_torn_last_metrics_line_still_overlays(qtbot, panel, plots, runs):
    path = runs["B"].path / METRICS_FILE
    steps = sum('"kind": "step"' in line for line in path.read_text().splitlines())
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"kind": "step", "global_step": 9, "lo')  # the crash
    overlay = RunOverlay(*plots)
    panel.overlay_changed.connect(overlay.show)
    panel.select_ids([runs["B"].id])
    assert overlay.curve_names() == ["B"]
    assert plots[0].point_count("B") == steps > 0
    assert plots[1].point_count("B") == 2


def _epochs(*pairs: tuple[int, int]) -> list[EpochMetrics]:
    return [EpochMetrics.from_record({"epoch": e, "global_step": s}) for e, s in pairs]


def test_steps_per_epoch_from_epoch_records():
    assert steps_per_epoch(_epochs((0, 4), (1, 8))) == 4
    # Stopped mid-epoch 0, resumed: the partial record is followed by the same epoch.
    assert steps_per_epoch(_epochs((0, 2), (0, 4), (1, 8))) == 4
    assert steps_per_epoch(_epochs((0, 3))) == 3
    assert steps_per_epoch([]) == 1


def _row_pixels(panel: RunsPanel, image, row: int) -> list[tuple]:
    """Colours painted in table row ``row`` (every other pixel), panel coordinates."""
    table = panel.table
    shown = [c for c in range(table.columnCount()) if not table.isColumnHidden(c)]
    first = table.visualItemRect(table.item(row, 0))
    last = table.visualItemRect(table.item(row, shown[-1]))
    rect = first.united(last)
    origin = table.viewport().mapTo(panel, rect.topLeft())
    return [
        image.pixelColor(origin.x() + x, origin.y() + y).getRgb()[:3]
        for x in range(1, rect.width() - 1, 2)
        for y in range(1, rect.height() - 1)
    ]


def _dark(colours: list[tuple]) -> int:
    return sum(sum(c) < 200 for c in colours)


def test_panel_renders(panel, runs, tmp_path):
    """The picture: a row per run with its text, the selected rows highlighted."""
    panel.set_current_run_id(runs["C"].id)
    panel.select_ids([runs["A"].id, runs["B"].id])
    panel.show_message("Reproduced A: validation accuracy within 0.1%")
    pixmap = panel.grab()
    assert pixmap.save(str(tmp_path / "runs_panel.png"))
    image = pixmap.toImage()
    assert image.width() == panel.width()
    table = panel.table
    assert table.rowCount() == 3
    palette = table.palette()
    highlights = {
        palette.color(group, palette.ColorRole.Highlight).getRgb()[:3]
        for group in (palette.ColorGroup.Active, palette.ColorGroup.Inactive)
    }
    selected = {runs["A"].id, runs["B"].id}
    for row in range(3):
        run_id = table.item(row, 0).data(Qt.ItemDataRole.UserRole)
        colours = _row_pixels(panel, image, row)
        lit = sum(c in highlights for c in colours)
        if run_id in selected:
            assert lit > 0.5 * len(colours), (row, run_id)
        else:
            assert lit == 0, (row, run_id)
            assert _dark(colours) > 20, "the row's text is painted"
    # The message line is painted under the buttons.
    label = panel.message_label
    assert label.isVisible()
    assert label.geometry().top() >= panel.rename_button.geometry().bottom()
    corner = label.mapTo(panel, label.rect().topLeft())
    label_pixels = [
        image.pixelColor(corner.x() + x, corner.y() + y).getRgb()[:3]
        for x in range(label.width())
        for y in range(label.height())
    ]
    assert _dark(label_pixels) > 30


# ------------------------------------------------------------ issue 12: the Runs tab


def _titles(panel: RunsPanel) -> list[str]:
    return [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())]


def test_runs_appearing_or_going_on_disk_are_listed_without_refresh(
    qtbot, panel, runs, runs_root
):
    # Another process (a command-line run) starts a run: it shows up, running.
    other = RunFolder.create(BASE.replace(seed=7), origin="command line")
    other.update(name="from the CLI")
    qtbot.waitUntil(lambda: "from the CLI" in _titles(panel), timeout=5_000)
    assert _cells(panel, "from the CLI")[6] == "running"
    # ... and ends: its row says so.
    other.update(status="finished", best_val_accuracy=0.5)
    qtbot.waitUntil(
        lambda: _cells(panel, "from the CLI")[6] == "finished", timeout=5_000
    )
    assert _cells(panel, "from the CLI")[4] == "50.00%"
    # A run folder deleted outside the window leaves the list.
    shutil.rmtree(runs["C"].path)
    qtbot.waitUntil(lambda: "C" not in _titles(panel), timeout=5_000)
    assert sorted(_titles(panel)) == ["A", "B", "from the CLI"]


def test_showing_the_tab_lists_what_changed_while_it_was_hidden(qtbot, panel, runs):
    panel.hide()
    # Renamed by `ptcore-workbench runs` while the window looked elsewhere.
    runs["A"].update(name="renamed elsewhere")
    panel.show()
    assert "renamed elsewhere" in _titles(panel)


def _arrow_points_down(panel: RunsPanel, column: int) -> bool:
    """Whether the header's sort arrow in ``column`` is wider at its top."""
    header = panel.table.horizontalHeader()
    image = header.grab().toImage()
    left = header.sectionViewportPosition(column)
    right = left + header.sectionSize(column)
    text = header.fontMetrics().horizontalAdvance(COLUMNS[column])
    start = left + (header.sectionSize(column) + text) // 2 + 2  # right of the text
    widths = []
    for y in range(image.height()):
        dark = sum(
            image.pixelColor(x, y).lightness() < 110 for x in range(start, right - 2)
        )
        if dark:
            widths.append(dark)
    assert len(widths) >= 3, "no sort arrow drawn"
    assert widths[0] != widths[-1]
    return widths[0] > widths[-1]


def test_the_sort_arrow_points_the_way_the_rows_run(qtbot, panel, runs):
    for name, hour in (("A", 9), ("B", 11), ("C", 10)):
        runs[name].update(created=f"2026-12-01T{hour:02d}:00:00+00:00")
    panel.refresh()
    header = panel.table.horizontalHeader()
    assert header.sortIndicatorSection() == COLUMNS.index("Date")
    assert _titles(panel) == ["B", "C", "A"]  # newest first...
    assert _arrow_points_down(panel, 1)  # ...so the arrow points down
    assert "newest first" in panel.table.horizontalHeaderItem(1).toolTip()
    centre = header.rect().center()
    centre.setX(header.sectionViewportPosition(1) + header.sectionSize(1) // 2)
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    assert _titles(panel) == ["A", "C", "B"]  # oldest first: the arrow points up
    assert not _arrow_points_down(panel, 1)
    assert "oldest first" in panel.table.horizontalHeaderItem(1).toolTip()


def test_dates_sort_as_times_not_as_text(panel, runs):
    # 10:00 at UTC+5 is 05:00 UTC: the oldest, though its text sorts last.
    runs["A"].update(created="2026-12-01T10:00:00+05:00")
    runs["B"].update(created="2026-12-01T06:00:00+00:00")
    runs["C"].update(created="2026-12-01T05:30:00+00:00")
    panel.refresh()
    assert _titles(panel) == ["B", "C", "A"]


def test_reproduce_is_disabled_with_the_reason_for_runs_it_would_refuse(
    qtbot, panel, runs
):
    from workbench.core.runs.listing import summarize
    from workbench.core.runs.reproduce import reproducible

    reproduce = panel.reproduce_button
    runs["A"].record_mask_change(2, ["fc.weight"])  # the freeze mask changed mid-run
    runs["B"].update(started_from="fine-tune of 20261201-x")
    runs["C"].update(status="running")
    panel.refresh()
    for name, words in (
        ("A", "changed its freeze mask"),
        ("B", "started from fine-tune"),
        ("C", "still training"),
    ):
        panel.select_ids([runs[name].id])
        assert not reproduce.isEnabled(), name
        reason = reproducible(summarize(runs[name]))
        assert reproduce.toolTip() == f"Cannot reproduce: {reason}"
        assert words in reproduce.toolTip()
        with qtbot.assertNotEmitted(panel.reproduce_requested):
            reproduce.click()
    runs["C"].update(status="finished")
    panel.refresh()
    panel.select_ids([runs["C"].id])
    assert reproduce.isEnabled()
    assert not reproduce.toolTip().startswith("Cannot")


def test_the_current_runs_bold_cells_are_not_elided(panel, runs):
    # Issue 34 item 28: columns measured before the row turned bold cut it
    # ("sm…nn", "9…%").
    from PySide6.QtGui import QFontMetrics
    from PySide6.QtWidgets import QStyle

    table = panel.table
    for name in ("A", "B"):
        panel.set_current_run_id(runs[name].id)
        row = _row_of(panel, name)
        margin = 2 * (
            table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1
        )
        for column in range(1, table.columnCount()):
            if table.isColumnHidden(column):  # the Sweep column, with no sweep
                continue
            item = table.item(row, column)
            assert item.font().bold()
            needed = QFontMetrics(item.font()).horizontalAdvance(item.text()) + margin
            assert needed <= table.columnWidth(column), (name, column, item.text())


def test_a_long_frozen_list_leaves_both_runs_side_by_side(panel, runs):
    frozen = [f"features.{i}.block.{j}.weight" for i in range(12) for j in range(3)]
    config = dict(runs["A"].info()["config"], frozen=frozen)
    runs["A"].update(config=config)
    panel.refresh()
    panel.select_ids([runs["A"].id, runs["B"].id])
    diff = panel.diff_table
    fields = [diff.verticalHeaderItem(r).text() for r in range(diff.rowCount())]
    titles = [diff.horizontalHeaderItem(c).text() for c in range(diff.columnCount())]
    shown = diff.item(fields.index("frozen"), titles.index("A"))
    assert shown.text().startswith("36 items: features.0.block.0.weight, ")
    assert shown.text().endswith("…")
    assert len(shown.text()) <= 48
    assert json.loads(shown.toolTip()) == frozen  # whole, on hover
    # Both runs' columns fit the panel's width.
    width = sum(diff.columnWidth(c) for c in range(diff.columnCount()))
    assert width + diff.verticalHeader().width() < panel.width()


# ------------------------------------------------- "Show:": one sweep's trials


def _sweeps(runs: dict[str, RunFolder]) -> RunFolder:
    """A and B: trials 10 and 2 of study "s"; C: trial 1 of "r"; D: a plain run.

    Newest first by date is D, A, C, B: neither trial order nor the Sweep text.
    """
    for name, hour in (("A", 11), ("B", 9), ("C", 10)):
        runs[name].update(created=f"2026-12-01T{hour:02d}:00:00+00:00")
    runs["A"].update(sweep={"study": "s", "trial": 10}, best_val_accuracy=0.5)
    runs["B"].update(sweep={"study": "s", "trial": 2}, best_val_accuracy=0.9731)
    runs["C"].update(sweep={"study": "r", "trial": 1}, best_val_accuracy=None)
    plain = RunFolder.create(BASE.replace(seed=7), origin="test")
    plain.update(name="D", status="finished", created="2026-12-01T12:00:00+00:00")
    return plain


def _choose(panel: RunsPanel, text: str) -> None:
    """Pick the "Show:" entry whose text starts with ``text``, as the user would."""
    combo = panel.group_combo
    texts = [combo.itemText(i) for i in range(combo.count())]
    (index,) = [i for i, t in enumerate(texts) if t.startswith(text)]
    combo.setCurrentIndex(index)


def _entries(panel: RunsPanel) -> list[str]:
    combo = panel.group_combo
    return [combo.itemText(i) for i in range(combo.count())]


def _sorted_by_date_newest_first(panel: RunsPanel) -> bool:
    header = panel.table.horizontalHeader()
    return (header.sortIndicatorSection(), header.sortIndicatorOrder()) == (
        COLUMNS.index("Date"),
        Qt.SortOrder.DescendingOrder,
    )


def test_show_choice_is_hidden_without_sweeps_and_lists_each_sweep(panel, runs):
    combo = panel.findChild(QComboBox, "runsGroupCombo")
    assert combo is panel.group_combo
    assert combo.isHidden()  # no sweep listed: nothing to choose
    assert panel.group_label.isHidden()
    _sweeps(runs)
    panel.refresh()
    assert combo.isVisible()
    assert panel.group_label.isVisible()
    assert panel.group_label.text() == "Show:"
    assert "sweep" in combo.toolTip()
    assert _entries(panel) == [
        "All runs",
        "Runs outside sweeps",
        "Sweep r: 1 trial, best —",
        "Sweep s: 2 trials, best 97.31%",
    ]
    assert [combo.itemData(i) for i in (2, 3)] == ["r", "s"]
    assert combo.currentText() == "All runs"
    assert _titles(panel) == ["D", "A", "C", "B"]
    above = combo.mapTo(panel, combo.rect().bottomLeft()).y()
    assert above <= panel.table.mapTo(panel, panel.table.rect().topLeft()).y()


def test_choosing_a_sweep_lists_only_its_trials_in_trial_order(panel, runs):
    _sweeps(runs)
    panel.refresh()
    _choose(panel, "Sweep s")
    assert _titles(panel) == ["B", "A"]  # trial 2, then trial 10
    sweep = COLUMNS.index("Sweep")
    assert [panel.table.item(r, sweep).text() for r in range(2)] == ["s #2", "s #10"]
    _choose(panel, "Sweep r")
    assert _titles(panel) == ["C"]
    _choose(panel, "Runs outside sweeps")
    assert _titles(panel) == ["D"]
    _choose(panel, "Sweep s")
    _choose(panel, "All runs")
    assert _titles(panel) == ["D", "A", "C", "B"]  # sorted as before the sweep
    assert _sorted_by_date_newest_first(panel)


def test_the_chosen_sweep_survives_a_refresh_and_falls_back_when_it_goes(
    qtbot, panel, runs
):
    _sweeps(runs)
    panel.refresh()
    _choose(panel, "Sweep s")
    # A new trial of s and a plain run appear; a trial's accuracy changes.
    trial = RunFolder.create(BASE.replace(seed=8), origin="test")
    trial.update(name="E", status="finished", sweep={"study": "s", "trial": 5})
    RunFolder.create(BASE.replace(seed=9), origin="test").update(name="F")
    runs["A"].update(best_val_accuracy=0.99)
    panel.refresh()
    assert panel.group_combo.currentData() == "s"
    assert panel.group_combo.currentText() == "Sweep s: 3 trials, best 99.00%"
    assert _titles(panel) == ["B", "E", "A"]
    # The sweep's folders are deleted (outside the window): every run again.
    for folder in (runs["A"], runs["B"], trial):
        shutil.rmtree(folder.path)
    qtbot.waitUntil(
        lambda: panel.group_combo.currentText() == "All runs", timeout=5_000
    )
    assert sorted(_titles(panel)) == ["C", "D", "F"]
    assert _entries(panel) == [
        "All runs",
        "Runs outside sweeps",
        "Sweep r: 1 trial, best —",
    ]
    assert _sorted_by_date_newest_first(panel)


def test_only_shown_runs_are_selected_and_the_selection_is_kept_by_id(
    qtbot, panel, runs
):
    _sweeps(runs)
    panel.refresh()
    panel.set_current_run_id(runs["A"].id)
    panel.select_ids([runs["A"].id, runs["C"].id])
    with qtbot.waitSignal(panel.overlay_changed) as blocker:
        _choose(panel, "Sweep s")
    assert [r.title for r in blocker.args[0]] == ["A"]  # C is not listed now
    assert [r.title for r in panel.selected_runs()] == ["A"]
    assert panel.diff_label.text() == "Config of A"
    assert panel.reproduce_button.isEnabled()
    assert panel.table.item(_row_of(panel, "A"), 0).font().bold()  # the live run
    panel.select_ids([runs["C"].id])  # not listed: nothing to select
    assert panel.selected_runs() == []
    panel.select_ids([runs["B"].id])
    _choose(panel, "All runs")
    assert [r.title for r in panel.selected_runs()] == ["B"]
    assert panel.open_button.isEnabled()
    _choose(panel, "Runs outside sweeps")
    assert panel.selected_runs() == []
    assert not panel.reproduce_button.isEnabled()
