"""A frozen-backbone pass computes each image's features once, with the same numbers.

Fold runs inside ``sharing_features`` take the training features an earlier
fold computed: the out-of-fold predictions and every logged loss are the bits
of the fold runs without sharing (each fold's Reproduce runs without it), and
each training image's features are computed once per pass. Validation on kept
features gives :func:`evaluate_predictions`'s numbers; the fold models'
ensemble runs their common backbone once per batch.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from workbench.cli.commands import main
from workbench.core.config import TrainConfig
from workbench.core.crossval.ensemble import AveragingEnsemble, ensemble_probabilities
from workbench.core.crossval.group import list_groups
from workbench.core.crossval.shared_features import sharing_features
from workbench.core.models.builtins import build_model
from workbench.core.runs.listing import list_runs, read_metrics
from workbench.core.train import feature_cache
from workbench.core.train.engine import prepare_run
from workbench.core.train.feature_cache import FeatureFeed
from workbench.core.train.freezing import all_but_head
from workbench.core.train.probes import evaluate_predictions

pytestmark = pytest.mark.usefixtures("data_dir")

FOLDS = 3
# small-cnn (BatchNorm in its backbone) frozen but its head: the cache applies.
FROZEN = tuple(
    all_but_head(build_model("small-cnn", 10, seed=0, input_shape=(1, 28, 28)))
)
FLAGS = ["--folds", str(FOLDS), "--epochs", "2", "--quiet", "--freeze", *FROZEN]


class _Counted:
    """Images the backbone ran on to its head's input (every feature computed)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.images = 0
        features = feature_cache._Capture.features

        def counted(capture, model, x):
            self.images += len(x)
            return features(capture, model, x)

        monkeypatch.setattr(feature_cache._Capture, "features", counted)


def _pass(runs, monkeypatch, shared: bool):
    """``train --folds 3`` of digits (1,437 training images), sharing or not."""
    monkeypatch.setenv("PTCORE_RUNS_DIR", str(runs))
    counted = _Counted(monkeypatch)
    store = None
    if shared:
        with sharing_features() as store:
            assert main(["train", *FLAGS]) == 0
    else:
        assert main(["train", *FLAGS]) == 0
    (group,) = list_groups(runs)
    folds = sorted(list_runs(runs), key=lambda r: r.config["fold"])
    losses = [[s.loss for s in read_metrics(r.folder)["step"]] for r in folds]
    return group.predictions(), losses, counted.images, store


@pytest.mark.slow
def test_a_pass_computes_each_image_once_and_predicts_exactly_as_without(
    tmp_path, monkeypatch
):
    alone, alone_losses, alone_images, _ = _pass(tmp_path / "alone", monkeypatch, False)
    shared, shared_losses, images, store = _pass(tmp_path / "shared", monkeypatch, True)
    # The same bits: held-out predictions and every logged loss of every fold.
    assert torch.equal(shared.probabilities, alone.probabilities)
    assert torch.equal(shared.index, alone.index)
    assert all(len(losses) == 2 * 4 for losses in shared_losses)  # 958 in 256s
    assert shared_losses == alone_losses
    # Each of the 1,437 training images' features computed once for the pass:
    # fold 1 computes its 958 and its 479 held-out images'; folds 2 and 3 take
    # theirs, but for the first batch (256), computed to check what is kept.
    assert store is not None
    assert store.off is None
    assert store.computed == 1437
    assert store.taken == 2 * (958 - 256)
    # The first batch twice in every fold (two passes that must agree), the
    # second pass its features; every other batch once; and each fold's
    # validation (its 479 held-out images) once, in eval mode, for every epoch.
    validation = FOLDS * 479
    assert images == 1437 + FOLDS * 256 + (FOLDS - 1) * 256 + validation
    assert alone_images == FOLDS * (958 + 256) + validation


def _fold_run(fold: int, arrays, **changes):
    cfg = TrainConfig(
        model="small-cnn",
        frozen=FROZEN,
        folds=FOLDS,
        fold=fold,
        epochs=1,
        batch_size=24,  # 256 samples: 171 training, 85 held out
        **changes,
    )
    return prepare_run(cfg, arrays=arrays)


