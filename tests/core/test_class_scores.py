"""Per-class precision, recall, F1 and support against scikit-learn's.

Each case is a list of (true, predicted) pairs built by hand so the errors are
lopsided the way real data is: a rare class the model never predicts, a class
it predicts that no image has, one class taking most of the mistakes, a perfect
model, every image in one class. :func:`class_scores` works from the confusion
matrix; ``precision_recall_fscore_support`` from the pairs themselves. Last,
the runs comparison reads the averages back from ``run.json``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from sklearn.metrics import precision_recall_fscore_support

from workbench.core.config import TrainConfig
from workbench.core.runs.compare import SCORE_ROWS, score_rows
from workbench.core.runs.folder import RunFolder
from workbench.core.runs.listing import summarize
from workbench.core.train.class_scores import (
    class_scores,
    macro_f1,
    recorded_average,
    run_file_scores,
)

C = 4  # classes in every case

CASES = {
    # Class 3 is rare (2 images) and never predicted: precision 0, recall 0.
    "rare-class-never-predicted": [(0, 0)] * 20
    + [(1, 1)] * 15
    + [(1, 0)] * 3
    + [(2, 2)] * 10
    + [(2, 1)] * 2
    + [(3, 0), (3, 2)],
    # Class 2 has no image, yet the model predicts it 4 times.
    "class-predicted-but-absent": [(0, 0)] * 10
    + [(0, 2)] * 3
    + [(1, 1)] * 8
    + [(1, 2)]
    + [(3, 3)] * 5
    + [(3, 0)] * 2,
    # Nearly every mistake lands in class 0 (a model that over-predicts it).
    "one-class-takes-most-errors": [(0, 0)] * 30
    + [(1, 0)] * 9
    + [(1, 1)]
    + [(2, 0)] * 6
    + [(2, 2)] * 4
    + [(3, 0)] * 2
    + [(3, 3)] * 8
    + [(2, 3)],
    "perfect": [(c, c) for c in range(C) for _ in range(c + 2)],
    # Every image is class 1; the model spreads some to 0 and 3.
    "all-in-one-class": [(1, 1)] * 7 + [(1, 0)] * 2 + [(1, 3)],
}


def _confusion(pairs: list[tuple[int, int]]) -> np.ndarray:
    matrix = np.zeros((C, C), dtype=np.int64)
    for true, predicted in pairs:
        matrix[true, predicted] += 1
    return matrix


def _labels(pairs: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    return [t for t, _ in pairs], [p for _, p in pairs]


@pytest.mark.parametrize("case", list(CASES))
def test_each_class_matches_scikit_learn(case):
    pairs = CASES[case]
    truth, guess = _labels(pairs)
    expected = precision_recall_fscore_support(
        truth, guess, labels=list(range(C)), zero_division=0
    )
    scores = class_scores(_confusion(pairs))
    for ours, theirs in zip(
        (scores.precision, scores.recall, scores.f1, scores.support),
        expected,
        strict=True,
    ):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(scores.predicted, np.bincount(guess, minlength=C))


@pytest.mark.parametrize("average", ["macro", "weighted"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_averages_match_scikit_learn(case, average):
    pairs = CASES[case]
    truth, guess = _labels(pairs)
    # Without labels=, scikit-learn averages over the classes that occur in the
    # labels or the predictions: a class neither has does not drag the macro down.
    expected = precision_recall_fscore_support(
        truth, guess, average=average, zero_division=0
    )[:3]
    scores = class_scores(_confusion(pairs))
    ours = scores.macro() if average == "macro" else scores.weighted()
    assert ours == pytest.approx(expected, abs=1e-12)
    if average == "macro":
        assert macro_f1(_confusion(pairs)) == pytest.approx(expected[2], abs=1e-12)


def test_the_lopsided_cases_are_what_they_claim():
    """The figures that make each case lopsided, worked out by hand."""
    rare = class_scores(_confusion(CASES["rare-class-never-predicted"]))
    assert (rare.precision[3], rare.recall[3], rare.support[3]) == (0.0, 0.0, 2)
    assert rare.precision[0] == 20 / 24  # three of class 1 and one of 3 as 0
    absent = class_scores(_confusion(CASES["class-predicted-but-absent"]))
    assert (absent.support[2], absent.predicted[2], absent.f1[2]) == (0, 4, 0.0)
    # Macro counts class 2 (predicted) and weights it like the others ...
    assert absent.macro()[0] == pytest.approx(
        (10 / 12 + 8 / 8 + 0 + 5 / 5) / 4, abs=1e-12
    )
    # ... weighted gives it nothing: it has no image.
    assert absent.weighted()[1] == pytest.approx(23 / 29, abs=1e-12)
    errors = class_scores(_confusion(CASES["one-class-takes-most-errors"]))
    assert errors.precision[0] == pytest.approx(30 / 47)
    assert errors.recall[0] == 1.0
    assert errors.recall[1] == pytest.approx(0.1)
    # Macro and weighted differ: the big, well-found class 0 weighs more.
    assert errors.weighted()[2] > errors.macro()[2] + 0.05
    perfect = class_scores(_confusion(CASES["perfect"]))
    assert perfect.macro() == perfect.weighted() == (1.0, 1.0, 1.0)


def test_a_matrix_with_no_image_scores_zero_not_nan():
    scores = class_scores(np.zeros((3, 3), dtype=np.int64))
    assert scores.macro() == scores.weighted() == (0.0, 0.0, 0.0)
    assert not np.isnan(scores.f1).any()
    assert run_file_scores(((0, 0), (0, 0)), 0, ["a", "b"]) is None
    assert run_file_scores((), 0, []) is None


def test_the_worst_classes_are_the_present_ones_of_lowest_f1():
    scores = class_scores(_confusion(CASES["one-class-takes-most-errors"]))
    order = sorted(range(C), key=lambda c: (scores.f1[c], c))
    assert scores.worst(2) == order[:2] == [1, 2]
    assert scores.worst(10) == order
    # Class 2 (absent, never predicted) scores 0 but is not "worst": it is not there.
    matrix = _confusion([(0, 0), (0, 1), (1, 1), (3, 3), (3, 0)])
    assert class_scores(matrix).worst(4) == [0, 1, 3]


def test_the_record_is_json_builtins_in_class_order_with_both_averages():
    pairs = CASES["rare-class-never-predicted"]
    scores = class_scores(_confusion(pairs))
    record = scores.to_record(("cat", "dog", "fox"))  # the fourth named by index
    json.loads(json.dumps(record, allow_nan=False))  # builtins, no NaN
    assert record["classes"] == ["cat", "dog", "fox", "3"]
    assert record["support"] == [20, 18, 12, 2]
    assert record["predicted"] == [24, 17, 11, 0]
    truth, guess = _labels(pairs)
    expected = precision_recall_fscore_support(
        truth, guess, labels=list(range(C)), zero_division=0
    )
    for key, theirs in zip(("precision", "recall", "f1"), expected[:3], strict=True):
        assert record[key] == pytest.approx(list(theirs), abs=1e-6)
    for average in ("macro", "weighted"):
        theirs = precision_recall_fscore_support(
            truth, guess, average=average, zero_division=0
        )[:3]
        assert set(record[average]) == {"precision", "recall", "f1"}
        assert [record[average][k] for k in ("precision", "recall", "f1")] == (
            pytest.approx(list(theirs), abs=1e-6)
        )
        assert recorded_average(record, average) == record[average]["f1"]
    assert record["macro"]["f1"] != record["weighted"]["f1"]


def test_the_run_file_entry_names_its_epoch_from_one():
    matrix = _confusion(CASES["perfect"])
    entry = run_file_scores(tuple(map(tuple, matrix.tolist())), 2, ["a"] * C)
    assert entry["epoch"] == 3
    assert entry["macro"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}


@pytest.mark.parametrize(
    "record",
    [None, [], {}, {"macro": 0.5}, {"macro": {"f1": "0.5"}}, {"macro": {"f1": True}},
     {"macro": {"f1": math.nan}}, {"macro": {"f1": 1.5}}, {"macro": {}}],
)  # fmt: skip
def test_a_damaged_record_reads_as_no_average(record):
    assert recorded_average(record, "macro") is None


# ------------------------------------------------------ the runs comparison


def test_the_comparison_reads_each_runs_averages_from_run_json(runs_root):
    lopsided = class_scores(_confusion(CASES["one-class-takes-most-errors"]))
    perfect = class_scores(_confusion(CASES["perfect"]))
    folders = [RunFolder.create(TrainConfig(seed=s), origin="test") for s in range(4)]
    folders[0].update(
        class_scores=run_file_scores(
            _confusion(CASES["one-class-takes-most-errors"]), 0, []
        )
    )
    folders[1].update(class_scores=perfect.to_record([]))
    # folders[2]: a run from before the scores; folders[3]: a damaged entry.
    folders[3].update(class_scores={"macro": {"f1": "high"}, "weighted": [0.5]})
    runs = [summarize(f) for f in folders]
    rows = score_rows(runs)
    assert list(rows) == list(SCORE_ROWS) == ["macro F1", "weighted F1"]
    assert rows["macro F1"] == [
        pytest.approx(lopsided.macro()[2], abs=1e-6),
        1.0,
        None,
        None,
    ]
    assert rows["weighted F1"] == [
        pytest.approx(lopsided.weighted()[2], abs=1e-6),
        1.0,
        None,
        None,
    ]
    assert rows["macro F1"][0] != pytest.approx(rows["weighted F1"][0], abs=1e-3)
    assert score_rows(runs[2:]) == {}  # no run has them: no rows
    assert score_rows([]) == {}
