"""Dataset-wide rankings of held-out predictions: top losses, most-confused pairs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# A probability this small is taken as this: the loss of a certain mistake is
# large but finite.
_FLOOR = 1e-12


def losses(probabilities: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each image's cross-entropy, ``-log p(x, given label)``."""
    picked = probabilities[np.arange(len(labels)), labels]
    return -np.log(np.maximum(picked, _FLOOR))


def top_losses(image_losses: np.ndarray) -> np.ndarray:
    """Image rows by loss (see :func:`losses`), highest first (ties: lower first)."""
    return np.argsort(-image_losses, kind="stable")


@dataclass(frozen=True, slots=True)
class ConfusedPair:
    """``count`` images labelled ``given`` were predicted ``predicted``."""

    given: int
    predicted: int
    count: int


def confusion(probabilities: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Counts of (given label, predicted class): rows given, columns predicted."""
    classes = probabilities.shape[1]
    matrix = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(matrix, (labels, probabilities.argmax(axis=1)), 1)
    return matrix


def most_confused(matrix: np.ndarray) -> list[ConfusedPair]:
    """The confusion matrix's off-diagonal cells with any image, largest first."""
    pairs = [
        ConfusedPair(i, j, int(matrix[i, j]))
        for i in range(len(matrix))
        for j in range(len(matrix))
        if i != j and matrix[i, j] > 0
    ]
    return sorted(pairs, key=lambda p: (-p.count, p.given, p.predicted))
