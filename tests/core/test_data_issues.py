"""Finding what is wrong in the data: confident learning, rankings, duplicates,
and the ``data-issues`` command over a cross-validation's held-out predictions.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib

import numpy as np
import pytest
import torch

from tests.image_folders import make_folder
from workbench.cli.commands import main
from workbench.core.crossval.group import list_groups
from workbench.core.data_issues.duplicates import find_duplicates
from workbench.core.data_issues.label_errors import (
    class_thresholds,
    find_label_issues,
)
from workbench.core.data_issues.rankings import (
    confusion,
    losses,
    most_confused,
    top_losses,
)
from workbench.core.runs.listing import list_runs

pytestmark = pytest.mark.usefixtures("data_dir")


# ------------------------------------------------------------ confident learning

# Six images of three classes; image 2 is labelled 0 but confidently class 1,
# image 5 labelled 2 but confidently class 0. Image 4 is unsure: no class
# reaches its threshold, so it is not counted.
PROBABILITIES = np.array(
    [
        [0.9, 0.05, 0.05],
        [0.8, 0.1, 0.1],
        [0.1, 0.85, 0.05],  # labelled 0
        [0.1, 0.8, 0.1],
        [0.4, 0.3, 0.3],  # labelled 2: nothing confident
        [0.7, 0.1, 0.2],  # labelled 2
        [0.05, 0.05, 0.9],
    ]
)
LABELS = np.array([0, 0, 0, 1, 2, 2, 2])


def test_thresholds_are_each_class_mean_self_confidence():
    expected = [(0.9 + 0.8 + 0.1) / 3, 0.8, (0.3 + 0.2 + 0.9) / 3]
    np.testing.assert_allclose(class_thresholds(PROBABILITIES, LABELS), expected)


def test_the_confident_joint_flags_the_off_diagonal_with_a_suggestion():
    found = find_label_issues(PROBABILITIES, LABELS)
    assert found.index.tolist() == [2, 5]  # self-confidence 0.1, then 0.2
    assert found.given.tolist() == [0, 2]
    assert found.suggested.tolist() == [1, 0]
    np.testing.assert_allclose(found.score, [0.1, 0.2])
    # Rows given, columns confident: image 4 (nothing confident) is not counted.
    assert found.joint.tolist() == [[2, 1, 0], [0, 1, 0], [1, 0, 1]]
    assert found.joint.sum() == len(LABELS) - 1


def test_ranking_by_normalised_margin_orders_by_the_gap_to_the_best_other_class():
    found = find_label_issues(PROBABILITIES, LABELS, "normalized_margin")
    # Image 2: 0.1 - 0.85 = -0.75; image 5: 0.2 - 0.7 = -0.5.
    assert found.index.tolist() == [2, 5]
    np.testing.assert_allclose(found.score, [-0.75, -0.5])


def test_when_several_classes_pass_their_threshold_the_likeliest_is_suggested():
    probabilities = np.array(
        [
            [0.8, 0.1, 0.1],
            [0.3, 0.4, 0.3],  # t1 = 0.4
            [0.3, 0.3, 0.4],  # t2 = 0.4
            [0.05, 0.42, 0.53],  # labelled 0: passes classes 1 and 2
        ]
    )
    found = find_label_issues(probabilities, np.array([0, 1, 2, 0]))
    assert found.index.tolist() == [3]
    assert found.suggested.tolist() == [2]


# ------------------------------------------------------------ rankings


def test_the_most_confused_list_is_the_confusion_matrix_off_diagonal_ranking():
    rng = np.random.default_rng(3)
    probabilities = rng.dirichlet(np.ones(4), size=300)
    labels = rng.integers(0, 4, 300)
    matrix = confusion(probabilities, labels)
    expected = np.zeros((4, 4), dtype=np.int64)
    for label, predicted in zip(labels, probabilities.argmax(1), strict=True):
        expected[label, predicted] += 1
    assert np.array_equal(matrix, expected)
    pairs = most_confused(matrix)
    off = [(matrix[i, j], i, j) for i in range(4) for j in range(4) if i != j]
    ranked = sorted((c, i, j) for c, i, j in off if c > 0)
    ranked.sort(key=lambda t: (-t[0], t[1], t[2]))
    assert [(p.count, p.given, p.predicted) for p in pairs] == ranked
    assert sum(p.count for p in pairs) == matrix.sum() - np.trace(matrix)


def test_top_losses_put_the_least_likely_given_label_first():
    order = top_losses(losses(PROBABILITIES, LABELS))
    assert order[:2].tolist() == [2, 5]


# ------------------------------------------------------------ duplicates


def test_copies_are_found_and_other_pictures_are_not():
    rng = np.random.default_rng(0)
    images = torch.from_numpy(rng.integers(0, 256, (6, 3, 32, 32), dtype=np.uint8))
    images[1] = images[0]  # an exact copy
    brighter = images[2].to(torch.int32) + 20  # re-exposed: nearly the same
    images[3] = brighter.clamp(0, 255).to(torch.uint8)
    pairs = find_duplicates(images)
    assert [(p.first, p.second, p.exact) for p in pairs] == [
        (0, 1, True),
        (2, 3, False),
    ]
    assert pairs[1].similarity > 0.99


# ------------------------------------------------------------ the command


@pytest.mark.slow
def test_data_issues_lists_a_flipped_label_writes_csv_and_reuses_its_folds(
    tmp_path, monkeypatch, capsys
):
    runs = tmp_path / "runs"
    monkeypatch.setenv("PTCORE_RUNS_DIR", str(runs))
    root = make_folder(tmp_path / "shapes", 3, per_class=16, size=20)
    # One picture of class 2 filed under class 0: a label error.
    wrong = root / "class00" / "wrong.png"
    (root / "class02" / "001.png").rename(wrong)
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.*")}
    table = tmp_path / "issues.csv"
    flags = [
        "data-issues", "--dataset", "folder", "--data-dir", str(root),
        "--image-size", "16", "--folds", "3", "--epochs", "6", "--val-fraction",
        "0.2", "--quiet", "--csv", str(table),
    ]  # fmt: skip
    assert main(flags) == 0
    out = capsys.readouterr().out
    (group,) = list_groups(runs)
    assert len(list_runs(runs)) == 3
    with table.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["file", "split", "list", "given", "suggested", "score"]
    issues = [r for r in rows if r["list"] == "label issue"]
    assert {
        "file": "class00/wrong.png",
        "given": "class00",
        "suggested": "class02",
    }.items() <= issues[0].items()
    assert "class00/wrong.png: labelled class00, likely class02" in out
    top = [r for r in rows if r["list"] == "top loss"]
    assert top[0]["file"] == "class00/wrong.png"
    # The same data and settings again: the folds are not trained again.
    assert main(flags) == 0
    assert f"reusing the held-out predictions of {group.id}" in capsys.readouterr().out
    assert len(list_runs(runs)) == 3
    # The user's files are as they were.
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.*")}
    assert after == before


def test_a_frozen_backbone_pass_computes_each_images_features_once(
    tmp_path, monkeypatch, capsys
):
    from workbench.cli import data_issues
    from workbench.core.models.builtins import build_model
    from workbench.core.train.freezing import all_but_head

    monkeypatch.setenv("PTCORE_RUNS_DIR", str(tmp_path / "runs"))
    stores = []
    sharing = data_issues.sharing_features

    @contextlib.contextmanager
    def recorded():
        with sharing() as store:
            stores.append(store)
            yield store

    monkeypatch.setattr(data_issues, "sharing_features", recorded)
    model = build_model("small-cnn", 10, seed=0, input_shape=(1, 28, 28))
    flags = ["--folds", "2", "--epochs", "1", "--quiet"]
    assert main(["data-issues", *flags, "--freeze", *all_but_head(model)]) == 0
    (store,) = stores
    # digits: 1,437 training images, each computed once; fold 2 takes its 719
    # but for the first batch (256), computed to check the kept ones.
    assert (store.computed, store.taken, store.off) == (1437, 719 - 256, None)
    assert "likely label" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--folds", "1"], "--folds 1: cross-validation needs 2 folds or more"),
        (["--csv", "."], "--csv . is a folder"),
        (["--nproc", "2"], "give --nproc 1"),
    ],
)
def test_bad_data_issues_input_is_one_line_and_exit_2(
    tmp_path, monkeypatch, capsys, flags, message
):
    monkeypatch.setenv("PTCORE_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.chdir(tmp_path)
    assert main(["data-issues", *flags, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


# ------------------------------------------------------------ stubborn errors


@pytest.mark.slow
def test_stubborn_errors_are_the_images_every_run_on_the_same_data_got_wrong(
    tmp_path, monkeypatch
):
    from workbench.core.checkpoints.io import eval_model, info_of, load_checkpoint
    from workbench.core.config import TrainConfig
    from workbench.core.data_issues.images import named_images
    from workbench.core.data_issues.stubborn import stubborn_errors

    for seed in ("1", "2"):
        assert main(["train", "--epochs", "1", "--seed", seed, "--quiet"]) == 0
    # Another split of the data (a fold run) is no evidence about these images.
    assert main(["train", "--folds", "2", "--epochs", "1", "--quiet"]) == 0
    same = [r for r in list_runs() if r.config.get("folds", 1) == 1]
    cfg = TrainConfig()
    images = named_images(cfg)
    found = stubborn_errors(cfg, images)
    assert sorted(found.runs) == sorted(r.id for r in same)
    arrays = images.arrays
    pixels = torch.cat([arrays.train_images, arrays.test_images]).float()
    labels = torch.cat([arrays.train_labels, arrays.test_labels])
    wrong = torch.ones(len(labels), dtype=torch.bool)
    for run in same:
        payload = load_checkpoint(run.folder.checkpoint_path)
        info = info_of(payload)
        x = (pixels.unsqueeze(1) / 255 - info.mean[0]) / info.std[0]
        with torch.no_grad():
            wrong &= eval_model(payload)(x).argmax(1) != labels
    assert found.rows.tolist() == torch.nonzero(wrong).flatten().tolist()
    assert 0 < len(found.rows) < len(labels)  # one epoch: some, not all
