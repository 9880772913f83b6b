"""What a resumed run draws is what the uninterrupted run drew: samples and randomness.

The training images here carry their own index in pixel (0, 0), so every batch
the model receives can be read back as the sample indices it holds: the order a
run really trained in is observed, not recomputed with the function that made it.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from tests.conftest import make_arrays
from workbench.core import events as E
from workbench.core.checkpoints.io import (
    checkpoint_dict,
    load_checkpoint,
    restore_run,
    save_checkpoint,
)
from workbench.core.config import TrainConfig
from workbench.core.data.registry import ImageArrays
from workbench.core.train.engine import (
    TrainControl,
    evaluate_predictions,
    fit,
    iter_fit,
    prepare_run,
)
from workbench.core.train.freezing import frozen_names, set_frozen

# Every test here trains, stops and resumes real runs.
pytestmark = pytest.mark.slow

N_TRAIN = 256
BATCH = 32
STEPS_PER_EPOCH = N_TRAIN // BATCH  # 8


@pytest.fixture(scope="module")
def indexed_arrays() -> ImageArrays:
    """The tiny arrays, training image i with the value i in its top-left pixel."""
    arrays = make_arrays(N_TRAIN, 64)
    images = arrays.train_images.clone()
    images[:, 0, 0] = torch.arange(N_TRAIN, dtype=torch.uint8)
    return ImageArrays(
        images, arrays.train_labels, arrays.test_images, arrays.test_labels
    )


def record_training_batches(run) -> list[torch.Tensor]:
    """The sample indices of every batch the model trains on from now on."""
    info = run.loaders.info
    batches: list[torch.Tensor] = []

    def hook(module, args):
        if module.training:  # validation passes are not training batches
            pixel = args[0][:, 0, 0, 0].detach().float().cpu()
            batches.append(((pixel * info.std[0] + info.mean[0]) * 255).round().long())

    run.model.register_forward_pre_hook(hook)
    return batches


def train_until(run, global_step: int) -> list[float]:
    """Iterate ``run`` and stop it after ``global_step``; the logged losses."""
    control = TrainControl()
    losses = []
    for event in iter_fit(run, control):
        if isinstance(event, E.StepMetrics):
            losses.append(event.loss)
            if event.global_step == global_step:
                control.request_stop()
    assert run.global_step == global_step
    return losses


def step_losses(events) -> list[float]:
    return [e.loss for e in events if isinstance(e, E.StepMetrics)]


@pytest.mark.parametrize("loader", ["fast", "dataloader"])
def test_a_checkpoint_stores_the_order_its_epoch_is_trained_in(indexed_arrays, loader):
    cfg = TrainConfig(
        model="mlp", epochs=3, batch_size=BATCH, log_every=1, loader=loader, seed=3
    )
    straight = prepare_run(cfg, arrays=indexed_arrays)
    straight_batches = record_training_batches(straight)
    fit(straight)
    # Every sample exactly once per epoch, in a new order each epoch.
    epochs = [
        torch.cat(straight_batches[e * STEPS_PER_EPOCH : (e + 1) * STEPS_PER_EPOCH])
        for e in range(3)
    ]
    for order in epochs:
        assert torch.equal(order.sort().values, torch.arange(N_TRAIN))
    assert not torch.equal(epochs[0], epochs[1])

    stop_at = STEPS_PER_EPOCH + 3  # epoch 2, three batches in
    first = prepare_run(cfg, arrays=indexed_arrays)
    first_batches = record_training_batches(first)
    train_until(first, stop_at)
    payload = checkpoint_dict(first)
    assert payload["data_order"]["epoch"] == 1
    stored = payload["data_order"]["order"].long()
    # The stored order is the one this epoch was really drawn in...
    trained = torch.cat(first_batches[STEPS_PER_EPOCH:])
    assert torch.equal(stored[: 3 * BATCH], trained)
    assert torch.equal(stored, epochs[1])

    # ...and a resumed run draws the rest of it, then the same next epoch.
    resumed = restore_run(payload, arrays=indexed_arrays)
    resumed_batches = record_training_batches(resumed)
    fit(resumed)
    assert len(resumed_batches) == 3 * STEPS_PER_EPOCH - stop_at
    for got, expected in zip(resumed_batches, straight_batches[stop_at:], strict=True):
        assert torch.equal(got, expected)


def _scramble_rngs() -> None:
    random.seed(12345)
    np.random.seed(12345)
    torch.manual_seed(12345)
    torch.rand(1000)


def test_dropout_model_resumes_with_the_random_numbers_it_stopped_with(
    tmp_path, tiny_arrays
):
    """The classic CNN draws dropout masks: a resume must restore the RNG state."""
    cfg = TrainConfig(model="cnn", epochs=1, batch_size=64, log_every=1, seed=2)
    straight = step_losses(fit(prepare_run(cfg, arrays=tiny_arrays)))
    assert len(straight) == 4

    first = prepare_run(cfg, arrays=tiny_arrays)
    before = train_until(first, 2)
    save_checkpoint(tmp_path / "half.pt", first)
    _scramble_rngs()  # as a new process, or other work in this one, would
    resumed = restore_run(load_checkpoint(tmp_path / "half.pt"), arrays=tiny_arrays)
    after = step_losses(fit(resumed))
    assert before + after == straight


def test_a_mask_edited_mid_run_is_stored_and_restores(tmp_path, tiny_arrays):
    """Freeze a block while paused, save later: the checkpoint reopens with it."""
    cfg = TrainConfig(model="small-cnn", epochs=2, batch_size=64, log_every=1, seed=1)
    edit_at, stop_at = 2, 6

    def run_with_edit(stop: int | None):
        run = prepare_run(cfg, arrays=tiny_arrays)
        control = TrainControl()
        losses = []
        for event in iter_fit(run, control):
            if isinstance(event, E.StepMetrics):
                losses.append(event.loss)
                if event.global_step == edit_at:
                    # What the freeze tree does while a run is paused here.
                    set_frozen(run.model, ["block1.*"])
                    control.notify_mask_changed()
                if event.global_step == stop:
                    control.request_stop()
        return run, losses

    _, straight = run_with_edit(None)
    run, before = run_with_edit(stop_at)
    frozen_tensors = {
        n: p.detach().clone() for n, p in run.model.named_parameters() if "block1" in n
    }
    path = save_checkpoint(tmp_path / "edited.pt", run)

    payload = load_checkpoint(path)
    resumed = restore_run(payload, arrays=tiny_arrays)
    assert frozen_names(resumed.model) == frozen_names(run.model)
    assert frozen_names(resumed.model) == [
        n for n, _ in run.model.named_parameters() if n.startswith("block1.")
    ]
    after = step_losses(fit(resumed))
    assert before + after == straight
    for name, p in resumed.model.named_parameters():
        if name in frozen_tensors:
            assert torch.equal(p.detach(), frozen_tensors[name]), name


def _bn_buffers(model) -> dict[str, torch.Tensor]:
    return {n: b.clone() for n, b in model.named_buffers()}


@pytest.mark.parametrize("model", ["small-cnn", "cnn"])
def test_validation_runs_in_eval_mode(tiny_arrays, model):
    """No BatchNorm statistics learned from validation images, no dropout."""
    cfg = TrainConfig(model=model, epochs=1, batch_size=64, seed=0)
    run = prepare_run(cfg, arrays=tiny_arrays)
    fit(run)
    run.model.train()  # as mid-run, when the engine validates after an epoch
    buffers = _bn_buffers(run.model)

    first = evaluate_predictions(run)
    second = evaluate_predictions(run)

    for name, value in _bn_buffers(run.model).items():
        assert torch.equal(value, buffers[name]), f"validation changed {name}"
    assert run.model.training  # the trainer's mode is given back
    # Computed independently: the model in eval mode over the validation split.
    reference = run.model
    reference.eval()
    with torch.no_grad():
        x = (tiny_arrays.test_images.float() / 255 - run.loaders.info.mean[0]) / (
            run.loaders.info.std[0]
        )
        logits = reference(x[:, None].contiguous(memory_format=torch.channels_last))
    run.model.train()
    expected = logits.argmax(1).numpy()
    np.testing.assert_array_equal(first.labels, tiny_arrays.test_labels.numpy())
    np.testing.assert_array_equal(first.predictions, expected)
    np.testing.assert_array_equal(second.predictions, first.predictions)
    np.testing.assert_array_equal(second.losses, first.losses)
