"""The confusion matrix, its cells and per-class accuracy on known answers.

Built by hand with lopsided errors (3 is often read as 6, 6 never as 3), so a
matrix or a cell read the wrong way round gives a different answer.
"""

from __future__ import annotations

import numpy as np

from workbench.core.events import Evaluation

#            index: 0  1  2  3  4  5  6  7  8
LABELS = np.array([3, 3, 3, 3, 6, 6, 0, 0, 1])
PREDICTIONS = np.array([3, 6, 6, 6, 6, 6, 0, 1, 1])
LOSSES = np.array([0.1, 0.9, 2.5, 1.7, 0.2, 0.3, 0.1, 3.0, 0.4], dtype=np.float32)


def make() -> Evaluation:
    return Evaluation(
        epoch=0,
        global_step=10,
        labels=LABELS,
        predictions=PREDICTIONS,
        confidences=np.full(len(LABELS), 0.5, dtype=np.float32),
        losses=LOSSES,
        num_classes=7,  # class 2, 4 and 5 have no images
    )


def test_rows_are_true_classes_and_columns_predictions():
    matrix = make().confusion()
    assert matrix.shape == (7, 7)
    assert matrix[3, 6] == 3  # three 3s read as 6
    assert matrix[6, 3] == 0  # no 6 read as 3
    assert matrix[3, 3] == 1
    assert matrix[6, 6] == 2
    assert matrix[0, 1] == 1
    assert matrix[1, 0] == 0
    assert matrix.sum() == len(LABELS)
    assert matrix.sum(axis=1).tolist() == [2, 1, 0, 4, 0, 0, 2]


def test_a_cell_holds_exactly_its_images_hardest_first():
    ev = make()
    assert ev.cell(3, 6).tolist() == [2, 3, 1]  # losses 2.5, 1.7, 0.9
    assert ev.cell(6, 3).tolist() == []
    assert ev.cell(0, 1).tolist() == [7]
    assert ev.cell(6, 6).tolist() == [5, 4]  # losses 0.3, 0.2


def test_per_class_accuracy_is_the_share_of_each_true_class_read_right():
    accuracy = make().per_class_accuracy()
    expected = [1 / 2, 1 / 1, np.nan, 1 / 4, np.nan, np.nan, 2 / 2]
    np.testing.assert_allclose(accuracy, expected)


def test_cells_are_each_image_once_hardest_first_ties_in_validation_order():
    rng = np.random.default_rng(3)
    n, c = 400, 5
    labels = rng.integers(0, c, n)
    predictions = rng.integers(0, c, n)
    # Few distinct losses: many ties, which keep the validation order.
    losses = rng.integers(0, 4, n).astype(np.float32)
    ev = Evaluation(0, 1, labels, predictions, np.ones(n, np.float32), losses, c)
    seen = []
    for t in range(c):
        for p in range(c):
            hits = np.flatnonzero((labels == t) & (predictions == p))
            expected = hits[np.argsort(-losses[hits], kind="stable")]
            assert ev.cell(t, p).tolist() == expected.tolist()
            seen.extend(ev.cell(t, p).tolist())
    assert sorted(seen) == list(range(n))


def test_the_matrix_and_cells_are_worked_out_when_the_event_is_made(monkeypatch):
    # Made in the training thread: a window reading them later does no counting.
    ev = make()
    expected = ev.confusion().copy()

    def no_counting(*args, **kwargs):
        raise AssertionError("counted again when read")

    for name in ("bincount", "lexsort", "argsort", "flatnonzero"):
        monkeypatch.setattr(np, name, no_counting)
    assert (ev.confusion() == expected).all()
    assert ev.cell(3, 6).tolist() == [2, 3, 1]
    assert not ev.confusion().flags.writeable  # shared: nobody may change it
