"""Data ▸ Find data issues…: the four lists, with the images, in a window.

:class:`DataIssuesDialog` shows a core
:class:`~workbench.core.data_issues.report.DataIssues`: likely label errors,
top losses, the most-confused class pairs (choosing one lists its images) and
duplicates, each in the order the core ranks them, a thumbnail per image, and
a filter on the given label, and the fixes (:class:`FixesRow`: relabel,
exclude, keep the selected rows, undo). Before the lists, it shows how far the
search is (with Cancel). The row builders below are plain functions of the issues, so
what a list holds is testable without a window.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from workbench.core.config import TrainConfig
from workbench.core.data.registry import ImageArrays
from workbench.core.data_issues.rankings import ConfusedPair
from workbench.core.data_issues.report import DataIssues
from workbench.ui.formatting import plural
from workbench.ui.issue_fixes import LIKELY, FixesRow
from workbench.ui.widgets.issue_gallery import (
    Column,
    ImageShelf,
    IssueRow,
    IssueTable,
    Thumb,
)

ALL_CLASSES = "All classes"
# Top losses listed: a share of the images, never fewer than a screenful or two.
TOP_SHARE, TOP_LEAST = 0.01, 50

_IMAGE = Column("Image", "The image as the data holds it", "image")
_FILE = Column(
    "File", "Its file in the image folder, or its place in the dataset's split"
)
_SPLIT = Column(
    "Split",
    "train: predicted by the one fold model that never trained on it\n"
    "val: predicted by every fold model, averaged",
)
_GIVEN = Column("Given label", "The label the data gives the image")
_FIX = Column(
    "Fix",
    "The fix made to the image: relabelled (→ its new class), excluded, or "
    "kept as labelled",
    "note",
)
LABEL_ERROR_COLUMNS = (
    _IMAGE,
    _FILE,
    _SPLIT,
    _GIVEN,
    Column("Likely label", "The class the held-out models confidently see instead"),
    Column(
        "Self-confidence",
        "The held-out probability of the given label: the lower, the likelier "
        "the label is wrong",
        "number",
    ),
    _FIX,
)
LOSS_COLUMNS = (
    _IMAGE,
    _FILE,
    _SPLIT,
    _GIVEN,
    Column("Predicted", "The class the held-out models find likeliest"),
    Column(
        "Loss",
        "Cross-entropy of the given label: high when the models are sure the "
        "image is something else",
        "number",
    ),
    _FIX,
)
DUPLICATE_COLUMNS = (
    _IMAGE,
    _FILE,
    _GIVEN,
    Column("Image", "The other image of the pair", "image"),
    Column("File", "The other image's file or place"),
    Column("Given label", "The other image's label"),
    Column(
        "Similarity",
        "1.000 exact: the same pixels; from 0.990: nearly the same picture (a "
        "copy resized, re-encoded or brightened)",
        "number",
    ),
    _FIX,
)
PAIR_HEADERS = {
    "Given label": "The label the data gives the images",
    "Predicted as": "The class the held-out models find likeliest for them",
    "Images": "How many images of the given label are predicted as this class",
}

TIPS = {
    "labels": "Confident learning: the images whose given label the held-out "
    "models doubt most, with the label they confidently see instead (lowest "
    "self-confidence first)",
    "losses": "The images the held-out models got most wrong, highest loss "
    "first: label errors, but also hard, odd or broken images",
    "confused": "Which given label the held-out models most often predict as "
    "which other class; choose a pair to see its images",
    "duplicates": "The same picture twice (exactly or nearly) with different "
    "labels or in both training and validation: an exact copy anywhere is listed",
}


def _keep(label: int, given_class: int | None) -> bool:
    return given_class is None or label == given_class


def _score(value: float) -> str:
    return f"{value:.3f}"


def label_error_rows(issues: DataIssues, given_class: int | None) -> list[IssueRow]:
    """The likely label errors in the core's order (of one given class)."""
    names, found = issues.class_names, issues.label_issues
    return [
        IssueRow(
            place + 1,
            (
                Thumb(int(i)),
                issues.names[i],
                str(issues.splits[i]),
                names[given],
                names[suggested],
                _score(score),
            ),
            image=int(i),
        )
        for place, (i, given, suggested, score) in enumerate(
            zip(found.index, found.given, found.suggested, found.score, strict=True)
        )
        if _keep(int(given), given_class)
    ]


