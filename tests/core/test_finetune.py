"""Teach a model the user's handwriting: accuracy on it rises, frozen stays put."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.my_digits import MyDigits
from workbench.core.data.sources import load_arrays
from workbench.core.finetune import (
    check_frozen,
    fine_tune_config,
    frozen_copy,
    prepare_fine_tune,
)
from workbench.core.models.builtins import snapshot_state
from workbench.core.train.engine import fit, prepare_run
from workbench.core.train.freezing import all_but_head, frozen_names


def mirrored_digits(per_class: int) -> list[tuple[np.ndarray, int]]:
    """Handwriting the base model has never seen: UCI digits written mirrored."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    drawings = []
    for label in range(10):
        for i in np.flatnonzero(bunch.target == label)[-per_class:]:
            image = (bunch.images[i] / 16.0)[:, ::-1]
            canvas = np.zeros((280, 280), np.float32)
            canvas[20:260, 20:260] = np.kron(image, np.ones((30, 30)))
            drawings.append((canvas, label))
    return drawings


@pytest.fixture(scope="module")
def digits_model():
    """small-cnn trained on the bundled digits (about 4 s)."""
    arrays = load_arrays("digits")
    run = prepare_run(TrainConfig(dataset="digits", epochs=10), arrays=arrays)
    fit(run)
    return run, arrays


@pytest.mark.slow
def test_fine_tuning_learns_my_handwriting_and_keeps_frozen_weights(digits_model):
    base_run, base_arrays = digits_model
    store = MyDigits()
    for image, label in mirrored_digits(per_class=6):
        store.add(image, label, style="digits")
    mask = tuple(all_but_head(base_run.model))
    cfg = fine_tune_config(base_run.config, mask)
    assert cfg.dataset == "my-digits"
    assert cfg.base_dataset == "digits"
    tune = prepare_fine_tune(
        cfg, snapshot_state(base_run.model), base_arrays=base_arrays
    )
    assert frozen_names(tune.run.model) == list(mask)
    fit(tune.run)
    after, frozen = tune.finish()
    before = tune.before
    assert before.mine_count == after.mine_count == 60
    assert before.mine < 0.6  # mirrored writing fools the base model
    assert after.mine >= before.mine + 0.3
    assert after.base >= before.base - 0.03  # replay keeps the base task
    assert frozen.unchanged
    assert len(frozen.checked) == len(mask)
    assert "bit-identical" in frozen.describe()
    # The head did train.
    head = dict(tune.run.model.named_parameters())["head.weight"]
    assert not torch.equal(head.detach(), base_run.model.head.weight.detach())


def test_the_frozen_check_names_a_changed_tensor():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))
    model[0].requires_grad_(False)
    before = frozen_copy(model)
    assert sorted(before) == ["0.bias", "0.weight"]
    with torch.no_grad():
        model[0].bias[0] += 1e-7
    check = check_frozen(model, before)
    assert check.changed == ("0.bias",)
    assert "1 of 2 frozen tensors changed" in check.describe()


def test_a_model_of_other_classes_cannot_be_taught_digits():
    with pytest.raises(ConfigError, match="digits or MNIST"):
        fine_tune_config(TrainConfig(dataset="fashion-mnist"), ())


@pytest.mark.slow
def test_a_torchvision_model_fine_tunes_on_my_drawings_like_a_built_in():
    """resnet18 on gray digits (repeated to 3 channels): the fine-tune keeps
    the frozen backbone bit-identical and trains the replaced head ``fc``."""
    arrays = load_arrays("digits")
    cfg = TrainConfig(dataset="digits", model="resnet18", max_steps=4, epochs=1)
    base = prepare_run(cfg, arrays=arrays)
    fit(base)
    store = MyDigits()
    for image, label in mirrored_digits(per_class=2):
        store.add(image, label, style="digits")
    mask = tuple(all_but_head(base.model))
    assert "fc.weight" not in mask
    assert "conv1.weight" in mask
    tune_cfg = fine_tune_config(base.config, mask).replace(max_steps=3)
    tune = prepare_fine_tune(tune_cfg, snapshot_state(base.model), base_arrays=arrays)
    assert tune.run.loaders.info.image_shape[0] == 3  # gray drawings, 3 channels
    fit(tune.run)
    _after, frozen = tune.finish()
    assert frozen.unchanged
    fc = dict(tune.run.model.named_parameters())["fc.weight"]
    assert not torch.equal(fc.detach(), base.model.fc.weight.detach())
