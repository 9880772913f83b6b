"""The data issues dialog's stubborn errors: what was asked, then the images.

The core's :func:`~workbench.core.data_issues.stubborn.stubborn_errors` asks
every finished run of the ledger on the pass's data which images it reads as
another class; the images all of them get wrong are listed. One run is no
evidence of stubbornness, so with fewer than 2 runs (or none wrong every
time) :class:`StubbornPage` says why the list is empty instead of showing an
empty table. The texts are plain functions, testable without a window.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from workbench.core.data_issues.report import DataIssues
from workbench.core.data_issues.stubborn import Stubborn
from workbench.ui.formatting import plural
from workbench.ui.issue_rows import STUBBORN_COLUMNS, stubborn_rows
from workbench.ui.widgets.issue_gallery import ImageShelf, IssueTable

LEAST_RUNS = 2  # one run getting an image wrong is no sign of stubbornness
SAME_DATA = (
    "the same dataset, validation split, image size and fixes; a "
    "cross-validation's fold runs do not count"
)
NOT_SEARCHED = "Stubborn errors were not looked for."
ASKING = (
    "Asking every finished run of the ledger on this data which images it "
    "reads as another class…"
)


def run_names(runs: Sequence[str], shown: int = 3) -> str:
    """``a, b, c and 2 more``: the runs asked, the first few by id."""
    names = ", ".join(runs[:shown])
    return names + (f" and {len(runs) - shown} more" if len(runs) > shown else "")


def stubborn_text(stubborn: Stubborn) -> str:
    """What the runs asked found, or why there is nothing to list."""
    runs, found = stubborn.runs, len(stubborn.rows)
    if not runs:
        return (
            "No stubborn errors to show: no finished run of the ledger is on this "
            f"data ({SAME_DATA}). They need {LEAST_RUNS} runs or more: train these "
            "settings twice (another seed, say) and search again."
        )
    if len(runs) < LEAST_RUNS:
        return (
            f"No stubborn errors to show: only one finished run is on this data "
            f"({runs[0]}), and an image one run gets wrong is not stubborn. Train "
            "another run on the same data (another seed, say) and search again."
        )
    if not found:
        return (
            f"None: each image was read as labelled by at least one of the "
            f"{len(runs)} finished runs on this data ({run_names(runs)})."
        )
    return (
        f"{plural(found, 'image')} every one of the {len(runs)} finished runs on "
        f"this data ({run_names(runs)}) reads as another class: a wrong label, or "
        "an image that does not belong, defeats every model. The likely label and "
        "self-confidence are the held-out models', lowest self-confidence first."
    )


def listed(stubborn: Stubborn | None) -> bool:
    """Enough runs were asked for the images all of them got wrong to count."""
    return stubborn is not None and len(stubborn.runs) >= LEAST_RUNS


class StubbornPage(QWidget):
    """A line saying what was asked (or why nothing is listed), then the images."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stubborn: Stubborn | None = None
        self.label = QLabel(NOT_SEARCHED, objectName="stubbornSummary")
        self.label.setWordWrap(True)
        self.label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setContentsMargins(6, 0, 6, 0)
        self.table = IssueTable(STUBBORN_COLUMNS)
        self.table.setObjectName("stubbornTable")
        self.table.setVisible(False)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 6, 0, 0)
        column.addWidget(self.label)
        column.addWidget(self.table, 1)
        column.addStretch()  # an empty state's text stays at the top

    def show_message(self, text: str) -> None:
        """No list: ``text`` says why (not looked for, asking, failed)."""
        self.stubborn = None
        self.label.setText(text)
        self.table.set_rows([])
        self.table.setVisible(False)

    def show_found(self, stubborn: Stubborn) -> None:
        """What the runs asked found (:meth:`fill` lists it)."""
        self.stubborn = stubborn
        self.label.setText(stubborn_text(stubborn))
        self.table.setVisible(listed(stubborn) and len(stubborn.rows) > 0)

    def fill(
        self, issues: DataIssues, shelf: ImageShelf | None, given_class: int | None
    ) -> int | None:
        """List the errors of one given class (None: all); how many (None: none
        to list, too few runs or not asked yet)."""
        stubborn = self.stubborn
        if stubborn is None or not listed(stubborn):
            self.table.set_rows([], shelf)
            return None
        rows = stubborn_rows(issues, stubborn, given_class)
        self.table.set_rows(rows, shelf)
        return len(rows)
