"""What each list of the data issues dialog holds, as rows of images.

Plain functions of a core :class:`~workbench.core.data_issues.report.DataIssues`
(and its :class:`~workbench.core.data_issues.stubborn.Stubborn` errors): the
columns of each list with what they mean, then its rows in the core's order,
of one given class or all. No widget: what a list holds is testable without a
window, and :class:`~workbench.ui.data_issues_view.DataIssuesDialog` shows them.
"""

from __future__ import annotations

import numpy as np

from workbench.core.data_issues.rankings import ConfusedPair
from workbench.core.data_issues.report import DataIssues
from workbench.core.data_issues.stubborn import Stubborn
from workbench.ui.formatting import plural
from workbench.ui.widgets.issue_gallery import Column, IssueRow, Thumb

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
_SELF_CONFIDENCE = Column(
    "Self-confidence",
    "The held-out probability of the given label: the lower, the likelier "
    "the label is wrong",
    "number",
)
LABEL_ERROR_COLUMNS = (
    _IMAGE,
    _FILE,
    _SPLIT,
    _GIVEN,
    Column("Likely label", "The class the held-out models confidently see instead"),
    _SELF_CONFIDENCE,
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
STUBBORN_COLUMNS = (
    _IMAGE,
    _FILE,
    _SPLIT,
    _GIVEN,
    Column(
        "Likely label",
        "The class the held-out models find likeliest (the given label itself "
        "when only the runs of the ledger get the image wrong)",
    ),
    _SELF_CONFIDENCE,
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
    "stubborn": "The images every finished run of the ledger on the same data "
    "reads as another class (2 runs or more asked), lowest self-confidence first",
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


def stubborn_order(issues: DataIssues, stubborn: Stubborn) -> np.ndarray:
    """The stubborn errors by the held-out probability of their given label, lowest
    first (the likeliest label errors first; ties in image order)."""
    rows = np.asarray(stubborn.rows, dtype=np.int64)
    given = issues.probabilities[rows, issues.labels[rows]]
    return rows[np.argsort(given, kind="stable")]


def stubborn_rows(
    issues: DataIssues, stubborn: Stubborn, given_class: int | None
) -> list[IssueRow]:
    """The stubborn errors in :func:`stubborn_order` (of one given class)."""
    names, asked = issues.class_names, len(stubborn.runs)
    rows = []
    for place, i in enumerate(stubborn_order(issues, stubborn).tolist()):
        given = int(issues.labels[i])
        if not _keep(given, given_class):
            continue
        rows.append(
            IssueRow(
                place + 1,
                (
                    Thumb(i),
                    issues.names[i],
                    str(issues.splits[i]),
                    names[given],
                    names[int(issues.probabilities[i].argmax())],
                    _score(float(issues.probabilities[i, given])),
                ),
                tip=f"Read as another class by each of the {asked} runs asked",
                image=i,
            )
        )
    return rows


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
