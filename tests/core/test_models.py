from __future__ import annotations

import pytest
import torch
from torch.nn.parameter import is_lazy

from workbench.core.config import MODELS, ConfigError
from workbench.core.models.builtins import (
    LazyCNN,
    build_model,
    has_lazy_parameters,
    head_name,
    materialize,
)
from workbench.core.train.freezing import list_parameters


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("num_classes", [10, 26])
def test_every_model_maps_images_to_class_logits(name, num_classes):
    model = build_model(name, num_classes, seed=0)
    assert not has_lazy_parameters(model)
    assert model(torch.zeros(5, 1, 28, 28)).shape == (5, num_classes)
    head = dict(model.named_modules())[head_name(model)]
    assert head.out_features == num_classes


@pytest.mark.parametrize("name", MODELS)
def test_seed_fixes_initial_weights_without_touching_global_rng(name):
    torch.manual_seed(123)
    before = torch.get_rng_state()
    a, b = build_model(name, seed=5), build_model(name, seed=5)
    assert torch.equal(torch.get_rng_state(), before)
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb)


def test_lazy_model_is_materialised_by_a_dry_run_batch():
    model = LazyCNN(10)
    assert has_lazy_parameters(model)
    assert any(is_lazy(p) for p in model.parameters())
    assert materialize(model) is True
    assert not has_lazy_parameters(model)
    shapes = {p.name: p.shape for p in list_parameters(model)}
    assert shapes["conv1.weight"] == (32, 1, 3, 3)
    assert shapes["fc1.weight"] == (128, 64 * 5 * 5)
    assert materialize(model) is False  # already done


def test_unknown_model_names_the_choices():
    with pytest.raises(ConfigError, match="small-cnn"):
        build_model("vgg")


@pytest.mark.parametrize("name", ["small-cnn", "cnn", "lazy-cnn", "mlp"])
def test_an_unseeded_build_draws_no_random_numbers(name):
    from workbench.core.models.builtins import build_unseeded

    before = torch.get_rng_state().clone()
    model = build_unseeded(name, 10)
    assert torch.equal(torch.get_rng_state(), before)
    reference = build_model(name, 10, seed=0)
    assert {k: v.shape for k, v in model.state_dict().items()} == {
        k: v.shape for k, v in reference.state_dict().items()
    }
