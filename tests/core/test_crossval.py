"""k-fold cross-validation: the folds, each fold an ordinary run, the group's
record of held-out predictions and scores, and the fold models' ensemble.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from scipy import stats as scipy_stats

from tests.image_folders import make_folder
from workbench.cli.commands import main
from workbench.core.checkpoints.io import info_of
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.crossval.ensemble import AveragingEnsemble, load_ensemble
from workbench.core.crossval.folds import check_folds, fold_of_each, fold_split
from workbench.core.crossval.group import PREDICTIONS_FILE, list_groups
from workbench.core.crossval.report import estimate_text
from workbench.core.crossval.stats import estimate
from workbench.core.data.build import build_loaders
from workbench.core.data.registry import DataError
from workbench.core.data.sources import load_run_arrays
from workbench.core.export.formats import export_group
from workbench.core.runs.listing import list_runs
from workbench.core.runs.reproduce import original_config

pytestmark = pytest.mark.usefixtures("data_dir")


@pytest.fixture
def runs(tmp_path, monkeypatch):
    folder = tmp_path / "runs"
    monkeypatch.setenv("PTCORE_RUNS_DIR", str(folder))
    return folder


# ------------------------------------------------------------ the folds


def test_five_folds_of_digits_are_disjoint_stratified_and_cover_every_image_once():
    arrays = load_run_arrays(TrainConfig())
    labels = arrays.train_labels
    held_out = []
    for fold in range(5):
        loaders = build_loaders(TrainConfig(folds=5, fold=fold), "cpu")
        index = loaders.held_out
        held_out.append(index)
        # The run validates on exactly these training images, in this order...
        assert torch.equal(loaders.val.labels, labels[index])
        assert torch.equal(loaders.val_images, arrays.train_images[index])
        # ...and trains on every other training image, none of the held-out.
        assert loaders.train.num_samples + len(index) == len(labels)
        assert torch.equal(
            torch.sort(loaders.train.labels).values,
            torch.sort(labels[np.setdiff1d(np.arange(len(labels)), index)]).values,
        )
    every = torch.cat(held_out)
    assert torch.equal(torch.sort(every).values, torch.arange(len(labels)))
    # Stratified: each class's share of every fold within one image of the others.
    counts = np.array([np.bincount(labels[i], minlength=10) for i in held_out])
    assert (counts.max(axis=0) - counts.min(axis=0) <= 1).all()
    sizes = [len(i) for i in held_out]
    assert max(sizes) - min(sizes) <= 1


def test_the_folds_follow_the_seed():
    labels = np.repeat(np.arange(4), 25)
    assert np.array_equal(fold_of_each(labels, 5, 3), fold_of_each(labels, 5, 3))
    assert not np.array_equal(fold_of_each(labels, 5, 3), fold_of_each(labels, 5, 4))
    train, held = fold_split(labels, 5, 2, 3)
    assert set(train).isdisjoint(held)
    assert len(train) + len(held) == 100


def test_more_folds_than_a_class_has_images_is_refused_naming_the_class():
    labels = [0] * 10 + [1] * 3
    check_folds(labels, 3, ("cat", "dog"))
    with pytest.raises(DataError, match=r"4 folds need at least 4 .*'dog' has 3"):
        check_folds(labels, 4, ("cat", "dog"))


def test_a_fold_outside_its_folds_is_no_config():
    with pytest.raises(ConfigError, match="fold: 3 is not one of the 3 folds"):
        TrainConfig(folds=3, fold=3)


def test_an_image_folder_folds_alike_in_memory_and_read_per_batch(tmp_path):
    root = make_folder(tmp_path / "d", 3, per_class=10, size=20)
    cfg = TrainConfig(
        dataset="folder", data_dir=str(root), image_size=16, folds=4, fold=1
    )
    fast = build_loaders(cfg, "cpu")
    per_batch = build_loaders(cfg.replace(loader="dataloader"), "cpu")
    assert torch.equal(fast.held_out, per_batch.held_out)
    assert torch.equal(fast.val.labels, torch.cat([y for _x, y in per_batch.val]))
    assert fast.train.num_samples == per_batch.train.num_samples


# ------------------------------------------------------------ the interval


def test_the_interval_is_students_t_over_the_folds():
    values = [0.91, 0.95, 0.93, 0.97, 0.92]
    found = estimate(values)
    low, high = scipy_stats.t.interval(
        0.95, len(values) - 1, loc=np.mean(values), scale=scipy_stats.sem(values)
    )
    assert math.isclose(found.mean, np.mean(values))
    assert math.isclose(found.low, low)
    assert math.isclose(found.high, high)
    assert estimate([0.9]).half_width is None  # one fold: no spread to speak of


# ------------------------------------------------------------ the command line


def _fold_runs(runs_root):
    return sorted(
        (r for r in list_runs(runs_root) if r.fold_group),
        key=lambda r: r.folder.info()["folds"]["fold"],
    )


@pytest.mark.slow
def test_train_folds_makes_k_ordinary_runs_a_group_and_held_out_predictions(
    runs, capsys
):
    code = main(["train", "--folds", "3", "--epochs", "2", "--seed", "5", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    (group,) = list_groups(runs)
    folds = _fold_runs(runs)
    assert [r.fold for r in folds] == [f"fold {i} of 3" for i in (1, 2, 3)]
    assert {r.fold_group for r in folds} == {group.id}
    assert group.run_ids() == {i: r.id for i, r in enumerate(folds)}
    for i, run in enumerate(folds):
        assert run.status == "finished"
        assert run.config["folds"] == 3
        assert run.config["fold"] == i
    # Every training image once, predicted by the fold model that held it out.
    labels = load_run_arrays(TrainConfig()).train_labels.numpy()
    predicted = group.predictions()
    assert torch.equal(predicted.index, torch.arange(len(labels)))
    assert np.array_equal(predicted.label.numpy(), labels)
    assert np.array_equal(predicted.fold.numpy(), fold_of_each(labels, 3, 5))
    assert torch.allclose(predicted.probabilities.sum(1), torch.ones(len(labels)))
    # Each fold's scores are those of its predictions; the summary their spread.
    info = group.info()
    assert info["status"] == "finished"
    for fold in range(3):
        mine = predicted.fold == fold
        hits = predicted.probabilities[mine].argmax(1) == predicted.label[mine]
        accuracy = info["scores"][str(fold)]["val_accuracy"]
        assert math.isclose(accuracy, float(hits.double().mean()))
    accuracies = [info["scores"][str(f)]["val_accuracy"] for f in range(3)]
    mean = estimate(accuracies)
    assert f"validation accuracy {100 * mean.mean:.2f}% ± " in out
    assert f"group: {group.path}" in out
    # A fold run is reproduced from its config alone: the same held-out fold.
    cfg = original_config(folds[1].folder)
    assert (cfg.folds, cfg.fold, cfg.seed) == (3, 1, 5)
    assert torch.equal(
        build_loaders(cfg, "cpu").held_out,
        torch.from_numpy(fold_split(labels, 3, 1, 5)[1]),
    )

    # The fold models as one averaging model: exported, verified on the
    # dataset's own validation images (which no fold saw), 100% agreement.
    payload, ensemble = load_ensemble(group)
    x = torch.randn(4, *info_of(payload).image_shape)
    members = torch.stack([m(x).softmax(1) for m in ensemble.members]).mean(0)
    torch.testing.assert_close(ensemble(x).softmax(1), members)
    assert payload["config"]["folds"] == 1
    result = export_group(group, runs.parent / "export", ("torchscript", "exported"))
    assert result.passed
    for fmt in result.formats:
        assert fmt.verification.agreement == 1.0
        assert fmt.verification.total == 360  # digits' own validation split
    card = (runs.parent / "export" / "MODEL_CARD.md").read_text()
    assert f"averaging ensemble of the 3 fold models of {group.id}" in card


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--folds", "1"], "--folds 1: cross-validation needs 2 folds or more"),
        (["--folds", "500"], "500 folds need at least 500 training images"),
        (["--folds", "3", "--save", "x.pt"], "--save is for one run"),
        (["--folds", "3", "--nproc", "2"], "give --nproc 1"),
        (["--folds", "3", "--autosave-every", "0"], "autosave_every 0 keeps no fold"),
    ],
)
def test_bad_folds_are_one_line_exit_2_and_nothing_written(
    runs, capsys, flags, message
):
    assert main(["train", *flags, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert not runs.exists() or not any(runs.iterdir())


def test_an_unfinished_group_exports_no_ensemble(runs, capsys):
    from workbench.core.crossval.group import FoldGroup

    group = FoldGroup.create(TrainConfig(folds=3), runs)
    assert main(["export", str(group.path), "--out", str(runs / "x")]) == 2
    assert "0 of 3 folds finished" in capsys.readouterr().err


def test_the_ensemble_averages_probabilities_without_a_log_of_zero():
    class Sure(torch.nn.Module):
        def __init__(self, logits):
            super().__init__()
            self.logits = torch.tensor(logits)

        def forward(self, x):
            return self.logits.expand(len(x), -1)

    ensemble = AveragingEnsemble([Sure([200.0, 0.0]), Sure([0.0, 200.0])])
    out = ensemble(torch.zeros(2, 1))
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out.softmax(1), torch.full((2, 2), 0.5))
    # (0.9, 0.1) and (0.5, 0.5) average to (0.7, 0.3); a geometric mean of the
    # probabilities would give (0.75, 0.25).
    unsure = AveragingEnsemble([Sure([math.log(9.0), 0.0]), Sure([0.0, 0.0])])
    torch.testing.assert_close(
        unsure(torch.zeros(1, 1)).softmax(1), torch.tensor([[0.7, 0.3]])
    )


def test_predictions_file_is_tensors_only(runs):
    from workbench.core.crossval.group import FoldGroup, OutOfFold

    group = FoldGroup.create(TrainConfig(folds=2), runs)
    part = OutOfFold(
        torch.tensor([3, 1]),
        torch.tensor([0, 1]),
        torch.tensor([1, 1]),
        torch.tensor([[0.9, 0.1], [0.2, 0.8]]),
    )
    group.add_fold(1, part, {"val_accuracy": 1.0, "val_loss": 0.1, "macro_f1": 1.0})
    loaded = torch.load(group.path / PREDICTIONS_FILE, weights_only=True)
    assert loaded["index"].tolist() == [1, 3]  # in training-image order
    info = json.loads((group.path / "group.json").read_text())
    assert info["status"] == "running"
    assert list(info["scores"]) == ["1"]


def test_an_interval_reaching_past_100_percent_is_cut_there():
    found = estimate([1.0, 1.0, 0.97])
    assert found.high > 1.0  # Student's t knows nothing of the range
    text = estimate_text("val_accuracy", found)
    assert text.endswith("to 100.00%, 3 folds)")
    assert f"(95% CI {100 * found.low:.2f}% to" in text
