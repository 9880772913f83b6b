"""The feature cache trains the head on kept features with the uncached run's numbers.

Same per-step losses (within 1e-5 relative), same validation predictions, same
order and batches (mid-epoch continuation too); every reason it stays off is
said; a mid-run unfreeze falls back to the full model from the next step.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.data.registry import ImageArrays
from workbench.core.models.builtins import build_model
from workbench.core.train.engine import TrainControl, fit, iter_fit, prepare_run
from workbench.core.train.feature_cache import FeatureFeed
from workbench.core.train.freezing import all_but_head


def _rgb_arrays(n_train: int, n_test: int, side: int = 32) -> ImageArrays:
    g = torch.Generator().manual_seed(0)

    def images(n: int) -> torch.Tensor:
        return torch.randint(0, 256, (n, 3, side, side), dtype=torch.uint8, generator=g)

    return ImageArrays(
        images(n_train),
        torch.randint(0, 10, (n_train,), generator=g),
        images(n_test),
        torch.randint(0, 10, (n_test,), generator=g),
    )


def _head_only(model: str, input_shape: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(all_but_head(build_model(model, 10, seed=0, input_shape=input_shape)))


def _losses(events) -> list[float]:
    return [e.loss for e in events if isinstance(e, E.StepMetrics)]


def _last_predictions(events) -> np.ndarray:
    return [e for e in events if isinstance(e, E.Evaluation)][-1].predictions


def _status(events) -> str:
    return next(e for e in events if isinstance(e, E.RunStarted)).feature_cache


def _assert_same_losses(cached: list[float], full: list[float]) -> None:
    assert len(cached) == len(full)
    np.testing.assert_allclose(cached, full, rtol=1e-5, atol=0)


@pytest.mark.slow
def test_resnet18_head_only_trains_the_same_with_and_without_the_cache():
    # 20 images in batches of 2: 50 steps are five epochs (order reshuffled each).
    arrays = _rgb_arrays(20, 8)
    frozen = _head_only("resnet18", (3, 32, 32))
    runs = {}
    for mode in ("off", "on"):
        cfg = TrainConfig(
            dataset="cifar10",
            model="resnet18",
            frozen=frozen,
            epochs=5,
            batch_size=2,
            log_every=1,
            feature_cache=mode,
        )
        run = prepare_run(cfg, arrays=arrays)
        runs[mode] = (run, fit(run))
    (cached_run, cached), (_full_run, full) = runs["on"], runs["off"]
    assert _status(cached).startswith(
        "feature cache: on (20 features of size 512, computed in "
    )
    assert any(n.startswith("feature cache: on (") for n in cached_run.notices)
    assert _status(full) == "feature cache: off: turned off"
    assert len(_losses(cached)) == 50
    _assert_same_losses(_losses(cached), _losses(full))
    np.testing.assert_array_equal(_last_predictions(cached), _last_predictions(full))


def _small_cnn_cfg(**changes) -> TrainConfig:
    values = {
        "model": "small-cnn",
        "frozen": _head_only("small-cnn", (1, 28, 28)),
        "epochs": 2,
        "batch_size": 24,  # 256 samples: 10 full batches and one of 16
        "log_every": 1,
        "feature_cache": "on",
    }
    return TrainConfig(**{**values, **changes})


def test_a_stopped_cached_run_continues_mid_epoch_in_the_same_order(tiny_arrays):
    full = fit(prepare_run(_small_cnn_cfg(feature_cache="off"), arrays=tiny_arrays))
    run = prepare_run(_small_cnn_cfg(), arrays=tiny_arrays)
    control = TrainControl()
    first = []
    for event in iter_fit(run, control):
        first.append(event)
        if isinstance(event, E.StepMetrics) and event.global_step == 15:
            control.request_stop()  # batch 4 of epoch 2
    assert (run.epoch, run.batch_in_epoch) == (1, 4)
    rest = fit(run)
    assert _status(rest).startswith("feature cache: on (256 features of size 576")
    _assert_same_losses(_losses(first) + _losses(rest), _losses(full))
    np.testing.assert_array_equal(_last_predictions(rest), _last_predictions(full))


def test_auto_uses_the_cache_when_the_conditions_hold(tiny_arrays):
    run = prepare_run(_small_cnn_cfg(feature_cache="auto"), arrays=tiny_arrays)
    feed = FeatureFeed.start(run)
    assert feed.active
    assert run.notices[-1] == feed.status


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"feature_cache": "off"}, "turned off"),
        ({"frozen": ("block1.*",)}, "block2.0.weight is trainable"),
        ({"augment": ("flip",)}, "augmentation is on"),
        (
            {"model": "cnn", "frozen": _head_only("cnn", (1, 28, 28))},
            "dropout1 is active dropout before the head",
        ),
    ],
)
def test_each_reason_to_stay_off_is_said(tiny_arrays, changes, why):
    cfg = _small_cnn_cfg(**{"feature_cache": "auto", **changes})
    run = prepare_run(cfg, arrays=tiny_arrays)
    feed = FeatureFeed.start(run)
    assert not feed.active
    assert feed.status == f"feature cache: off: {why}"
    # Something is frozen or it was switched off: the run says so.
    assert run.notices[-1] == feed.status


def test_compile_keeps_the_cache_off(tiny_arrays):
    run = prepare_run(_small_cnn_cfg(), arrays=tiny_arrays)
    # Not compiled for real: the decision reads the config before any pass.
    run.config = run.config.replace(compile=True)
    feed = FeatureFeed.start(run)
    assert not feed.active
    assert feed.status == (
        "feature cache: off: torch.compile is on (asked for on; the full model trains)"
    )


def test_on_with_a_trainable_backbone_trains_the_full_model_and_says_why(tiny_arrays):
    cfg = _small_cnn_cfg(frozen=(), max_steps=4)
    run = prepare_run(cfg, arrays=tiny_arrays)
    events = fit(run)
    status = (
        "feature cache: off: block1.0.weight is trainable "
        "(asked for on; the full model trains)"
    )
    assert _status(events) == status
    assert status in [e.message for e in events if isinstance(e, E.Notice)]
    full = fit(prepare_run(cfg.replace(feature_cache="off"), arrays=tiny_arrays))
    assert _losses(events) == _losses(full)


def test_auto_on_a_fully_trainable_model_adds_no_notice(tiny_arrays):
    run = prepare_run(
        _small_cnn_cfg(frozen=(), feature_cache="auto"), arrays=tiny_arrays
    )
    feed = FeatureFeed.start(run)
    assert feed.status == "feature cache: off: block1.0.weight is trainable"
    assert not [n for n in run.notices if n.startswith("feature cache")]


def _unfreeze_at_step_5(cfg: TrainConfig, arrays: ImageArrays):
    run = prepare_run(cfg, arrays=arrays)
    control = TrainControl()
    events = []
    for event in iter_fit(run, control):
        events.append(event)
        if isinstance(event, E.StepMetrics) and event.global_step == 5:
            # Between two steps, as the window does while paused.
            for p in run.model.block4.parameters():
                p.requires_grad_(True)
            control.notify_mask_changed()
    return run, events


def test_unfreezing_mid_run_falls_back_to_the_full_model_from_the_next_step(
    tiny_arrays,
):
    cached_run, cached = _unfreeze_at_step_5(_small_cnn_cfg(epochs=1), tiny_arrays)
    full_run, full = _unfreeze_at_step_5(
        _small_cnn_cfg(epochs=1, feature_cache="off"), tiny_arrays
    )
    notices = [e.message for e in cached if isinstance(e, E.Notice)]
    assert (
        "feature cache: off from step 6: block4.0.weight is trainable; "
        "the full model trains from here"
    ) in notices
    assert cached_run.notices[-1].startswith("feature cache: off from step 6: ")
    _assert_same_losses(_losses(cached), _losses(full))
    # The unfrozen block trained in both.
    before = build_model("small-cnn", 10, seed=0, input_shape=(1, 28, 28))
    weight = cached_run.model.block4[0].weight.detach().cpu()
    assert not torch.equal(weight, before.block4[0].weight)
    torch.testing.assert_close(
        weight, full_run.model.block4[0].weight.detach().cpu(), rtol=1e-4, atol=1e-6
    )


class _Odd(torch.nn.Module):
    """A user's model: a frozen conv, then ``how`` before or after the head."""

    head_module = "head"

    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how
        self.conv = torch.nn.Conv2d(1, 4, 3, stride=4)
        if how == "batchnorm":
            self.bn = torch.nn.BatchNorm2d(4, affine=False)
        self.head = torch.nn.Linear(4 * 7 * 7, 10)
        self.conv.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        if self.how == "batchnorm":
            x = self.bn(x)
        x = torch.flatten(x, 1)
        if self.how == "random":
            x = torch.nn.functional.dropout(x, 0.5, training=self.training)
        logits = self.head(x)
        return logits * 2 if self.how == "scaled" else logits


