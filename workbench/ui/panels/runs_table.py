"""The Runs tab's table: one row per run, sortable by value, every column in view.

:class:`RunsTable` shows :class:`~workbench.core.runs.listing.RunSummary` lines. It
sorts dates, accuracies and durations by value (a hidden key), not by their
text; it keeps the short columns as narrow as their contents and lets the run's
name take the rest (elided in the middle, the full id in a tooltip), so every
column is in view without scrolling sideways; and its sort arrow points the way
the rows run (down: newest first).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from PySide6.QtCore import QPointF, Qt, Slot
from PySide6.QtGui import QPainter, QPolygonF
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QProxyStyle,
    QStyle,
    QStyleOption,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from workbench.core.runs.listing import RunSummary
from workbench.ui.formatting import duration, local_time

# Header text, and its tooltip (the full meaning of a short header).
HEADERS = (
    ("Run", "The run's name, else the time its id begins with (tooltip: the id)"),
    ("Date", "When the run began (local time)"),
    ("Dataset", "The dataset it trained on"),
    ("Model", "The architecture"),
    ("Best", "Best validation accuracy of any epoch"),
    (
        "Took",
        "From Start to the end, without pauses; in brackets the part spent "
        "preparing (loading data, building the model, the feature cache)",
    ),
    (
        "Status",
        "How the run ended: finished, stopped, running, failed...; "
        "finished early: early stopping ended it (tooltip: why); "
        "\u00d7N: it trained on N processes (Processes, --nproc)",
    ),
    ("Tags", "Your tags (Tags…)"),
    (
        "Sweep",
        "The sweep it is a trial of, and the trial's number (Run ▸ Sweep…), or "
        "the cross-validation fold it trained (train --folds; tooltip: the "
        "group); sort by it to see a sweep's trials or a group's folds "
        "together, in order",
    ),
)
COLUMNS = tuple(text for text, _ in HEADERS)
DATE_COLUMN = 1
STATUS_COLUMN = 6
SWEEP_COLUMN = 8
_NUMERIC = (4, 5)
# Columns whose contents can be long: no wider than this, the rest elided.
_MAX_WIDTH = {2: 110, 3: 100, 6: 90, 7: 90, SWEEP_COLUMN: 100}
# Column widths come from this many rows (the visible ones first), not all.
_MEASURED_ROWS = 100
_ID_ROLE = Qt.ItemDataRole.UserRole
_SORT_ROLE = Qt.ItemDataRole.UserRole + 1


class _SortableItem(QTableWidgetItem):
    """A cell that sorts by a hidden key (numbers), not by its text ("98.7%")."""

    def __lt__(self, other: QTableWidgetItem) -> bool:
        mine, theirs = self.data(_SORT_ROLE), other.data(_SORT_ROLE)
        if mine is None or theirs is None:
            return super().__lt__(other)
        return bool(mine < theirs)


class _SortArrowStyle(QProxyStyle):
    """Draws the header's sort arrow pointing the way the rows run.

    Qt hands a style ``SortUp`` for a *descending* sort and Fusion draws that
    as an up arrow, which reads as "ascending" when the newest run is on top.
    Here the arrow follows the header's order itself: up for ascending (the
    smallest, oldest first), down for descending (newest first), on any style.
    """

    def drawPrimitive(
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        """Our own arrow for header sections; everything else as the base style."""
        if element != QStyle.PrimitiveElement.PE_IndicatorHeaderArrow or not (
            isinstance(widget, QHeaderView)
        ):
            super().drawPrimitive(element, option, painter, widget)
            return
        rect = option.rect  # type: ignore[attr-defined]
        size = min(rect.width(), rect.height(), 9)
        cx, cy, half = rect.center().x() + 0.5, rect.center().y() + 0.5, size / 2
        top, bottom = cy - half / 2 - 0.5, cy + half / 2 + 0.5
        if widget.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder:
            points = [(cx - half, bottom), (cx + half, bottom), (cx, top)]
        else:
            points = [(cx - half, top), (cx + half, top), (cx, bottom)]
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(option.palette.windowText())  # type: ignore[attr-defined]
        painter.drawPolygon(QPolygonF([QPointF(x, y) for x, y in points]))
        painter.restore()


def _timestamp(iso: str) -> float:
    """Seconds since the epoch, for sorting (times in other zones compare right)."""
    try:
        return datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return 0.0


def short_title(run: RunSummary) -> str:
    """The run's name, else the start of its id: the time stamp, a usable prefix.

    ``20261201-120011-fashion-mnist-small-cnn-ee9c`` shows as
    ``20261201-120011`` (dataset and model have columns of their own); the
    row's tooltip holds the whole id.
    """
    if run.name:
        return run.name
    stamp, middle, _suffix = run.id.partition(f"-{run.dataset}-{run.model}-")
    return stamp if middle else run.id


def status_text(run: RunSummary) -> str:
    """How the run ended ("early": early stopping ended it), "times N" for N
    processes."""
    times = "\u00d7"  # the multiplication sign
    status = f"{run.status} early" if run.early_stop else run.status
    return status if run.world_size <= 1 else f"{status} {times}{run.world_size}"


def time_text(run: RunSummary) -> str:
    """Start to end, the preparation (data, model, feature cache) said apart."""
    total = duration(run.seconds + run.prepare_seconds)
    if run.prepare_seconds < 1:
        return total
    return f"{total} ({duration(run.prepare_seconds)} prep)"


def _cells(run: RunSummary) -> list[tuple[str, Any]]:
    """Each column's text and sort key (None: sort by the text)."""
    best = run.best_val_accuracy
    return [
        (short_title(run), run.title.lower()),
        (local_time(run.created), _timestamp(run.created)),
        (run.dataset, None),
        (run.model, None),
        (
            f"{100 * best:.2f}%" if best is not None else "—",
            best if best is not None else -1.0,
        ),
        (time_text(run), run.seconds + run.prepare_seconds),
        (status_text(run), None),
        (", ".join(run.tags), None),
        (group_text(run), _group_key(run)),
    ]


