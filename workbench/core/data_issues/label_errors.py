"""Likely label errors by confident learning (Northcutt, Jiang and Chuang, JAIR 2021).

Written here from the paper (cleanlab, its reference code, is AGPL-3.0; this
project is MIT). Given out-of-sample class probabilities ``p`` of every image
and the label ``s`` it was given:

1. Each class ``j`` gets a threshold ``t_j``: the mean probability of ``j``
   over the images labelled ``j`` (the model's average self-confidence there).
2. The confident joint counts image ``x`` (labelled ``i``) under ``(i, j)``
   when ``p(x, j) >= t_j``; when several classes pass, the likeliest of them.
   An image no class passes is not counted.
3. The images in its off-diagonal cells (``j != i``) are the label issues,
   ``j`` the suggested label. They are ranked by self-confidence ``p(x, i)``
   or by normalised margin ``p(x, i) - max_{k != i} p(x, k)``, lowest first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RANKINGS = ("self_confidence", "normalized_margin")


@dataclass(frozen=True, slots=True)
class LabelIssues:
    """The flagged images, likeliest first, and how they were found.

    ``index`` are rows of the probabilities given; ``given`` and ``suggested``
    their labels; ``score`` the ranking score (lower: likelier an error).
    ``thresholds`` are the per-class ``t_j``; ``joint`` the confident joint
    (rows: given label, columns: the class it is confidently).
    """

    index: np.ndarray
    given: np.ndarray
    suggested: np.ndarray
    score: np.ndarray
    thresholds: np.ndarray
    joint: np.ndarray


def class_thresholds(probabilities: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """``t_j``: the mean probability of class ``j`` over the images labelled ``j``.

    A class without images gets 1.0 (nothing is confidently it).
    """
    classes = probabilities.shape[1]
    thresholds = np.ones(classes)
    for j in range(classes):
        mine = labels == j
        if mine.any():
            thresholds[j] = probabilities[mine, j].mean()
    return thresholds


def confident_classes(probabilities: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """The class each image confidently is (-1: none reaches its threshold)."""
    above = probabilities >= thresholds[None, :]
    masked = np.where(above, probabilities, -np.inf)
    chosen = masked.argmax(axis=1)
    return np.where(above.any(axis=1), chosen, -1)


def ranking_scores(
    probabilities: np.ndarray, labels: np.ndarray, rank_by: str
) -> np.ndarray:
    """Each image's score for ``rank_by`` (lower: likelier a label error)."""
    rows = np.arange(len(labels))
    mine = probabilities[rows, labels]
    if rank_by == "self_confidence":
        return mine
    if rank_by == "normalized_margin":
        others = probabilities.copy()
        others[rows, labels] = -np.inf
        return mine - others.max(axis=1)
    raise ValueError(f"rank_by: {rank_by!r} is not one of {', '.join(RANKINGS)}")


def find_label_issues(
    probabilities: np.ndarray,
    labels: np.ndarray,
    rank_by: str = "self_confidence",
) -> LabelIssues:
    """The images confident learning flags, ranked by ``rank_by``.

    Parameters
    ----------
    probabilities : ndarray
        ``(N, classes)`` out-of-sample probabilities (each row sums to 1).
    labels : ndarray
        ``(N,)`` the labels given, ``0..classes-1``.
    """
    probabilities = np.asarray(probabilities, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    classes = probabilities.shape[1]
    thresholds = class_thresholds(probabilities, labels)
    confident = confident_classes(probabilities, thresholds)
    counted = confident >= 0
    joint = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(joint, (labels[counted], confident[counted]), 1)
    flagged = np.flatnonzero(counted & (confident != labels))
    scores = ranking_scores(probabilities, labels, rank_by)[flagged]
    order = np.argsort(scores, kind="stable")
    flagged = flagged[order]
    return LabelIssues(
        index=flagged,
        given=labels[flagged],
        suggested=confident[flagged],
        score=scores[order],
        thresholds=thresholds,
        joint=joint,
    )