def top_loss_count(issues: DataIssues) -> int:
    """How many top losses are listed: 1% of the images, at least 50."""
    return min(len(issues.names), max(TOP_LEAST, round(TOP_SHARE * len(issues.names))))


def _loss_row(issues: DataIssues, place: int, i: int) -> IssueRow:
    names = issues.class_names
    predicted = int(issues.probabilities[i].argmax())
    return IssueRow(
        place,
        (
            Thumb(i),
            issues.names[i],
            str(issues.splits[i]),
            names[issues.labels[i]],
            names[predicted],
            _score(float(issues.losses[i])),
        ),
        image=i,
    )


def top_loss_rows(
    issues: DataIssues, count: int, given_class: int | None
) -> list[IssueRow]:
    """The ``count`` highest losses (of one given class), numbered among all."""
    order = issues.top_losses(len(issues.names))
    places = np.flatnonzero(
        np.ones(len(order), bool)
        if given_class is None
        else issues.labels[order] == given_class
    )[:count]
    return [_loss_row(issues, int(p) + 1, int(order[p])) for p in places]


def pair_rows(issues: DataIssues, pair: ConfusedPair) -> list[IssueRow]:
    """The images labelled ``pair.given`` predicted ``pair.predicted``, worst first."""
    predicted = issues.probabilities.argmax(axis=1)
    order = issues.top_losses(len(issues.names))
    chosen = order[
        (issues.labels[order] == pair.given) & (predicted[order] == pair.predicted)
    ]
    return [_loss_row(issues, place + 1, int(i)) for place, i in enumerate(chosen)]


def duplicate_rows(issues: DataIssues, given_class: int | None) -> list[IssueRow]:
    """The duplicate pairs, most alike first (either image of one given class)."""
    names, labels = issues.class_names, issues.labels
    rows = []
    for place, pair in enumerate(issues.duplicates):
        a, b = pair.first, pair.second
        if not (
            _keep(int(labels[a]), given_class) or _keep(int(labels[b]), given_class)
        ):
            continue
        kind = "exact duplicate" if pair.exact else "near duplicate"
        rows.append(
            IssueRow(
                place + 1,
                (
                    Thumb(a),
                    issues.names[a],
                    names[labels[a]],
                    Thumb(b),
                    issues.names[b],
                    names[labels[b]],
                    _score(pair.similarity) + (" exact" if pair.exact else ""),
                ),
                tip=f"{kind}: {issues.names[a]} ({issues.splits[a]}) and "
                f"{issues.names[b]} ({issues.splits[b]}); a fix is of the first",
                image=int(a),
            )
        )
    return rows


def confused_pairs(issues: DataIssues, given_class: int | None) -> list[ConfusedPair]:
    """The most-confused pairs, largest first (of one given class)."""
    return [p for p in issues.confused if _keep(p.given, given_class)]


def summary_text(issues: DataIssues) -> str:
    """``1,797 images (1,437 training, 360 validation): 269 likely label errors…``."""
    train = int((issues.splits == "train").sum())
    exact = sum(pair.exact for pair in issues.duplicates)
    return (
        f"{plural(len(issues.names), 'image')} ({train:,} training, "
        f"{len(issues.names) - train:,} validation): "
        f"{plural(len(issues.label_issues.index), 'likely label error')}, "
        f"{plural(len(issues.confused), 'confused pair')} of classes, "
        f"{plural(len(issues.duplicates), 'duplicate pair')} ({exact:,} exact)."
    )