@pytest.mark.parametrize(
    ("how", "why"),
    [
        ("batchnorm", "bn is BatchNorm in train mode before the head"),
        (
            "random",
            "the head's input changes between two passes (randomness before it)",
        ),
        ("scaled", "the model's output is not its head's output"),
    ],
)
def test_a_model_of_ones_own_is_checked_before_its_features_are_kept(
    tiny_arrays, how, why
):
    run = prepare_run(_small_cnn_cfg(feature_cache="auto"), arrays=tiny_arrays)
    run.model = _Odd(how)
    feed = FeatureFeed.start(run)
    assert feed.status == f"feature cache: off: {why}"
    run.model = _Odd("plain")
    assert FeatureFeed.start(run).active


def test_bf16_features_are_kept_as_the_head_receives_them(tiny_arrays):
    runs = {}
    for mode in ("off", "on"):
        cfg = _small_cnn_cfg(precision="bf16", epochs=2, feature_cache=mode)
        runs[mode] = fit(prepare_run(cfg, arrays=tiny_arrays))
    assert _status(runs["on"]).startswith("feature cache: on (256 features")
    _assert_same_losses(_losses(runs["on"]), _losses(runs["off"]))
    np.testing.assert_array_equal(
        _last_predictions(runs["on"]), _last_predictions(runs["off"])
    )


