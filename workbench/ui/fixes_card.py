"""The data issues dialog's "Train again with these fixes" card.

Its texts in the fine-tune card's style (:mod:`workbench.ui.panels.fine_tune_card`:
a bold title, then one ``before → after (change)`` line a score), and
:class:`FixesCard`, the frame that shows them under the lists. Which text is
shown when is the dialog's caller's to say.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QWidget

from workbench.core.runs.listing import RunSummary
from workbench.ui.fixes_before_after import (
    BeforeAfter,
    class_accuracy,
    overall_accuracy,
)
from workbench.ui.formatting import percent, plural
from workbench.ui.panels.fine_tune_card import (
    ARROW,
    BAD_COLOUR,
    GOOD_COLOUR,
    change_line,
)

ONE_COLUMN = 6  # class lines shown one under the other; more: two columns

NO_BEFORE = (
    "No finished run of these settings without fixes is in the ledger: this "
    "run's scores are shown alone (train the same settings with Use fixes "
    "unchecked to compare)."
)
FAILED_TEXT = (
    "<b>The run with fixes did not finish</b>: it failed, or kept no weights to "
    "measure, so there is nothing to compare."
)


def run_said(run: RunSummary) -> str:
    """``20260101-… (my name)``: a run by id, and its name when it has one."""
    return f"{run.id} ({run.name})" if run.name else run.id


def before_said(before: RunSummary | None) -> str:
    """Which run the card compares with, and why that one."""
    if before is None:
        return NO_BEFORE
    return (
        f"Before: {run_said(before)}, the newest finished run of these settings "
        "without fixes."
    )


def training_text(fixes: str, before: RunSummary | None) -> str:
    """While the run with the fixes trains (``fixes``: what they are)."""
    return (
        f"<b>Training again with {fixes}</b>: the Training panel shows its "
        f"progress, and its Stop stops it.<br>{before_said(before)}"
    )


def measured_said(result: BeforeAfter) -> str:
    """Which images the scores are of: the same ones for both runs."""
    changed = []
    if result.excluded:
        changed.append(f"{result.excluded:,} excluded")
    if result.relabelled:
        changed.append(f"{result.relabelled:,} relabelled, counted as their new class")
    which = (
        f"the validation split with the fixes ({', '.join(changed)})"
        if changed
        else "the validation split both runs validated on (the fixes change "
        "training images only)"
    )
    return f"The images: {which}. Each run's final weights predicted them again here."


def _change(name: str, count: int, before: float, after: float) -> str:
    """:func:`change_line`, its change green when up and red when down."""
    line = change_line(name, count, before, after)
    change = 100 * (after - before)
    if round(change, 1) == 0:
        return line
    colour = GOOD_COLOUR if change > 0 else BAD_COLOUR
    points = f"({change:+.1f} pts)"
    return line.replace(points, f"<span style='color:{colour}'>{points}</span>")


def report_text(
    result: BeforeAfter,
    before: RunSummary | None,
    after: RunSummary,
    stopped: bool = False,
) -> str:
    """Overall and each class's accuracy before and after the fixes, then which
    runs and images they are of (the fine-tune card's order: scores first)."""
    names, support = result.class_names, result.support
    how = "stopped early" if stopped else "finished"
    images = plural(result.images, "validation image")
    new = class_accuracy(result.after)
    if result.before is None:
        title = f"<b>Trained again with the fixes: {how}</b>, accuracy on {images}"
        overall = percent(overall_accuracy(result.after))
        total = f"<b>Overall</b> ({result.images:,}): <b>{overall}</b><br>"
        lines = [
            f"{name} ({int(n):,}): <b>{percent(a)}</b><br>"
            for name, n, a in zip(names, support, new, strict=True)
            if n
        ]
    else:
        title = (
            f"<b>Trained again with the fixes: {how}</b>, accuracy before "
            f"{ARROW} after on the same {images}"
        )
        old = class_accuracy(result.before)
        both = (overall_accuracy(result.before), overall_accuracy(result.after))
        total = _change("<b>Overall</b>", result.images, *both)
        lines = [
            _change(name, int(n), b, a)
            for name, n, b, a in zip(names, support, old, new, strict=True)
            if n
        ]
    empty = [name for name, n in zip(names, support, strict=True) if not n]
    gone = f"No validation image left of: {', '.join(empty)}.<br>" if empty else ""
    said = f"{before_said(before)} After: {run_said(after)}. {measured_said(result)}"
    if len(lines) > ONE_COLUMN:  # the table begins a line of its own
        total = total.removesuffix("<br>")
    return (
        f"{title}<br>{total}{in_columns(lines)}{gone}"
        f"<p style='margin-top:6px'>{said}</p>"
    )


def in_columns(lines: list[str]) -> str:
    """The lines one under the other; beyond :data:`ONE_COLUMN`, in two columns
    side by side (ten classes: half as tall, the lists keep their room)."""
    if len(lines) <= ONE_COLUMN:
        return "".join(lines)
    half = (len(lines) + 1) // 2
    left, right = (
        "".join(part).removesuffix("<br>") for part in (lines[:half], lines[half:])
    )
    return (
        "<table cellspacing='0' cellpadding='0'><tr>"
        f"<td>{left}</td><td width='32'></td><td>{right}</td></tr></table>"
    )


def summary_line(result: BeforeAfter) -> str:
    """One line for the status bar: the overall accuracy, before and after."""
    after = percent(overall_accuracy(result.after))
    if result.before is None:
        return f"Trained again with the fixes: {after} on the validation images"
    before = percent(overall_accuracy(result.before))
    return f"Trained again with the fixes: {before} \u2192 {after} on the same images"


class FixesCard(QScrollArea):
    """The card under the lists: hidden until there is something to say."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, objectName="fixesCardArea")
        self.label = QLabel(objectName="fixesCard")
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setWordWrap(True)
        self.label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setContentsMargins(8, 6, 8, 6)
        self.setWidget(self.label)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setVisible(False)

    def show_text(self, text: str) -> None:
        """Show ``text`` (rich text)."""
        self.label.setText(text)
        self.setVisible(True)

    def fitting_height(self) -> int:
        """The height that shows the whole text at the current width."""
        width = self.viewport().width() or self.width()
        return self.label.heightForWidth(width) + 2 * self.frameWidth()

    def text(self) -> str:
        """The card's text as shown (rich text)."""
        return self.label.text()
