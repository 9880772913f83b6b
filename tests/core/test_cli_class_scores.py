"""``train`` ends with each class's precision, recall and F1; run.json keeps them.

One short run on the bundled digits (an MLP, 2 epochs): its last epoch's
validation confusion matrix, read back from the ledger, is turned into (true,
predicted) pairs and scored by scikit-learn; the printed table and run.json's
``class_scores`` must say the same. The many-classes table is built from a
hand-made matrix.
"""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from sklearn.metrics import precision_recall_fscore_support

from workbench.cli.class_table import MAX_CLASSES, WORST, class_score_lines
from workbench.cli.commands import main
from workbench.core.data.registry import DATASET_INFO
from workbench.core.events import EpochMetrics
from workbench.core.runs.folder import RUN_FILE, RunFolder
from workbench.core.runs.listing import read_metrics


def _pct(value: float) -> str:
    return f"{100 * value:.2f}%"


def _pairs(matrix: np.ndarray) -> tuple[list[int], list[int]]:
    """The (true, predicted) labels a confusion matrix counts, one per image."""
    truth, guess = [], []
    for (t, p), count in np.ndenumerate(matrix):
        truth += [t] * int(count)
        guess += [p] * int(count)
    return truth, guess


def _no_nan(constant: str) -> None:
    raise AssertionError(f"run.json holds {constant}")


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory):
    """The output and run folder of one 2-epoch train on the digits."""
    root = tmp_path_factory.mktemp("scored-runs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PTCORE_RUNS_DIR", str(root))
        flags = ["train", "--quiet", "--model", "mlp", "--epochs", "2", "--seed", "3"]
        out = StringIO()
        mp.setattr("sys.stdout", out)
        assert main(flags) == 0
    (path,) = root.iterdir()
    folder = RunFolder(path)
    matrix = np.array(read_metrics(folder)["epoch"][-1].confusion)
    return out.getvalue().splitlines(), folder, matrix


def test_run_json_keeps_the_last_validations_class_scores(digits_run):
    _out, folder, matrix = digits_run
    text = (folder.path / RUN_FILE).read_text(encoding="utf-8")
    scores = json.loads(text, parse_constant=_no_nan)["class_scores"]
    names = list(DATASET_INFO["digits"].class_names)
    truth, guess = _pairs(matrix)
    expected = precision_recall_fscore_support(
        truth, guess, labels=list(range(10)), zero_division=0
    )
    assert scores["epoch"] == 2
    assert scores["classes"] == names
    assert scores["support"] == expected[3].tolist()
    assert scores["predicted"] == np.bincount(guess, minlength=10).tolist()
    for key, theirs in zip(("precision", "recall", "f1"), expected[:3], strict=True):
        assert scores[key] == pytest.approx(theirs.tolist(), abs=1e-6)
    for average in ("macro", "weighted"):
        theirs = precision_recall_fscore_support(
            truth, guess, average=average, zero_division=0
        )[:3]
        ours = [scores[average][k] for k in ("precision", "recall", "f1")]
        assert ours == pytest.approx(list(theirs), abs=1e-6)


def test_train_prints_each_class_and_both_averages(digits_run):
    out, _folder, matrix = digits_run
    truth, guess = _pairs(matrix)
    precision, recall, f1, support = precision_recall_fscore_support(
        truth, guess, labels=list(range(10)), zero_division=0
    )
    macro, weighted = (
        precision_recall_fscore_support(truth, guess, average=average, zero_division=0)[
            :3
        ]
        for average in ("macro", "weighted")
    )
    # After the summary line: the averages, then the table.
    done = next(i for i, line in enumerate(out) if line.startswith("done: step"))
    start = next(i for i, line in enumerate(out) if line.startswith("validation by"))
    assert start > done
    assert out[start] == (
        f"validation by class (epoch 2): macro F1 {_pct(macro[2])}, weighted F1 "
        f"{_pct(weighted[2])}"
    )
    assert out[start + 1].split() == ["class", "support", "precision", "recall", "F1"]
    rows = [line.split() for line in out[start + 2 : start + 14]]
    names = DATASET_INFO["digits"].class_names
    for c in range(10):
        assert rows[c] == [
            names[c],
            f"{support[c]:,}",
            _pct(precision[c]),
            _pct(recall[c]),
            _pct(f1[c]),
        ]
    total = f"{len(truth):,}"
    assert rows[10] == ["macro", "avg", total, *map(_pct, macro)]
    assert rows[11] == ["weighted", "avg", total, *map(_pct, weighted)]
    assert len(out) == start + 14  # the table ends the output


def _epoch(matrix: np.ndarray, epoch: int = 4) -> EpochMetrics:
    confusion = tuple(tuple(int(v) for v in row) for row in matrix)
    return EpochMetrics(epoch, 10, 0.1, 0.9, 0.2, 0.8, 100.0, 1.0, confusion)


def test_more_than_twenty_classes_list_the_five_of_lowest_f1():
    n = MAX_CLASSES + 5
    matrix = np.diag(np.full(n, 10))
    # Class k of 3..9 loses k of its 10 images to class 0: lower F1 as k grows,
    # and class 0, predicted 52 times for 10 images, scores F1 0.32.
    for k in range(3, 10):
        matrix[k, k], matrix[k, 0] = 10 - k, k
    names = [f"class-{i}" for i in range(n)]
    names[9] = "averyveryverylongclassnamenocolumnholds"
    lines = class_score_lines([_epoch(matrix)], names)
    assert lines[0].startswith("validation by class (epoch 5): macro F1 ")
    assert lines[1] == f"the {WORST} of {n} classes with the lowest F1:"
    listed = [line.split()[0] for line in lines[3:]]
    cut = "averyveryverylongclassn…"  # 24 characters
    worst = [cut, "class-0", "class-8", "class-7", "class-6"]
    assert listed == [*worst, "macro", "weighted"]
    assert lines[3].startswith(f"  {cut}  ")
    assert lines[4].split()[1:] == ["10", "19.23%", "100.00%", "32.26%"]
    assert lines[-1].split()[2] == f"{10 * n:,}"


def test_no_validation_prints_no_table():
    assert class_score_lines([], ["a"]) == []
    no_matrix = EpochMetrics(0, 10, 0.1, 0.9, 0.2, 0.8, 100.0, 1.0, None)
    assert class_score_lines([no_matrix], ["a"]) == []
    assert class_score_lines([_epoch(np.zeros((2, 2)))], ["a", "b"]) == []


def test_runs_show_gives_both_averages_from_run_json(digits_run, capsys):
    _out, folder, _matrix = digits_run
    scores = json.loads((folder.path / RUN_FILE).read_text())["class_scores"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PTCORE_RUNS_DIR", str(folder.path.parent))
        assert main(["runs", "show", folder.id]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert (
        f"class scores (epoch 2): macro F1 {_pct(scores['macro']['f1'])}, "
        f"weighted F1 {_pct(scores['weighted']['f1'])}"
    ) in shown
