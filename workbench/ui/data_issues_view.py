"""Data ▸ Find data issues…: the five lists, with the images, in a window.

:class:`DataIssuesDialog` shows a core
:class:`~workbench.core.data_issues.report.DataIssues`: likely label errors,
top losses, the most-confused class pairs (choosing one lists its images),
duplicates and stubborn errors (:class:`StubbornPage`: what every finished run
on the data gets wrong), each in the order the core ranks them, a thumbnail per
image, and a filter on the given label, and the fixes (:class:`FixesRow`:
relabel, exclude, keep the selected rows, undo). Before the lists, it shows how
far the search is (with Cancel). "Train again with these fixes" asks the caller
to train them (``retrain_requested``); its card (:class:`FixesCard`) shows what
the caller says, under the lists. The rows are :mod:`workbench.ui.issue_rows`'.
"""

from __future__ import annotations

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
from workbench.core.data_issues.stubborn import Stubborn
from workbench.ui.fixes_card import FixesCard
from workbench.ui.formatting import plural
from workbench.ui.issue_fixes import LIKELY, FixesRow, fixes_text
from workbench.ui.issue_rows import (
    DUPLICATE_COLUMNS,
    LABEL_ERROR_COLUMNS,
    LOSS_COLUMNS,
    PAIR_HEADERS,
    TIPS,
    confused_pairs,
    duplicate_rows,
    label_error_rows,
    pair_rows,
    summary_text,
    top_loss_count,
    top_loss_rows,
)
from workbench.ui.stubborn_view import ASKING, NOT_SEARCHED, StubbornPage
from workbench.ui.widgets.issue_gallery import ImageShelf, IssueRow, IssueTable

ALL_CLASSES = "All classes"


class DataIssuesDialog(QDialog):
    """How far the search is (with Cancel), then the five lists (not modal).

    ``cancel_requested`` when Cancel is pressed; the caller stops the work.
    ``retrain_requested`` when "Train again with these fixes" is pressed.
    """

    cancel_requested = Signal()
    retrain_requested = Signal()

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
        self.stubborn = StubbornPage()
        self.tabs = QTabWidget(objectName="dataIssuesTabs")
        for key, page in (
            ("labels", self.label_errors),
            ("losses", self.top_losses),
            ("confused", self._confused_page()),
            ("duplicates", self.duplicates),
            ("stubborn", self.stubborn),
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

        # Under the lists, once asked for: the run with the fixes, before/after.
        self.card = FixesCard()
        self.lists = QSplitter(Qt.Orientation.Vertical, objectName="dataIssuesSplit")
        self.lists.addWidget(self.tabs)
        self.lists.addWidget(self.card)
        self.lists.setChildrenCollapsible(False)
        self.lists.setStretchFactor(0, 3)
        self.lists.setStretchFactor(1, 2)
        self.retrain_button = QPushButton(
            "Train again with these fixes", objectName="retrainButton"
        )
        self.retrain_button.clicked.connect(self.retrain_requested)
        self._retraining = False
        self._show_retrain()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.retrain_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.source_label)
        layout.addLayout(progress)
        layout.addLayout(self.tools)
        layout.addWidget(self.lists, 1)
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

    def _name_tabs(self, counts: tuple[int | None, ...] | None = None) -> None:
        titles = ("Likely label errors", "Top losses", "Most-confused pairs")
        titles += ("Duplicates", "Stubborn errors")
        for tab, title in enumerate(titles):
            count = counts[tab] if counts is not None else None
            shown = title if count is None else f"{title} ({count:,})"
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
        if issues.stubborn is not None:
            self.stubborn.show_found(issues.stubborn)
        else:  # the caller may look for them next (show_stubborn_asking)
            self.stubborn.show_message(NOT_SEARCHED)
        self._show_retrain()
        self._fill(None)

    def show_stubborn_asking(self) -> None:
        """The runs of the ledger are being asked for the stubborn errors."""
        self.stubborn.show_message(ASKING)
        self._fill(self.given_class)

    def show_stubborn(self, stubborn: Stubborn | str) -> None:
        """The stubborn errors the runs asked found (text: why there are none)."""
        if isinstance(stubborn, str):
            self.stubborn.show_message(stubborn)
        else:
            self.stubborn.show_found(stubborn)
        self._fill(self.given_class)

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
        stubborn = self.stubborn.fill(issues, shelf, given_class)
        counts = (len(labels), len(losses), len(self._pairs), len(duplicates))
        self._name_tabs((*counts, stubborn))
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
        return (
            self.label_errors,
            self.top_losses,
            self.pair_images,
            self.duplicates,
            self.stubborn.table,
        )

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
        likely = int(issues.probabilities[row.image].argmax())
        # The label it has (a stubborn error the held-out models agree with):
        # relabelling to it would be no fix.
        return None if likely == int(issues.labels[row.image]) else likely

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
        self._show_retrain()

    # ------------------------------------------------------------------ train again

    def fixes_entries(self) -> tuple[tuple[str, str, str], ...]:
        """The relabels and exclusions in effect: what a run with the fixes uses."""
        overlay = self.fixes.overlay
        return () if overlay is None else overlay.config_entries()

    def set_retraining(self, busy: bool) -> None:
        """A run with the fixes trains or is measured: not another meanwhile."""
        self._retraining = busy
        self._show_retrain()

    def show_card(self, text: str) -> None:
        """The card under the lists says ``text`` (rich text), all of it in view
        when it fits in half the room (the lists keep the rest)."""
        self.card.show_text(text)
        total = sum(self.lists.sizes())
        wanted = min(self.card.fitting_height(), total // 2)
        if total > 0 and wanted > self.lists.sizes()[1]:
            self.lists.setSizes([total - wanted, wanted])

    def _show_retrain(self) -> None:
        overlay, entries = self.fixes.overlay, self.fixes_entries()
        self.retrain_button.setEnabled(bool(entries) and not self._retraining)
        if self._retraining:
            tip = "The run with the fixes is training or being measured"
        elif overlay is None or not entries:
            tip = (
                "Relabel or exclude images first; then this trains the panels' "
                "settings with those fixes and compares each class's accuracy "
                "with a run without them"
            )
        else:
            tip = (
                f"Train the panels' settings again as a new run with the fixes "
                f"({fixes_text(overlay)}), as the Data panel's Use fixes does, and "
                "compare each class's accuracy with the newest finished run of the "
                "same settings without fixes"
            )
        self.retrain_button.setToolTip(tip)

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