def test_the_dataloader_path_gets_the_same_cached_batches(tiny_arrays):
    runs = {}
    for mode in ("off", "on"):
        cfg = _small_cnn_cfg(loader="dataloader", epochs=1, feature_cache=mode)
        runs[mode] = fit(prepare_run(cfg, arrays=tiny_arrays))
    assert _status(runs["on"]).startswith("feature cache: on (256 features")
    _assert_same_losses(_losses(runs["on"]), _losses(runs["off"]))


def test_computing_the_features_reports_its_count_before_the_first_step(tiny_arrays):
    run = prepare_run(_small_cnn_cfg(epochs=1), arrays=tiny_arrays)
    events = list(iter_fit(run))
    started = next(i for i, e in enumerate(events) if isinstance(e, E.RunStarted))
    counts = [(e.done, e.total) for e in events if isinstance(e, E.FeaturesProgress)]
    assert all(isinstance(e, E.FeaturesProgress) for e in events[: len(counts)])
    assert started == len(counts)  # all of them come before the run starts
    # One report before the first batch, then one per batch of 24 (the last 16).
    assert counts == [(n, 256) for n in [*range(0, 256, 24), 256]]


def test_stop_while_the_features_are_computed_cancels_before_any_step(tiny_arrays):
    run = prepare_run(_small_cnn_cfg(), arrays=tiny_arrays)
    control = TrainControl()
    events = []
    for event in iter_fit(run, control):
        events.append(event)
        if isinstance(event, E.FeaturesProgress) and event.done == 48:
            control.request_stop()
    reports = [e.done for e in events if isinstance(e, E.FeaturesProgress)]
    assert reports == [0, 24, 48]  # cancelled at the next batch
    assert not any(isinstance(e, E.StepMetrics) for e in events)
    assert run.global_step == 0
    result = events[-1]
    assert isinstance(result, E.TrainResult)
    assert result.stopped
