"""small-cnn's faster layout, and the checkpoints saved with the earlier one.

The earlier layout had the same parameters (names and shapes) placed
differently, so its checkpoints would load into today's small-cnn without an
error and predict nonsense: checkpoint format 3 names them small-cnn-v1.
"""

from __future__ import annotations

import pytest
import torch

from workbench.core.checkpoints.io import (
    checkpoint_dict,
    eval_model,
    load_checkpoint,
    restore_run,
    write_checkpoint,
)
from workbench.core.config import TrainConfig
from workbench.core.models.builtins import build_model
from workbench.core.models.catalog import BUILTIN_MODELS, grouped_models, model_problem
from workbench.core.train.engine import fit, prepare_run


def test_small_cnn_works_at_7x7_after_a_strided_first_conv():
    model = build_model("small-cnn", 10, seed=0)
    sides = []
    model.block3.register_forward_hook(lambda m, i, o: sides.append(o.shape[-1]))
    assert model(torch.zeros(2, 1, 28, 28)).shape == (2, 10)
    assert sides == [7]
    assert model.block1[0].stride == (2, 2)


@pytest.mark.parametrize("side", [8, 9, 15, 29, 32])
def test_small_cnn_takes_odd_and_even_sides(side):
    model = build_model("small-cnn", 3, seed=0, input_shape=(3, side, side + 1))
    assert model(torch.zeros(2, 3, side, side + 1)).shape == (2, 3)


def test_the_earlier_layout_has_the_same_parameters_and_is_not_offered():
    new = build_model("small-cnn", 10, seed=0).state_dict()
    old = build_model("small-cnn-v1", 10, seed=0).state_dict()
    # Names differ only by a pooling layer's index; the shapes are the same.
    assert sorted(v.shape for v in new.values()) == sorted(
        v.shape for v in old.values()
    )
    assert "small-cnn-v1" not in BUILTIN_MODELS
    assert all("small-cnn-v1" not in names for _, names in grouped_models())
    assert model_problem("small-cnn-v1") is None


def _format_2_checkpoint(tmp_path, tiny_arrays):
    """What format 2 wrote for a small-cnn run: the earlier layout's weights."""
    cfg = TrainConfig(model="small-cnn-v1", epochs=2, batch_size=64, seed=3)
    run = prepare_run(cfg.replace(max_steps=3), arrays=tiny_arrays)
    fit(run)
    payload = checkpoint_dict(run)
    payload["format_version"] = 2
    payload["config"] = {**payload["config"], "model": "small-cnn"}
    return run, write_checkpoint(tmp_path / "v2.pt", payload)


def test_a_format_2_small_cnn_checkpoint_predicts_as_it_did(tmp_path, tiny_arrays):
    run, path = _format_2_checkpoint(tmp_path, tiny_arrays)
    payload = load_checkpoint(path)
    assert payload["format_version"] == 3
    assert payload["config"]["model"] == "small-cnn-v1"
    images = tiny_arrays.test_images[:16].float().unsqueeze(1) / 255
    run.model.cpu().eval()
    with torch.no_grad():
        expected = run.model(images)
        # channels_last in training, contiguous here: the same up to rounding.
        torch.testing.assert_close(eval_model(payload)(images), expected)
    # Continuing it trains the earlier layout on.
    resumed = restore_run(payload, config=None, arrays=tiny_arrays)
    assert type(resumed.model).__name__ == "SmallCNNv1"
    assert resumed.global_step == 3
