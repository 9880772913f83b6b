"""The model summary: MACs against a measured count, parameters, shapes, memory."""

from __future__ import annotations

import pytest
import torch
import torchvision
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from workbench.cli.commands import main
from workbench.core.config import MODELS
from workbench.core.models.builtins import build_model
from workbench.core.models.summary import summarize_model


def _measured_macs(model, shape):
    """FlopCounterMode's count halved.

    It counts only matrix products and convolutions (mm, addmm, bmm, convolution),
    at 2 FLOPs per multiply-accumulate and without bias additions: exactly the
    summary's convention, so the comparison is exact.
    """
    model.eval()
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model(torch.zeros(1, *shape))
    flops = counter.get_total_flops()
    assert flops % 2 == 0
    return flops // 2


def _hooked_shapes(model, shape):
    """Every leaf's output shape in call order, seen by a hook of our own."""
    seen = []
    handles = [
        m.register_forward_hook(lambda _m, _i, out: seen.append(tuple(out.shape)))
        for m in model.modules()
        if not list(m.children())
    ]
    model.eval()
    with torch.no_grad():
        model(torch.zeros(1, *shape))
    for handle in handles:
        handle.remove()
    return seen


@pytest.mark.parametrize("shape", [(1, 28, 28), (3, 32, 32)], ids=["1x28", "3x32"])
@pytest.mark.parametrize("name", MODELS)
def test_totals_match_measured_macs_parameters_and_shapes(name, shape):
    model = build_model(name, 10, seed=0, input_shape=shape)
    summary = summarize_model(model, shape)
    assert summary.macs == _measured_macs(model, shape)
    assert summary.macs > 0
    assert summary.parameters == sum(p.numel() for p in model.parameters())
    assert summary.trainable_parameters == summary.parameters
    assert [row.output_shape for row in summary.rows] == _hooked_shapes(model, shape)


def test_resnet18_matches_measured_macs():
    model = torchvision.models.get_model("resnet18", weights=None, num_classes=10)
    summary = summarize_model(model, (3, 64, 64))
    assert summary.macs == _measured_macs(model, (3, 64, 64))
    assert summary.parameters == sum(p.numel() for p in model.parameters())


def test_grouped_convolutions_count_in_channels_per_group():
    model = nn.Sequential(nn.Conv2d(8, 16, 3, groups=4), nn.Conv2d(16, 16, 1))
    summary = summarize_model(model, (8, 10, 10))
    assert summary.rows[0].macs == 16 * 8 * 8 * (8 // 4) * 9
    assert summary.macs == _measured_macs(model, (8, 10, 10))


def test_frozen_parameters_are_not_trainable():
    model = build_model("mlp", 10, seed=0)
    model.head.requires_grad_(False)
    summary = summarize_model(model, (1, 28, 28))
    frozen = sum(p.numel() for p in model.head.parameters())
    assert summary.trainable_parameters == summary.parameters - frozen


def test_activation_memory_scales_with_batch_size_and_skips_in_place_outputs():
    model = build_model("small-cnn", 10, seed=0)
    one = summarize_model(model, (1, 28, 28), batch_size=1)
    many = summarize_model(model, (1, 28, 28), batch_size=64)
    assert many.activation_bytes == 64 * one.activation_bytes
    # Leaf outputs, fp32; the in-place ReLUs reuse BatchNorm's memory, and an
    # Identity hands on its input's.
    expected = sum(
        4 * torch.Size(row.output_shape).numel()
        for row in one.rows
        if row.kind not in ("ReLU", "Identity")
    )
    assert one.activation_bytes == expected


@pytest.mark.parametrize("training", [True, False])
def test_the_training_flag_is_restored_and_hooks_removed(training):
    model = build_model("small-cnn", 10, seed=0)
    model.train(training)
    summarize_model(model, (1, 28, 28))
    assert all(m.training == training for m in model.modules())
    assert not any(m._forward_hooks for m in model.modules())


def test_the_flag_is_restored_and_hooks_removed_when_the_forward_fails():
    model = build_model("mlp", 10, seed=0)
    model.train()
    with pytest.raises(RuntimeError):
        summarize_model(model, (1, 5, 5))
    assert model.training
    assert not any(m._forward_hooks for m in model.modules())


def test_the_command_prints_the_table_and_totals(capsys):
    assert main(["summary", "--model", "small-cnn"]) == 0
    out = capsys.readouterr().out
    assert "block1.0  Conv2d" in out
    assert "parameters: 38.5 k (38,458; trainable 38,458)" in out
    # 14x14x16x9 + 14x14x32x16x9 + 7x7x32x32x9 + 7x7x64x32x9 + 576x10
    assert "MACs: 2.3 MMAC per sample (2,291,904)" in out
    assert "activation memory: 23.7 MB at batch size 256" in out


def test_the_command_summarises_a_torchvision_model(capsys):
    args = ["summary", "--model", "resnet18", "--image-size", "64"]  # 3 channels
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "layer4.1.conv2" in out
    assert "parameters: 11.2 M" in out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--model", "nope"], "'nope' is neither a built-in"),
        (["--model", "cnn", "--image-size", "4"], "at least 6 pixels"),
        (["--model", "mlp", "--batch-size", "-1"], "batch size: must be"),
        (["--model", "mlp", "--classes", "0"], "classes: must be"),
        (["--model", "mlp", "--channels", "-3"], "channels: must be"),
        (["--model", "resnet18", "--channels", "1"], "takes 3-channel images, not 1"),
        (
            ["--model", "squeezenet1_0", "--channels", "3", "--image-size", "4"],
            "cannot take 3x4x4 inputs",
        ),
    ],
    ids=["unknown", "too-small", "batch", "classes", "channels", "tv-1ch", "tv-small"],
)
def test_bad_input_exits_2_with_one_line(flags, message, capsys):
    assert main(["summary", *flags]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
    assert "Traceback" not in err
