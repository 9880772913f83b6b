"""The "Runs" tab: every run folder, renamed, tagged, compared and deleted here.

A sortable table of :func:`~workbench.core.runs.listing.list_runs`; selecting runs
(Ctrl/Shift for several) emits :attr:`RunsPanel.overlay_changed` so the window
can draw them over its live plots, and fills a table of their macro and
weighted F1 and the config fields in which they differ (one run: its whole
config). "Show:" above the table narrows the list to one sweep's trials, one
cross-validation's folds (with their scores across folds under it) or the runs
outside them (:mod:`.runs_groups`, :mod:`.runs_folds`).
The panel only edits run folders; reproducing a run or opening its checkpoint is
the window's job, asked for with :attr:`RunsPanel.reproduce_requested` and
:attr:`RunsPanel.open_requested`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QFileSystemWatcher, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from workbench.core.runs.best_or_latest import which_weights
from workbench.core.runs.compare import config_differences, score_rows
from workbench.core.runs.folder import delete_run, rename_run, runs_dir, tag_run
from workbench.core.runs.index import RunIndex
from workbench.core.runs.listing import RunSummary
from workbench.core.runs.reproduce import reproducible
from workbench.ui import dialogs
from workbench.ui.formatting import duration, local_time
from workbench.ui.panels.runs_folds import FoldGroupSummary, GroupRecord, read_groups
from workbench.ui.panels.runs_groups import RunGroupCombo, filter_runs, in_own_order
from workbench.ui.panels.runs_table import COLUMNS, SWEEP_COLUMN, RunsTable

__all__ = ["COLUMNS", "RunsPanel", "duration", "local_time"]

# Changes on disk come in bursts (a new run writes several files): list once.
REFRESH_DELAY_MS = 250
REPRODUCE_TIP = "Train the selected finished run again with its config and compare"
NO_BEST_TIP = (
    "Open the run's best epoch (best.pt); runs from before it was kept, and "
    "runs without autosave, have only their latest checkpoint"
)


def best_tip(run: RunSummary) -> str:
    """What "Open best" opens: the epoch and its value, from run.json."""
    info = run.folder.info()
    best = info.get("best_epoch")
    epoch = best.get("epoch") if isinstance(best, dict) else None
    which = which_weights(run.folder.best_path, epoch, info)
    return f"Open the run's best epoch (best.pt): {which}"


SCORE_TIP = (
    "F1 of the run's last validation, averaged over the classes: macro counts "
    "every class the same, weighted each by its images (the Evaluation tab has "
    "each class's)"
)


# A config value longer than this is shortened in the comparison (whole in its
# tooltip): a long frozen-layer list pushed the other runs off the screen.
SHOWN_CHARS = 48


def _value_text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _shown_value(value: Any) -> str:
    """The value as the comparison shows it: a long list by its count and start."""
    text = _value_text(value)
    if len(text) <= SHOWN_CHARS:
        return text
    if isinstance(value, list):
        head = f"{len(value)} items: "
        room = SHOWN_CHARS - len(head) - 1
        return head + ", ".join(map(str, value))[:room].rstrip(", ") + "…"
    return text[: SHOWN_CHARS - 1] + "…"


class RunsPanel(QWidget):
    """The list of runs with rename, tag, delete, reproduce, open and compare."""

    overlay_changed = Signal(list)
    reproduce_requested = Signal(object)
    open_requested = Signal(object)
    open_best_requested = Signal(object)  # the run's best epoch (best.pt)
    tensorboard_changed = Signal(bool)  # the user ticked or unticked the option

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runsPanel")
        self._runs: dict[str, RunSummary] = {}
        self._index = RunIndex()
        self._current_id: str | None = None
        self._busy = False
        self._emitted: list[RunSummary] = []
        self._filling = False
        self._damage_shown = False  # the message line tells of damaged runs
        # The header's sort before a sweep was chosen: back to it after the sweep.
        self._sort_before_sweep: tuple[int, Qt.SortOrder] | None = None
        # Folders appearing or going (another process's run, a deletion) and
        # the run.json of running runs: the list follows without Refresh.
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._on_watcher_directory_changed)
        self._refresh_timer = QTimer(self, singleShot=True, interval=REFRESH_DELAY_MS)
        self._refresh_timer.timeout.connect(self._on_refresh_timer_timeout)
        self._build()
        self.refresh()

    def _build(self) -> None:
        self.table = RunsTable()
        self.table.itemSelectionChanged.connect(self._on_table_selection_changed)
        self.table.itemDoubleClicked.connect(self._on_table_double_clicked)
        self.table.installEventFilter(self)
        self.group_combo = RunGroupCombo()
        self.group_combo.currentIndexChanged.connect(self._on_group_combo_changed)
        self.group_label = QLabel("Show:")
        self.group_label.setBuddy(self.group_combo)
        groups = QHBoxLayout()
        groups.addWidget(self.group_label)
        groups.addWidget(self.group_combo)
        groups.addStretch(1)
        self.fold_summary = FoldGroupSummary()  # the chosen cross-validation's scores

        self.rename_button = self._button("Rename…", "renameRunButton")
        self.rename_button.clicked.connect(self._on_rename_clicked)
        self.tag_button = self._button("Tags…", "tagRunButton")
        self.tag_button.clicked.connect(self._on_tag_clicked)
        self.delete_button = self._button("Delete…", "deleteRunButton")
        self.delete_button.clicked.connect(self._on_delete_clicked)
        self.reproduce_button = self._button("Reproduce", "reproduceRunButton")
        self.reproduce_button.setToolTip(REPRODUCE_TIP)
        self.reproduce_button.clicked.connect(self._on_reproduce_clicked)
        self.open_button = self._button("Open checkpoint", "openRunButton")
        self.open_button.clicked.connect(self._on_open_clicked)
        self.open_best_button = self._button("Open best", "openBestRunButton")
        self.open_best_button.clicked.connect(self._on_open_best_clicked)
        self.refresh_button = self._button("Refresh", "refreshRunsButton")
        self.refresh_button.clicked.connect(self.refresh)

        buttons = QHBoxLayout()
        for button in (
            self.rename_button,
            self.tag_button,
            self.delete_button,
            self.reproduce_button,
            self.open_button,
            self.open_best_button,
        ):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.refresh_button)

        self.message_label = QLabel()
        self.message_label.setObjectName("runsMessage")
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
        )
        self.message_label.setVisible(False)
        self.tensorboard_check = QCheckBox(
            "Also write TensorBoard event files (new runs)"
        )
        self.tensorboard_check.setObjectName("tensorboardCheck")
        self.tensorboard_check.setToolTip(
            "Scalars under <run folder>/tensorboard; needs the tensorboard package"
        )
        self.tensorboard_check.toggled.connect(self.tensorboard_changed)

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addLayout(groups)
        top_layout.addWidget(self.fold_summary)
        top_layout.addWidget(self.table, 1)
        top_layout.addLayout(buttons)
        top_layout.addWidget(self.message_label)
        top_layout.addWidget(self.tensorboard_check)

        self.diff_label = QLabel()
        self.diff_label.setObjectName("runDiffLabel")
        self.diff_table = QTableWidget(0, 0)
        self.diff_table.setObjectName("runDiffTable")
        self.diff_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.diff_table.setWordWrap(False)
        diff_header = self.diff_table.horizontalHeader()
        diff_header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        diff_header.setMinimumSectionSize(110)  # runs side by side, equally wide
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addWidget(self.diff_label)
        bottom_layout.addWidget(self.diff_table, 1)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setObjectName("runsSplitter")
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(top)
        splitter.addWidget(bottom)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

    def _button(self, text: str, name: str) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        return button

    # ------------------------------------------------------------------ public

    @Slot()
    def refresh(self) -> None:
        """Read the runs folder again, keeping the selection (by id).

        Only the ``run.json`` files that changed since the last look are read,
        and the table is rebuilt only when a run changed. The table lists the
        runs "Show:" chooses; a chosen sweep whose runs are gone: all runs.
        """
        self._refresh_timer.stop()
        root = runs_dir()
        runs = self._index.runs(root)
        self._runs = {r.id: r for r in runs}
        groups = read_groups(runs, root)  # each group.json once per refresh
        self._show_groups(runs, groups)
        selected = self.table.selected_ids()
        self._filling = True
        try:
            if self.table.show_runs(filter_runs(runs, self.group_combo.choice())):
                self.table.select_ids(selected)
        finally:
            self._filling = False
        self.table.setToolTip(f"Runs in {root}")
        self._watch(root, runs, groups)
        self._selection_changed()

    def selected_runs(self) -> list[RunSummary]:
        """The selected runs, in table order.

        Returns
        -------
        list[RunSummary]
            Empty when nothing is selected.
        """
        found = (self._runs.get(i) for i in self.table.selected_ids())
        return [run for run in found if run is not None]

    def select_ids(self, ids: Iterable[str]) -> None:
        """Select the runs with these ids (others are deselected).

        Parameters
        ----------
        ids : Iterable[str]
            Run ids; unknown ones are ignored.
        """
        self._filling = True
        try:
            self.table.select_ids(ids)
        finally:
            self._filling = False
        self._selection_changed()

    def set_current_run_id(self, run_id: str | None) -> None:
        """Mark the run the window trains now (bold row); None: no live run.

        Parameters
        ----------
        run_id : str or None
            The live run's id.
        """
        self._current_id = run_id
        self.table.mark_current(run_id)
        self._update_buttons()

    def set_tensorboard(self, on: bool) -> None:
        """Show the TensorBoard preference (quietly: it is not the user's change)."""
        self.tensorboard_check.blockSignals(True)
        self.tensorboard_check.setChecked(on)
        self.tensorboard_check.blockSignals(False)

    def set_busy(self, busy: bool) -> None:
        """Disable Reproduce, Open and Delete while a run trains.

        Parameters
        ----------
        busy : bool
            True while the window trains.
        """
        self._busy = busy
        self._update_buttons()

    def show_message(self, text: str) -> None:
        """Show ``text`` under the buttons (empty hides the line).

        Parameters
        ----------
        text : str
            E.g. the verdict of a reproduced run.
        """
        self.message_label.setText(text)
        self.message_label.setVisible(bool(text))

    # ------------------------------------------------------------------ table

    def _watch(
        self, root: Path, runs: list[RunSummary], groups: dict[str, GroupRecord]
    ) -> None:
        """Watch the runs folder, the folders of runs still running and of groups
        whose folds may still finish (a fold's scores come after its run ends)."""
        running = {str(r.folder.path) for r in runs if r.status == "running"}
        running |= {str(g.path) for g in groups.values() if g.running}
        wanted = {str(root)} | running
        watched = set(self._watcher.directories())
        if watched - wanted:
            self._watcher.removePaths(sorted(watched - wanted))
        new = [p for p in sorted(wanted - watched) if Path(p).is_dir()]
        if new:
            self._watcher.addPaths(new)

    def _show_groups(
        self, runs: list[RunSummary], groups: dict[str, GroupRecord]
    ) -> None:
        """The "Show:" entries for ``runs``; the sort back if the group went."""
        chosen = self.group_combo.choice()
        self.group_combo.set_runs(runs, groups)
        self.group_label.setVisible(not self.group_combo.isHidden())
        self.fold_summary.show_group(self.group_combo.chosen_group())
        if self.group_combo.choice() != chosen:
            self._sort_for_group()

    def _sort_for_group(self) -> None:
        """A sweep's trials (a group's folds) in order; others as sorted before."""
        header = self.table.horizontalHeader()
        if in_own_order(self.group_combo.choice()):
            if self._sort_before_sweep is None:
                order = header.sortIndicatorOrder()
                self._sort_before_sweep = (header.sortIndicatorSection(), order)
            self.table.sortByColumn(SWEEP_COLUMN, Qt.SortOrder.AscendingOrder)
        elif self._sort_before_sweep is not None:
            self.table.sortByColumn(*self._sort_before_sweep)
            self._sort_before_sweep = None

    def _selection_changed(self) -> None:
        runs = self.selected_runs()
        damaged = [r for r in runs if r.problem]
        if damaged or self._damage_shown:
            self._damage_shown = bool(damaged)
            self.show_message(
                "\n".join(
                    f"{r.id} is damaged: {r.problem}. Its files are left as they "
                    "are; it cannot be renamed, tagged or reproduced."
                    for r in damaged
                )
            )
        self._update_buttons()
        self._update_diff(runs)
        if runs != self._emitted:
            self._emitted = runs
            self.overlay_changed.emit(runs)

    def _update_buttons(self) -> None:
        runs = self.selected_runs()
        one = runs[0] if len(runs) == 1 else None
        live = self._busy and any(r.id == self._current_id for r in runs)
        # The trainer rewrites the live run's run.json: a rename could be lost;
        # a damaged run.json is never rewritten.
        damaged = any(r.problem for r in runs)
        self.rename_button.setEnabled(one is not None and not live and not damaged)
        self.tag_button.setEnabled(bool(runs) and not live and not damaged)
        self.delete_button.setEnabled(bool(runs) and not self._busy)
        why_not = reproducible(one) if one is not None else None
        self.reproduce_button.setEnabled(
            one is not None and why_not is None and not self._busy
        )
        self.reproduce_button.setToolTip(
            f"Cannot reproduce: {why_not}" if why_not else REPRODUCE_TIP
        )
        self.open_button.setEnabled(
            one is not None and one.folder.checkpoint_path.is_file() and not self._busy
        )
        has_best = one is not None and one.folder.best_path.is_file()
        self.open_best_button.setEnabled(has_best and not self._busy)
        self.open_best_button.setToolTip(
            best_tip(one) if has_best and one is not None else NO_BEST_TIP
        )

    def _update_diff(self, runs: list[RunSummary]) -> None:
        table = self.diff_table
        table.clear()
        if not runs:
            fields: dict[str, list[Any]] = {}
            self.diff_label.setText("Select runs to compare their configs.")
        elif len(runs) == 1:
            config = {k: v for k, v in runs[0].config.items() if k != "schema_version"}
            fields = {k: [config[k]] for k in sorted(config)}
            self.diff_label.setText(f"Config of {runs[0].title}")
        else:
            fields = config_differences([r.config for r in runs])
            self.diff_label.setText(
                f"{len(fields)} config fields differ between the {len(runs)} runs"
                if fields
                else f"The {len(runs)} runs have the same config"
            )
        # How they scored first (always shown), then their config.
        scores = score_rows(runs)
        table.setColumnCount(len(runs))
        table.setRowCount(len(scores) + len(fields))
        table.setHorizontalHeaderLabels([r.title for r in runs])
        table.setVerticalHeaderLabels([*scores, *fields])
        for row, values in enumerate(scores.values()):
            for column, value in enumerate(values):
                text = "—" if value is None else f"{100 * value:.2f}%"
                item = QTableWidgetItem(text)
                item.setToolTip(SCORE_TIP)
                table.setItem(row, column, item)
        for row, values in enumerate(fields.values(), start=len(scores)):
            for column, value in enumerate(values):
                item = QTableWidgetItem(_shown_value(value))
                if item.text() != _value_text(value):
                    item.setToolTip(_value_text(value))
                table.setItem(row, column, item)

    # ------------------------------------------------------------------ handlers

    @Slot(str)
    def _on_watcher_directory_changed(self, _path: str) -> None:
        self._refresh_timer.start()

    @Slot()
    def _on_refresh_timer_timeout(self) -> None:
        if self.isVisible():  # a hidden tab catches up when it is shown
            self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        """The tab comes into view: list what is on disk now (a run.json changed)."""
        super().showEvent(event)
        self.refresh()

    @Slot(int)
    def _on_group_combo_changed(self, _index: int) -> None:
        self._sort_for_group()
        self.refresh()

    @Slot()
    def _on_table_selection_changed(self) -> None:
        if not self._filling:
            self._selection_changed()

    @Slot(QTableWidgetItem)
    def _on_table_double_clicked(self, _item: QTableWidgetItem) -> None:
        if self.rename_button.isEnabled():
            self._on_rename_clicked()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The Delete key on the table deletes the selected runs."""
        if (
            watched is self.table
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Delete
        ):
            if self.delete_button.isEnabled():
                self._on_delete_clicked()
            return True
        return super().eventFilter(watched, event)

    @Slot()
    def _on_rename_clicked(self) -> None:
        runs = self.selected_runs()
        if len(runs) != 1:
            return
        run = runs[0]
        name = dialogs.get_text(
            self, "Rename run", f"Name for {run.id} (empty: its id):", run.name
        )
        if name is None:
            return
        try:
            rename_run(run.folder, name)
        except OSError as exc:
            dialogs.show_error(self, "Cannot rename the run", str(exc))
        self.refresh()

    @Slot()
    def _on_tag_clicked(self) -> None:
        runs = self.selected_runs()
        if not runs:
            return
        # Several runs: start from the tags they share, and set the same on all.
        shared = set(runs[0].tags).intersection(*(r.tags for r in runs[1:]))
        what = runs[0].title if len(runs) == 1 else f"the {len(runs)} runs"
        text = dialogs.get_text(
            self,
            "Tag runs",
            f"Tags for {what}, separated by commas:",
            ", ".join(sorted(shared)),
        )
        if text is None:
            return
        tags = [t.strip() for t in text.split(",") if t.strip()]
        try:
            for run in runs:
                tag_run(run.folder, tags)
        except OSError as exc:
            dialogs.show_error(self, "Cannot tag the runs", str(exc))
        self.refresh()

    @Slot()
    def _on_delete_clicked(self) -> None:
        runs = self.selected_runs()
        if not runs or self._busy:
            return
        what = f"run {runs[0].title}" if len(runs) == 1 else f"{len(runs)} runs"
        question = (
            f"Delete {what}? Their folders go, with their metrics and checkpoints; "
            "this cannot be undone."
        )
        if not dialogs.confirm(self, "Delete runs", question):
            return
        failed = []
        for run in runs:
            try:
                delete_run(run.folder)
            except OSError as exc:
                failed.append(f"{run.folder.path}: {exc}")
        if failed:
            dialogs.show_error(
                self,
                "Cannot delete every run",
                "\n".join(failed[:5]),
                "\n".join(failed),
            )
        self.refresh()

    @Slot()
    def _on_reproduce_clicked(self) -> None:
        runs = self.selected_runs()
        if len(runs) == 1 and reproducible(runs[0]) is None and not self._busy:
            self.reproduce_requested.emit(runs[0])

    @Slot()
    def _on_open_best_clicked(self) -> None:
        runs = self.selected_runs()
        if len(runs) == 1 and runs[0].folder.best_path.is_file():
            self.open_best_requested.emit(runs[0])

    @Slot()
    def _on_open_clicked(self) -> None:
        runs = self.selected_runs()
        if len(runs) == 1 and runs[0].folder.checkpoint_path.is_file():
            self.open_requested.emit(runs[0])
