from __future__ import annotations

import pytest
import torch

from workbench.core.config import TrainConfig
from workbench.core.models.builtins import build_model
from workbench.core.train.engine import build_optimizer, fit, prepare_run
from workbench.core.train.freezing import (
    FreezeError,
    all_but_head,
    count_parameters,
    frozen_names,
    list_parameters,
    match_patterns,
    parameter_tree,
    reconcile_optimizer,
    set_frozen,
    train_mode,
)


def test_tree_mirrors_named_parameters_with_counts():
    model = build_model("small-cnn", seed=0)
    tree = parameter_tree(model)
    flat = []

    def walk(node):
        flat.extend(p.name for p in node.params)
        for child in node.children:
            walk(child)

    walk(tree)
    assert flat == [n for n, _ in model.named_parameters()]
    assert tree.numel == sum(p.numel() for p in model.parameters())
    assert [c.name for c in tree.children] == [
        "block1",
        "block2",
        "block3",
        "block4",
        "head",
    ]
    assert sum(c.numel for c in tree.children) == tree.numel
    conv, bn = tree.children[0].children
    assert (conv.name, conv.type_name, bn.type_name) == (
        "block1.0",
        "Conv2d",
        "BatchNorm2d",
    )
    assert bn.numel == 2 * 16


def test_patterns_match_names_modules_and_globs():
    model = build_model("cnn", seed=0)
    assert match_patterns(model, ["conv1"]) == {"conv1.weight", "conv1.bias"}
    assert match_patterns(model, ["fc*.bias"]) == {"fc1.bias", "fc2.bias"}
    assert match_patterns(model, ["conv2.weight"]) == {"conv2.weight"}
    with pytest.raises(FreezeError, match="conv1"):
        match_patterns(model, ["encoder.*"])


def test_set_frozen_flips_requires_grad_and_counts():
    model = build_model("cnn", seed=0)
    set_frozen(model, all_but_head(model))
    assert frozen_names(model) == [
        "conv1.weight",
        "conv1.bias",
        "conv2.weight",
        "conv2.bias",
        "fc1.weight",
        "fc1.bias",
    ]
    total, trainable = count_parameters(model)
    assert trainable == 128 * 10 + 10
    assert [p.trainable for p in list_parameters(model)][-2:] == [True, True]
    set_frozen(model, [])
    assert count_parameters(model) == (total, total)


def test_optimizer_sees_only_trainable_parameters():
    model = build_model("cnn", seed=0)
    set_frozen(model, ["conv*"])
    opt = build_optimizer(TrainConfig(model="cnn"), model)
    held = {id(p) for g in opt.param_groups for p in g["params"]}
    assert held == {id(p) for p in model.parameters() if p.requires_grad}


def test_reconcile_after_mask_change_keeps_one_group_and_valid_state():
    model = build_model("mlp", seed=0)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad])
    model(torch.randn(4, 1, 28, 28)).sum().backward()
    opt.step()
    set_frozen(model, ["hidden.*"])
    assert reconcile_optimizer(opt, model) is True
    params = opt.param_groups[0]["params"]
    assert [id(p) for p in params] == [id(model.head.weight), id(model.head.bias)]
    assert len({id(p) for p in params}) == len(params)
    assert set(opt.state) <= set(params)
    opt.state_dict()  # must not fail on state of parameters no group holds
    set_frozen(model, [])
    assert reconcile_optimizer(opt, model) is True
    assert len(opt.param_groups[0]["params"]) == len(list(model.parameters()))
    assert reconcile_optimizer(opt, model) is False


def test_frozen_batchnorm_keeps_its_running_statistics():
    model = build_model("small-cnn", seed=0)
    set_frozen(model, ["block1.*"])
    train_mode(model)
    bn_frozen, bn_free = model.block1[2], model.block2[2]
    assert not bn_frozen.training
    assert bn_free.training
    before = bn_frozen.running_mean.clone(), bn_free.running_mean.clone()
    model(torch.randn(8, 1, 28, 28) * 3 + 1)
    assert torch.equal(bn_frozen.running_mean, before[0])
    assert not torch.equal(bn_free.running_mean, before[1])


def test_frozen_parameters_are_bit_identical_after_training(tiny_arrays):
    cfg = TrainConfig(
        model="small-cnn",
        epochs=1,
        batch_size=64,
        frozen=("block1.*",),
        weight_decay=0.01,
        optimizer="adamw",
    )
    run = prepare_run(cfg, arrays=tiny_arrays)
    frozen = {
        n: p.detach().clone()
        for n, p in run.model.named_parameters()
        if n.startswith("block1.")
    }
    buffers = {
        n: b.clone() for n, b in run.model.named_buffers() if n.startswith("block1.")
    }
    head_before = run.model.head.weight.detach().clone()
    fit(run)
    for name, value in run.model.named_parameters():
        if name in frozen:
            assert torch.equal(value, frozen[name]), name
    for name, value in run.model.named_buffers():
        if name in buffers:
            assert torch.equal(value, buffers[name]), name
    assert not torch.equal(run.model.head.weight, head_before)


def test_everything_frozen_is_a_clear_error(tiny_arrays):
    from workbench.core.train.engine import TrainingError

    with pytest.raises(TrainingError, match="nothing to train"):
        prepare_run(TrainConfig(model="mlp", frozen=("*",)), arrays=tiny_arrays)
