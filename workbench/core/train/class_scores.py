"""Precision, recall, F1 and support of each class, from a confusion matrix.

On lopsided data one accuracy hides a rare class the model never finds; these
say it per class, with macro (every class counts the same) and weighted (by
support) averages. A class never predicted has precision 0, a class absent
from the labels recall 0 (scikit-learn's ``zero_division=0``); the averages
take the classes that occur in the labels or the predictions, as
scikit-learn does when it is not given the labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.core.data.registry import class_names as named

AVERAGES = ("macro", "weighted")
"""The two averages :meth:`ClassScores.to_record` writes, by their keys."""


@dataclass(frozen=True)
class ClassScores:
    """Per-class arrays (index = class) and their averages."""

    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    support: np.ndarray  # true images of each class
    predicted: np.ndarray  # images predicted as each class

    @property
    def present(self) -> np.ndarray:
        """The classes that occur in the labels or the predictions."""
        return (self.support > 0) | (self.predicted > 0)

    def macro(self) -> tuple[float, float, float]:
        """Precision, recall and F1 averaged over the classes present."""
        keep = self.present
        if not keep.any():
            return 0.0, 0.0, 0.0
        return (
            float(self.precision[keep].mean()),
            float(self.recall[keep].mean()),
            float(self.f1[keep].mean()),
        )

    def weighted(self) -> tuple[float, float, float]:
        """Precision, recall and F1 weighted by each class's support."""
        total = self.support.sum()
        if total == 0:
            return 0.0, 0.0, 0.0
        w = self.support / total
        return (
            float((self.precision * w).sum()),
            float((self.recall * w).sum()),
            float((self.f1 * w).sum()),
        )

    def worst(self, count: int) -> list[int]:
        """The ``count`` present classes of lowest F1, lowest first (ties: by index)."""
        present = np.flatnonzero(self.present)
        order = np.argsort(self.f1[present], kind="stable")
        return [int(i) for i in present[order[:count]]]

    def to_record(self, class_names: Sequence[str]) -> dict[str, Any]:
        """JSON builtins: each class's name and scores, then both averages.

        ``classes``, ``support``, ``predicted``, ``precision``, ``recall`` and
        ``f1`` are lists in class-index order (a class beyond ``class_names``
        is named by its index); ``macro`` and ``weighted`` map ``precision``,
        ``recall`` and ``f1`` to their average. Scores are rounded to six
        decimals and are never NaN.
        """
        record: dict[str, Any] = {
            "classes": named(class_names, len(self.support)),
            "support": [int(v) for v in self.support],
            "predicted": [int(v) for v in self.predicted],
            "precision": _rounded(self.precision),
            "recall": _rounded(self.recall),
            "f1": _rounded(self.f1),
        }
        for average, values in zip(
            AVERAGES, (self.macro(), self.weighted()), strict=True
        ):
            record[average] = dict(
                zip(("precision", "recall", "f1"), _rounded(values), strict=True)
            )
        return record


def class_scores(confusion: np.ndarray) -> ClassScores:
    """Scores from ``confusion`` (rows: true class, columns: predicted)."""
    matrix = np.asarray(confusion, dtype=np.float64)
    hits = np.diag(matrix)
    predicted = matrix.sum(axis=0)
    support = matrix.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(predicted > 0, hits / predicted, 0.0)
        recall = np.where(support > 0, hits / support, 0.0)
        both = precision + recall
        f1 = np.where(both > 0, 2 * precision * recall / both, 0.0)
    return ClassScores(
        precision, recall, f1, support.astype(np.int64), predicted.astype(np.int64)
    )


def macro_f1(confusion: np.ndarray) -> float:
    """The F1 score averaged over the classes present (every class counts once)."""
    return class_scores(confusion).macro()[2]


def run_file_scores(
    confusion: Sequence[Sequence[int]], epoch: int, class_names: Sequence[str]
) -> dict[str, Any] | None:
    """``run.json``'s ``class_scores``: :meth:`ClassScores.to_record` of a
    validation matrix, and its epoch (``epoch`` counts from 0, the record's
    ``"epoch"`` from 1); None for a matrix with no image (no validation)."""
    matrix = np.asarray(confusion, dtype=np.int64)
    if matrix.size == 0 or matrix.sum() == 0:
        return None
    return {"epoch": epoch + 1, **class_scores(matrix).to_record(class_names)}


def recorded_average(record: Any, average: str, score: str = "f1") -> float | None:
    """One average read back from a ``class_scores`` record (``run.json``).

    ``average`` is "macro" or "weighted", ``score`` "precision", "recall" or
    "f1"; None when the record lacks it or holds something else than a number
    in [0, 1] (an older run, a file edited by hand).
    """
    if not isinstance(record, dict) or not isinstance(record.get(average), dict):
        return None
    value = record[average].get(score)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0.0 <= value <= 1.0 else None


def _rounded(values: Any) -> list[float]:
    return [round(float(v), 6) for v in values]
