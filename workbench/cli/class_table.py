"""The per-class scores ``train`` prints after its summary line.

The last validation's macro and weighted F1 in a line, then a table of each
class's support, precision, recall and F1 (up to :data:`MAX_CLASSES` classes;
beyond, the :data:`WORST` classes of lowest F1) closed by both averages.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.cli.console import percent
from workbench.core.data.registry import class_names as named
from workbench.core.events import EpochMetrics
from workbench.core.train.class_scores import class_scores

MAX_CLASSES = 20
"""Most classes listed one by one; more: only the worst."""

WORST = 5
"""Classes listed, lowest F1 first, when there are more than MAX_CLASSES."""

NAME_WIDTH = 24  # a longer class name is cut to this, ending in "…"


def class_score_lines(
    epochs: Sequence[EpochMetrics], class_names: Sequence[str]
) -> list[str]:
    """The lines for the last epoch that has a validation confusion matrix.

    None of them when no epoch has one (a run resumed from an old checkpoint)
    or its validation had no image.
    """
    last = next((e for e in reversed(epochs) if e.confusion), None)
    if last is None or not any(map(any, last.confusion)):
        return []
    scores = class_scores(last.confusion)
    n = len(scores.support)
    names = named(class_names, n)
    macro, weighted = scores.macro(), scores.weighted()
    lines = [
        f"validation by class (epoch {last.epoch + 1}): macro F1 "
        f"{percent(macro[2])}, weighted F1 {percent(weighted[2])}"
    ]
    rows = list(range(n))
    if n > MAX_CLASSES:
        rows = scores.worst(WORST)
        lines.append(f"the {len(rows)} of {n} classes with the lowest F1:")
    total = int(scores.support.sum())
    table = [(names[i], int(scores.support[i]), scores.precision[i],
              scores.recall[i], scores.f1[i]) for i in rows]  # fmt: skip
    table += [("macro avg", total, *macro), ("weighted avg", total, *weighted)]
    width = min(max(len(row[0]) for row in table), NAME_WIDTH)
    lines.append(
        f"  {'class':<{width}}  {'support':>7}  {'precision':>9}  {'recall':>7}  "
        f"{'F1':>7}"
    )
    for name, support, precision, recall, f1 in table:
        if len(name) > width:
            name = name[: width - 1] + "…"
        lines.append(
            f"  {name:<{width}}  {support:>7,}  {percent(precision):>9}  "
            f"{percent(recall):>7}  {percent(f1):>7}"
        )
    return lines
