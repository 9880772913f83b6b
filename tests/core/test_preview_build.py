"""A model preview built aside: same weights, the global generator untouched, cancel.

And what the Model panel says a large model costs to train (issue 34, item 35).
"""

from __future__ import annotations

import pytest
import torch

from workbench.core.models import preview
from workbench.core.models.builtins import build_model
from workbench.core.models.catalog import weights_enum_class
from workbench.core.models.preview import (
    build_preview,
    estimate_parameters,
    training_cost,
)
from workbench.core.models.private_random import BuildCancelled

KEYS = [("small-cnn", 10, (1, 28, 28)), ("squeezenet1_1", 4, (3, 64, 64))]


@pytest.mark.parametrize("key", KEYS, ids=lambda key: key[0])
def test_the_preview_has_the_seeded_weights_and_never_seeds_the_global_generator(
    key, monkeypatch
):
    expected = build_model(key[0], key[1], seed=5, input_shape=key[2])
    seeded: list[object] = []
    monkeypatch.setattr(torch, "manual_seed", lambda seed: seeded.append(seed))
    torch.random.default_generator.manual_seed(123)
    before = torch.get_rng_state()
    model = build_preview(key, seed=5)
    # A run training in another thread draws from the global generator: the
    # preview neither seeds it nor draws from it.
    assert seeded == []
    assert torch.equal(torch.get_rng_state(), before)
    got = model.state_dict()
    assert list(got) == list(expected.state_dict())
    for name, tensor in expected.state_dict().items():
        assert torch.equal(got[name], tensor), name


def test_a_cancelled_build_stops_at_a_tensor_it_makes_and_leaves_gradients_on():
    for asks in range(1, 15):  # small-cnn makes and draws about 20 tensors
        calls = []

        def cancel(calls=calls, asks=asks) -> bool:
            calls.append(1)
            return len(calls) >= asks

        with pytest.raises(BuildCancelled):
            build_preview(("small-cnn", 10, (1, 28, 28)), seed=0, cancel=cancel)
        assert len(calls) == asks  # asked before each tensor, stopped at a yes
        # Stopped inside nn.init's no_grad or not: gradients are on after.
        assert torch.is_grad_enabled(), asks


def test_a_torchvision_model_is_estimated_from_its_weights_without_a_build(
    monkeypatch,
):
    def no_build(*_args, **_kwargs):
        raise AssertionError("the estimate built the model")

    monkeypatch.setattr(preview, "build_on_meta", no_build)
    count = weights_enum_class("vit_h_14").DEFAULT.meta["num_params"]
    assert estimate_parameters(("vit_h_14", 10, (3, 224, 224))) == count
    assert count >= preview.BACKGROUND_FROM  # so it is built aside
    # Built-ins are small by design: no estimate, built at once.
    assert estimate_parameters(("mlp", 10, (1, 28, 28))) is None


def test_the_training_cost_says_the_memory_and_whether_it_fits():
    params = 630_000_000  # vit_h_14's size: 16 bytes each with Adam
    fits = training_cost(params, 64 * 2**30)
    assert fits == (
        "Training needs about 9.4 GiB for weights, gradients and Adam state "
        "(630.0 M parameters \u00d7 16 bytes); this computer has 64.0 GiB"
    )
    short = training_cost(params, 8 * 2**30, "the GPU")
    assert short.endswith(": more than the GPU's 8.0 GiB")
    assert training_cost(params, None).endswith("\u00d7 16 bytes)")