class DataIssuesDialog(QDialog):
    """How far the search is (with Cancel), then the four lists (not modal).

    ``cancel_requested`` when Cancel is pressed; the caller stops the work.
    """

    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, objectName="dataIssuesDialog")
        self.setWindowTitle("Data issues")
        self.issues: DataIssues | None = None
        self.shelf: ImageShelf | None = None
        self._pairs: list[ConfusedPair] = []
        self.summary_label = QLabel(objectName="dataIssuesSummary")
        self.summary_label.setWordWrap(True)
        font = QFont(self.summary_label.font())
        font.setBold(True)
        self.summary_label.setFont(font)
        self.summary_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
        )
        self.source_label = QLabel(objectName="dataIssuesSource")
        self.source_label.setWordWrap(True)
        self.source_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
        )
        self.progress_bar = QProgressBar(objectName="dataIssuesProgress")
        self.progress_bar.setTextVisible(False)
        self.cancel_button = QPushButton("Cancel", objectName="dataIssuesCancel")
        self.cancel_button.clicked.connect(self.cancel_requested)
        progress = QHBoxLayout()
        progress.addWidget(self.progress_bar, 1)
        progress.addWidget(self.cancel_button)

        # The row of tools over the lists: the class filter, then the fixes.
        self.fixes = FixesRow()
        self.fixes.requested.connect(self._on_fixes_requested)
        self.fixes.saved.connect(self._on_fixes_saved)
        self.class_filter = QComboBox(objectName="dataIssuesClass")
        self.class_filter.setToolTip(
            "Show only the images whose given label is this class"
        )
        self.class_filter.currentIndexChanged.connect(self._on_class_filter_changed)
        self.class_filter.setEnabled(False)
        self.tools = QHBoxLayout()
        self.tools.addWidget(QLabel("Given label:"))
        self.tools.addWidget(self.class_filter)
        self.tools.addSpacing(12)
        self.tools.addWidget(self.fixes, 1)

        self.label_errors = IssueTable(LABEL_ERROR_COLUMNS)
        self.label_errors.setObjectName("labelErrorsTable")
        self.top_losses = IssueTable(LOSS_COLUMNS)
        self.top_losses.setObjectName("topLossesTable")
        self.duplicates = IssueTable(DUPLICATE_COLUMNS)
        self.duplicates.setObjectName("duplicatesTable")
        self.pairs = self._make_pairs_table()
        self.pair_label = QLabel("Choose a pair to see its images")
        self.pair_label.setWordWrap(True)
        self.pair_images = IssueTable(LOSS_COLUMNS)
        self.pair_images.setObjectName("pairImagesTable")
        self.tabs = QTabWidget(objectName="dataIssuesTabs")
        for key, page in (
            ("labels", self.label_errors),
            ("losses", self.top_losses),
            ("confused", self._confused_page()),
            ("duplicates", self.duplicates),
        ):
            self.tabs.addTab(page, "")
            self.tabs.setTabToolTip(self.tabs.count() - 1, TIPS[key])
        self._name_tabs()
        self.tabs.setEnabled(False)
        self.fixes.setEnabled(False)
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        for table in self._tables():
            table.issues.set_notes(self._note)
            table.selectionModel().selectionChanged.connect(
                self._on_table_selection_changed
            )

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.source_label)
        layout.addLayout(progress)
        layout.addLayout(self.tools)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)
        self.resize(900, 640)

    def _make_pairs_table(self) -> QTableWidget:
        table = QTableWidget(0, len(PAIR_HEADERS), objectName="confusedPairsTable")
        table.setHorizontalHeaderLabels(list(PAIR_HEADERS))
        for column, tip in enumerate(PAIR_HEADERS.values()):
            table.horizontalHeaderItem(column).setToolTip(tip)
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        table.itemSelectionChanged.connect(self._on_pairs_selection_changed)
        return table

    def _confused_page(self) -> QWidget:
        images = QWidget()
        column = QVBoxLayout(images)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.pair_label)
        column.addWidget(self.pair_images, 1)
        page = QSplitter(Qt.Orientation.Horizontal)
        page.addWidget(self.pairs)
        page.addWidget(images)
        page.setChildrenCollapsible(False)
        page.setSizes([280, 620])
        return page

    def _name_tabs(self, counts: tuple[int, ...] | None = None) -> None:
        titles = ("Likely label errors", "Top losses", "Most-confused pairs")
        titles += ("Duplicates",)
        for tab, title in enumerate(titles):
            shown = f"{title} ({counts[tab]:,})" if counts is not None else title
            self.tabs.setTabText(tab, shown)

    # ------------------------------------------------------------------ states

    def show_progress(self, text: str, source: str = "") -> None:
        """Busy: ``text`` says what runs now; Cancel stops it."""
        self.summary_label.setText(text)
        self.source_label.setText(source)
        self.source_label.setVisible(bool(source))
        self.progress_bar.setRange(0, 0)
        for widget in (self.progress_bar, self.cancel_button):
            widget.setVisible(True)
        self.cancel_button.setEnabled(True)
        self.tabs.setEnabled(False)  # the lists shown are the last pass's
        self.class_filter.setEnabled(False)
        self.fixes.setEnabled(False)

    def show_message(self, text: str) -> None:
        """The search ended without lists (cancelled, declined, failed)."""
        self.summary_label.setText(text)
        self.source_label.setVisible(False)
        self._hide_progress()

    def _hide_progress(self) -> None:
        for widget in (self.progress_bar, self.cancel_button):
            widget.setVisible(False)

    def show_issues(
        self,
        issues: DataIssues,
        arrays: ImageArrays,
        source: str,
        config: TrainConfig | None = None,
    ) -> None:
        """The lists of ``issues``; ``arrays`` hold their images (training first).

        ``config``: the settings of the pass, whose dataset the fixes are for
        (None: no fixes).
        """
        self.issues = issues
        self.shelf = ImageShelf(arrays)
        self._hide_progress()
        self.summary_label.setText(summary_text(issues))
        self.source_label.setText(source)
        self.source_label.setVisible(bool(source))
        self.class_filter.blockSignals(True)
        self.class_filter.clear()
        self.class_filter.addItems([ALL_CLASSES, *issues.class_names])
        self.class_filter.blockSignals(False)
        self.tabs.setEnabled(True)
        self.class_filter.setEnabled(True)
        self.fixes.setEnabled(config is not None)
        if config is not None:
            self.fixes.open(config, issues.class_names)
        self._fill(None)

    @property
    def given_class(self) -> int | None:
        """The class the filter keeps (None: all)."""
        index = self.class_filter.currentIndex()
        return index - 1 if index > 0 else None

    def _fill(self, given_class: int | None) -> None:
        issues, shelf = self.issues, self.shelf
        if issues is None:
            return
        labels = label_error_rows(issues, given_class)
        losses = top_loss_rows(issues, top_loss_count(issues), given_class)
        duplicates = duplicate_rows(issues, given_class)
        self.label_errors.set_rows(labels, shelf)
        self.top_losses.set_rows(losses, shelf)
        self.duplicates.set_rows(duplicates, shelf)
        self._pairs = confused_pairs(issues, given_class)
        self._fill_pairs(issues)
        counts = (len(labels), len(losses), len(self._pairs), len(duplicates))
        self._name_tabs(counts)
        self._show_selection()

    def _fill_pairs(self, issues: DataIssues) -> None:
        names, table = issues.class_names, self.pairs
        table.blockSignals(True)
        table.setRowCount(len(self._pairs))
        for row, pair in enumerate(self._pairs):
            cells = (names[pair.given], names[pair.predicted], f"{pair.count:,}")
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column == 2:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                table.setItem(row, column, item)
        table.blockSignals(False)
        table.resizeColumnsToContents()
        for column in range(table.columnCount()):
            table.setColumnWidth(column, table.columnWidth(column) + 16)
        # Every column in view: the splitter gives the images what is left.
        widths = sum(table.columnWidth(c) for c in range(table.columnCount()))
        scroll = table.verticalScrollBar().sizeHint().width()
        table.setMinimumWidth(widths + scroll + 2 * table.frameWidth())
        table.clearSelection()
        self.pair_images.set_rows([], self.shelf)
        self.pair_label.setText("Choose a pair to see its images")

    def pair_texts(self) -> list[tuple[str, str, str]]:
        """The most-confused table's rows as shown: given, predicted, count."""
        table = self.pairs
        return [
            (table.item(r, 0).text(), table.item(r, 1).text(), table.item(r, 2).text())
            for r in range(table.rowCount())
        ]

    # ------------------------------------------------------------------ fixes

    def _tables(self) -> tuple[IssueTable, ...]:
        """The lists of images, in the tabs' order (a pair's images third)."""
        return (self.label_errors, self.top_losses, self.pair_images, self.duplicates)

    def current_table(self) -> IssueTable:
        """The list of images the current tab shows."""
        return self._tables()[self.tabs.currentIndex()]

    def _note(self, row: IssueRow) -> str:
        if self.issues is None or row.image < 0:
            return ""
        return self.fixes.note(self.issues.names[row.image])

    def _likely(self, row: IssueRow) -> int | None:
        """The class a row suggests: a label error's, else the likeliest predicted."""
        issues = self.issues
        assert issues is not None
        table = self.current_table()
        if table is self.duplicates:
            return None  # the list names no likely class
        if table is self.label_errors:
            found = issues.label_issues
            return int(found.suggested[list(found.index).index(row.image)])
        return int(issues.probabilities[row.image].argmax())

    @Slot(str, str)
    def _on_fixes_requested(self, action: str, label: str) -> None:
        issues = self.issues
        rows = self.current_table().selected_rows()
        if issues is None or not rows:
            return
        fixes = []
        for row in rows:
            file = issues.names[row.image]
            if action == LIKELY:
                likely = self._likely(row)
                if likely is not None:
                    fixes.append((file, "relabel", issues.class_names[likely]))
            else:
                fixes.append((file, action, label))
        self.fixes.record(fixes)

    @Slot()
    def _on_fixes_saved(self) -> None:
        for table in self._tables():
            table.issues.set_notes(self._note)

    @Slot(int)
    def _on_tabs_current_changed(self, _index: int) -> None:
        # Also said while Qt destroys a dialog Python let go of (a test's),
        # its attributes gone by then: nothing to show.
        if "tabs" in vars(self):
            self._show_selection()

    @Slot(object, object)
    def _on_table_selection_changed(self, _chosen: object, _dropped: object) -> None:
        self._show_selection()

    def _show_selection(self) -> None:
        table = self.current_table()
        self.fixes.set_selection(
            len(table.selectionModel().selectedRows()),
            likely=table is not self.duplicates,
        )

    # ------------------------------------------------------------------ handlers

    @Slot(int)
    def _on_class_filter_changed(self, _index: int) -> None:
        self._fill(self.given_class)

    @Slot()
    def _on_pairs_selection_changed(self) -> None:
        rows = self.pairs.selectionModel().selectedRows()
        if self.issues is None or not rows:
            return
        pair = self._pairs[rows[0].row()]
        names = self.issues.class_names
        self.pair_images.set_rows(pair_rows(self.issues, pair), self.shelf)
        self.pair_label.setText(
            f"{plural(pair.count, 'image')} labelled {names[pair.given]} that the "
            f"held-out models predict as {names[pair.predicted]}, highest loss first"
        )