def test_a_kept_feature_that_is_not_a_folds_own_ends_the_sharing(tiny_arrays):
    alone = FeatureFeed.start(_fold_run(1, tiny_arrays))
    with sharing_features() as store:
        FeatureFeed.start(_fold_run(0, tiny_arrays))
        assert store.computed == 256
        store._features[:, 0] += 1  # what another backbone would have kept
        feed = FeatureFeed.start(_fold_run(1, tiny_arrays))
    assert store.off == "a fold computed other features for the same images"
    assert feed.active
    assert torch.equal(feed.features, alone.features)


def test_a_fold_of_another_cross_validation_starts_the_store_afresh(tiny_arrays):
    with sharing_features() as store:
        FeatureFeed.start(_fold_run(0, tiny_arrays))
        FeatureFeed.start(_fold_run(1, tiny_arrays, seed=1))  # other folds
        assert (store.computed, store.taken, store.off) == (2 * 256, 0, None)
    # Outside the pass nothing is shared.
    feed = FeatureFeed.start(_fold_run(2, tiny_arrays))
    assert feed.active
    assert store.taken == 0


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_validation_on_kept_features_is_the_models_to_the_bit(tiny_arrays, precision):
    run = prepare_run(
        TrainConfig(model="small-cnn", frozen=FROZEN, epochs=1, precision=precision),
        arrays=tiny_arrays,
    )
    feed = FeatureFeed.start(run)
    backbone_runs = []
    first = run.model.get_submodule(FROZEN[0].rpartition(".")[0])
    first.register_forward_hook(lambda *_: backbone_runs.append(1))
    for step in range(2):
        with torch.no_grad():  # the head learnt something
            run.model.get_submodule("head").weight.add_(0.1 * (step + 1))
        mine, model = feed.evaluate(), evaluate_predictions(run)
        for name in ("labels", "predictions", "confidences", "losses"):
            np.testing.assert_array_equal(getattr(mine, name), getattr(model, name))
        assert (mine.epoch, mine.global_step) == (model.epoch, model.global_step)
    # The validation images went through the backbone once for the features,
    # and once for each whole-model validation compared with them.
    assert len(backbone_runs) == 3


def test_validation_goes_through_the_model_when_the_cache_is_off(tiny_arrays):
    run = prepare_run(TrainConfig(model="small-cnn", epochs=1), arrays=tiny_arrays)
    feed = FeatureFeed.start(run)
    assert not feed.active
    mine, model = feed.evaluate(), evaluate_predictions(run)
    np.testing.assert_array_equal(mine.losses, model.losses)


def _members(shared_backbone: bool) -> AveragingEnsemble:
    torch.manual_seed(0)
    first = build_model("small-cnn", 10, seed=0, input_shape=(1, 28, 28)).eval()
    members = [first]
    for seed in (1, 2):
        other = copy.deepcopy(first)
        if not shared_backbone:
            other = build_model("small-cnn", 10, seed=seed, input_shape=(1, 28, 28))
        with torch.no_grad():
            for p in other.get_submodule("head").parameters():
                p.normal_()
        members.append(other.eval())
    return AveragingEnsemble(members).eval()


@pytest.mark.parametrize("shared_backbone", [True, False])
def test_the_ensemble_runs_a_shared_backbone_once_per_batch(shared_backbone):
    ensemble = _members(shared_backbone)
    batches = [(torch.randn(n, 1, 28, 28), torch.zeros(n)) for n in (64, 64, 7)]
    calls = []
    for member in ensemble.members:
        member.get_submodule(FROZEN[0].rpartition(".")[0]).register_forward_hook(
            lambda *_: calls.append(1)
        )
    got = ensemble_probabilities(ensemble, batches)
    runs = len(calls)
    with torch.no_grad():
        expected = torch.cat([F.softmax(ensemble(x), dim=1) for x, _y in batches])
    assert torch.equal(got, expected)
    # Shared: once per batch, and twice more (8 images) checking the first.
    assert runs == (len(batches) + 2 if shared_backbone else 3 * len(batches))