def group_text(run: RunSummary) -> str:
    """The Sweep column: ``"s #7"`` for a trial, ``"fold 2 of 5"`` for a fold run."""
    return ", ".join(label for label in (run.sweep, run.fold) if label)


def _group_key(run: RunSummary) -> str:
    """Trials by study and number, then fold runs by group and fold."""
    if run.sweep or not run.fold:
        return _sweep_key(run.sweep)
    number = run.fold.split(" ")[1] if run.fold.startswith("fold ") else ""
    return _sweep_key(f"{run.fold_group} #{number}")


def _group_header(runs: list[RunSummary]) -> str:
    """The Sweep column's header for what it holds: trials, folds or both."""
    sweeps, folds = any(r.sweep for r in runs), any(r.fold for r in runs)
    return "Sweep / fold" if sweeps and folds else "Fold" if folds else "Sweep"


def _sweep_key(label: str) -> str:
    """``"study #7"`` sorts as ``"study #000007"``: a sweep's trials in order."""
    study, _, number = label.rpartition(" #")
    return f"{study} #{int(number):06d}" if number.isdigit() else label


class RunsTable(QTableWidget):
    """The runs, one per row (id in the first cell), newest first."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setObjectName("runsTable")
        self._runs: list[RunSummary] = []
        self._current_id: str | None = None
        for column, (text, tip) in enumerate(HEADERS):
            item = QTableWidgetItem(text)
            item.setToolTip(tip)
            self.setHorizontalHeaderItem(column, item)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # id: date ... suffix
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        self._arrow_style = _SortArrowStyle()
        self._arrow_style.setParent(header)
        header.setStyle(self._arrow_style)
        # Measured once per fill, not per cell: ResizeToContents re-measured the
        # whole column at every setItem (83 s for 300 runs).
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(36)
        header.setResizeContentsPrecision(_MEASURED_ROWS)
        header.sortIndicatorChanged.connect(self._on_header_sort_indicator_changed)
        self.setSortingEnabled(True)
        self.sortByColumn(DATE_COLUMN, Qt.SortOrder.DescendingOrder)  # newest first

    def runs(self) -> list[RunSummary]:
        """The runs shown, in the order they were given."""
        return list(self._runs)

    def run_id(self, row: int) -> str | None:
        """The id of the run in ``row`` (as shown now)."""
        item = self.item(row, 0)
        return None if item is None else item.data(_ID_ROLE)

    def selected_ids(self) -> list[str]:
        """The selected runs' ids, top to bottom."""
        rows = sorted({index.row() for index in self.selectedIndexes()})
        return [i for i in map(self.run_id, rows) if i is not None]

    def show_runs(self, runs: list[RunSummary]) -> bool:
        """Show ``runs`` (sorted as the header says); False when nothing changed.

        The same runs with new contents (the live run's best accuracy after an
        epoch) update their rows in place; other changes rebuild the table.
        """
        if runs == self._runs:
            return False
        same_runs = [r.id for r in runs] == [r.id for r in self._runs]
        pairs = zip(runs, self._runs, strict=False)
        changed = {new.id: new for new, old in pairs if new != old}
        self._runs = list(runs)
        # Sorting while inserting would move rows under the loop's feet.
        self.setSortingEnabled(False)
        if same_runs:
            for row in range(self.rowCount()):
                run = changed.get(self.run_id(row) or "")
                if run is not None:
                    self._set_row(row, run)
        else:
            self.clearSelection()
            self.setRowCount(len(runs))
            for row, run in enumerate(runs):
                self._set_row(row, run)
        self.setSortingEnabled(True)
        # The Sweep column only once a sweep's trials or a cross-validation's
        # folds are listed: room for names.
        self.setColumnHidden(SWEEP_COLUMN, not any(r.sweep or r.fold for r in runs))
        self.horizontalHeaderItem(SWEEP_COLUMN).setText(_group_header(runs))
        self.mark_current(self._current_id, force=True)  # bold first, then measured
        return True

    def _set_row(self, row: int, run: RunSummary) -> None:
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        for column, (text, key) in enumerate(_cells(run)):
            item = _SortableItem(text)
            if key is not None:
                item.setData(_SORT_ROLE, key)
            if column in _NUMERIC:
                item.setTextAlignment(right)
            if column in _MAX_WIDTH and text:
                item.setToolTip(text)  # it may be elided
            self.setItem(row, column, item)
        if run.early_stop:
            self.item(row, STATUS_COLUMN).setToolTip(f"Stopped early {run.early_stop}")
        if run.fold:  # "fold 2 of 5" alone does not say of which group
            tip = f"Cross-validation {run.fold_group}, {group_text(run)}"
            self.item(row, SWEEP_COLUMN).setToolTip(tip)
        first = self.item(row, 0)
        first.setData(_ID_ROLE, run.id)
        first.setToolTip(f"{run.title}\n{run.id}\n{run.folder.path}")
        if run.problem:  # every cell says why: the row has little else to show
            tip = (
                f"Damaged: {run.problem}\n{run.folder.path}\n"
                "Its files are left as they are."
            )
            for column in range(self.columnCount()):
                self.item(row, column).setToolTip(tip)

    def select_ids(self, ids: Iterable[str]) -> None:
        """Select the rows of these runs (others deselected)."""
        wanted = set(ids)
        self.clearSelection()
        model = self.selectionModel()
        current = False
        for row in range(self.rowCount()):
            if self.run_id(row) not in wanted:
                continue
            index = self.model().index(row, 0)
            model.select(index, model.SelectionFlag.Select | model.SelectionFlag.Rows)
            if not current:  # the focus frame and Shift+click start here
                model.setCurrentIndex(index, model.SelectionFlag.NoUpdate)
                current = True

    def mark_current(self, run_id: str | None, *, force: bool = False) -> None:
        """Bold the row of the run the window trains (None: no live run)."""
        if run_id == self._current_id and not force:
            return
        self._current_id = run_id
        for row in range(self.rowCount()):
            first = self.item(row, 0)
            live = first is not None and first.data(_ID_ROLE) == run_id
            if first is None or first.font().bold() == live:
                continue
            for column in range(self.columnCount()):
                item = self.item(row, column)
                if item is not None:
                    font = item.font()
                    font.setBold(live)
                    item.setFont(font)
        self._fit_columns()  # bold text is wider: its cells must not be elided

    def current_row(self) -> int | None:
        """The row of the run the window trains, if it is listed."""
        for row in range(self.rowCount()):
            if self._current_id is not None and self.run_id(row) == self._current_id:
                return row
        return None

    def cell_width(self, row: int, column: int) -> int:
        """The width the cell's text needs, unelided, in its own font."""
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        index = self.model().index(row, column)
        return self.itemDelegate().sizeHint(option, index).width() + 1  # the grid

    def _fit_columns(self) -> None:
        """Short columns as wide as their contents (capped); the name takes the rest."""
        header = self.horizontalHeader()
        live = self.current_row()
        for column in range(1, self.columnCount()):
            if self.isColumnHidden(column):
                continue
            self.resizeColumnToContents(column)
            if live is not None:  # perhaps past the rows measured
                wanted = self.cell_width(live, column)
                header.resizeSection(column, max(header.sectionSize(column), wanted))
            cap = _MAX_WIDTH.get(column)
            if cap is not None and header.sectionSize(column) > cap:
                header.resizeSection(column, cap)

    @Slot(int, Qt.SortOrder)
    def _on_header_sort_indicator_changed(
        self, column: int, order: Qt.SortOrder
    ) -> None:
        descending = order == Qt.SortOrder.DescendingOrder
        if column == DATE_COLUMN:
            how = "newest first" if descending else "oldest first"
        else:
            how = "descending" if descending else "ascending"
        for c, (_, tip) in enumerate(HEADERS):
            item = self.horizontalHeaderItem(c)
            if item is not None:
                sorted_by = f"\nSorted by this column, {how}" if c == column else ""
                item.setToolTip(tip + sorted_by)
