"""The "Runs" tab: every run folder, renamed, tagged, compared and deleted here.

A sortable table of :func:`~workbench.core.runs.list_runs`; selecting runs
(Ctrl/Shift for several) emits :attr:`RunsPanel.overlay_changed` so the window
can draw them over its live plots, and fills a table of the config fields in
which they differ (one run: its whole config). The panel only edits run folders;
reproducing a run or opening its checkpoint is the window's job, asked for with
:attr:`RunsPanel.reproduce_requested` and :attr:`RunsPanel.open_requested`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtGui import QKeyEvent
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

from workbench.core.runs import (
    RunSummary,
    config_differences,
    delete_run,
    list_runs,
    rename_run,
    runs_dir,
    tag_run,
)
from workbench.ui import dialogs
from workbench.ui.formatting import duration

COLUMNS = ("Run", "Date", "Dataset", "Model", "Best val", "Duration", "Status", "Tags")
_ID_ROLE = Qt.ItemDataRole.UserRole
_SORT_ROLE = Qt.ItemDataRole.UserRole + 1


class _SortableItem(QTableWidgetItem):
    """A cell that sorts by a hidden key (numbers), not by its text ("98.7%")."""

    def __lt__(self, other: QTableWidgetItem) -> bool:
        mine, theirs = self.data(_SORT_ROLE), other.data(_SORT_ROLE)
        if mine is None or theirs is None:
            return super().__lt__(other)
        return mine < theirs


def local_time(iso: str) -> str:
    """An ISO time as local ``YYYY-MM-DD HH:MM`` (the text itself if unparsable)."""
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    return when.astimezone().strftime("%Y-%m-%d %H:%M")


def _value_text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    return json.dumps(value)


class RunsPanel(QWidget):
    """The list of runs with rename, tag, delete, reproduce, open and compare."""

    overlay_changed = Signal(list)
    reproduce_requested = Signal(object)
    open_requested = Signal(object)
    tensorboard_changed = Signal(bool)  # the user ticked or unticked the option

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runsPanel")
        self._runs: dict[str, RunSummary] = {}
        self._current_id: str | None = None
        self._busy = False
        self._emitted: list[RunSummary] = []
        self._filling = False
        self._build()
        self.refresh()

    def _build(self) -> None:
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("runsTable")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(1, Qt.SortOrder.DescendingOrder)  # newest first
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)  # Tags: free text, takes the rest
        self.table.itemSelectionChanged.connect(self._on_table_selection_changed)
        self.table.itemDoubleClicked.connect(self._on_table_double_clicked)
        self.table.installEventFilter(self)

        self.rename_button = self._button("Rename…", "renameRunButton")
        self.rename_button.clicked.connect(self._on_rename_clicked)
        self.tag_button = self._button("Tags…", "tagRunButton")
        self.tag_button.clicked.connect(self._on_tag_clicked)
        self.delete_button = self._button("Delete…", "deleteRunButton")
        self.delete_button.clicked.connect(self._on_delete_clicked)
        self.reproduce_button = self._button("Reproduce", "reproduceRunButton")
        self.reproduce_button.setToolTip(
            "Train the selected finished run again with its config and compare"
        )
        self.reproduce_button.clicked.connect(self._on_reproduce_clicked)
        self.open_button = self._button("Open checkpoint", "openRunButton")
        self.open_button.clicked.connect(self._on_open_clicked)
        self.refresh_button = self._button("Refresh", "refreshRunsButton")
        self.refresh_button.clicked.connect(self.refresh)

        buttons = QHBoxLayout()
        for button in (
            self.rename_button,
            self.tag_button,
            self.delete_button,
            self.reproduce_button,
            self.open_button,
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
        """Read the runs folder again, keeping the selection (by id)."""
        selected = [r.id for r in self.selected_runs()]
        runs = list_runs()
        self._runs = {r.id: r for r in runs}
        self._filling = True
        try:
            self._fill(runs)
            self._select(selected)
        finally:
            self._filling = False
        self.table.setToolTip(f"Runs in {runs_dir()}")
        self._selection_changed()

    def selected_runs(self) -> list[RunSummary]:
        """The selected runs, in table order.

        Returns
        -------
        list[RunSummary]
            Empty when nothing is selected.
        """
        rows = sorted({index.row() for index in self.table.selectedIndexes()})
        runs = []
        for row in rows:
            item = self.table.item(row, 0)
            run = self._runs.get(item.data(_ID_ROLE)) if item else None
            if run is not None:
                runs.append(run)
        return runs

    def select_ids(self, ids: Iterable[str]) -> None:
        """Select the runs with these ids (others are deselected).

        Parameters
        ----------
        ids : Iterable[str]
            Run ids; unknown ones are ignored.
        """
        self._filling = True
        try:
            self._select(list(ids))
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
        self._mark_current()
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

    def _fill(self, runs: list[RunSummary]) -> None:
        # Sorting while inserting would move rows under the loop's feet.
        self.table.setSortingEnabled(False)
        self.table.clearSelection()
        self.table.setRowCount(len(runs))
        for row, run in enumerate(runs):
            best = run.best_val_accuracy
            cells: list[tuple[str, Any]] = [
                (run.title, run.title.lower()),
                (local_time(run.created), run.created),
                (run.dataset, None),
                (run.model, None),
                (
                    f"{100 * best:.2f}%" if best is not None else "—",
                    best if best is not None else -1.0,
                ),
                (duration(run.seconds), run.seconds),
                (run.status, None),
                (", ".join(run.tags), None),
            ]
            for column, (text, key) in enumerate(cells):
                item = _SortableItem(text)
                if key is not None:
                    item.setData(_SORT_ROLE, key)
                if column in (4, 5):
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(row, column, item)
            first = self.table.item(row, 0)
            first.setData(_ID_ROLE, run.id)
            first.setToolTip(f"{run.id}\n{run.folder.path}")
        self.table.setSortingEnabled(True)
        self._mark_current()

    def _select(self, ids: list[str]) -> None:
        wanted = set(ids)
        self.table.clearSelection()
        model = self.table.selectionModel()
        current = False
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if item is None or item.data(_ID_ROLE) not in wanted:
                continue
            index = self.table.model().index(row, 0)
            model.select(index, model.SelectionFlag.Select | model.SelectionFlag.Rows)
            if not current:  # the focus frame and Shift+click start here
                model.setCurrentIndex(index, model.SelectionFlag.NoUpdate)
                current = True

    def _mark_current(self) -> None:
        for row in range(self.table.rowCount()):
            first = self.table.item(row, 0)
            live = first is not None and first.data(_ID_ROLE) == self._current_id
            for column in range(self.table.columnCount()):
                item = self.table.item(row, column)
                if item is not None and item.font().bold() != live:
                    font = item.font()
                    font.setBold(live)
                    item.setFont(font)

    def _selection_changed(self) -> None:
        runs = self.selected_runs()
        self._update_buttons()
        self._update_diff(runs)
        if runs != self._emitted:
            self._emitted = runs
            self.overlay_changed.emit(runs)

    def _update_buttons(self) -> None:
        runs = self.selected_runs()
        one = runs[0] if len(runs) == 1 else None
        live = self._busy and any(r.id == self._current_id for r in runs)
        # The trainer rewrites the live run's run.json: a rename could be lost.
        self.rename_button.setEnabled(one is not None and not live)
        self.tag_button.setEnabled(bool(runs) and not live)
        self.delete_button.setEnabled(bool(runs) and not self._busy)
        self.reproduce_button.setEnabled(
            one is not None and one.status == "finished" and not self._busy
        )
        self.open_button.setEnabled(
            one is not None and one.folder.checkpoint_path.is_file() and not self._busy
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
        table.setColumnCount(len(runs))
        table.setRowCount(len(fields))
        table.setHorizontalHeaderLabels([r.title for r in runs])
        table.setVerticalHeaderLabels(list(fields))
        for row, values in enumerate(fields.values()):
            for column, value in enumerate(values):
                table.setItem(row, column, QTableWidgetItem(_value_text(value)))

    # ------------------------------------------------------------------ handlers

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
        if len(runs) == 1 and runs[0].status == "finished" and not self._busy:
            self.reproduce_requested.emit(runs[0])

    @Slot()
    def _on_open_clicked(self) -> None:
        runs = self.selected_runs()
        if len(runs) == 1 and runs[0].folder.checkpoint_path.is_file():
            self.open_requested.emit(runs[0])
