"""Precision ``auto``: bf16 where the CPU computes it natively, fp32 elsewhere."""

from __future__ import annotations

import pytest
import torch

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.script.writer import write_script
from workbench.core.train import precision
from workbench.core.train.engine import fit, prepare_run

CPU = torch.device("cpu")


@pytest.mark.parametrize(
    ("native", "device", "picked"),
    [
        (True, CPU, "bf16"),
        (False, CPU, "fp32"),
        (True, torch.device("cuda"), "fp32"),
        (True, torch.device("mps"), "fp32"),
    ],
)
def test_auto_resolves_by_device_and_cpu(monkeypatch, native, device, picked):
    monkeypatch.setattr(precision, "native_bf16_cpu", lambda: native)
    chosen, why = precision.resolve_precision("auto", device)
    assert chosen == picked
    assert why.startswith(f"auto: {picked}")


@pytest.mark.parametrize("choice", ["fp32", "bf16", "fp16"])
def test_a_chosen_precision_is_kept(monkeypatch, choice):
    monkeypatch.setattr(precision, "native_bf16_cpu", lambda: True)
    assert precision.resolve_precision(choice, CPU) == (choice, "")


def test_the_default_is_auto():
    assert TrainConfig().precision == "auto"


def _losses(cfg, arrays):
    run = prepare_run(cfg, arrays=arrays)
    events = fit(run)
    started = next(e for e in events if isinstance(e, E.RunStarted))
    assert started.precision == run.precision
    return run.precision, [e.loss for e in events if isinstance(e, E.StepMetrics)]


@pytest.mark.slow
@pytest.mark.parametrize("native", [True, False])
def test_an_auto_run_trains_exactly_as_the_precision_it_picked(
    monkeypatch, tiny_arrays, native
):
    monkeypatch.setattr(precision, "native_bf16_cpu", lambda: native)
    cfg = TrainConfig(model="small-cnn", max_steps=6, batch_size=64, log_every=1)
    picked, auto_losses = _losses(cfg, tiny_arrays)
    assert picked == ("bf16" if native else "fp32")
    _, losses = _losses(cfg.replace(precision=picked), tiny_arrays)
    _, other_losses = _losses(
        cfg.replace(precision="fp32" if native else "bf16"), tiny_arrays
    )
    assert auto_losses == losses  # bit for bit
    assert auto_losses != other_losses  # and the two precisions do differ


def test_a_script_of_an_auto_run_trains_in_what_auto_picked(monkeypatch):
    monkeypatch.setattr(precision, "native_bf16_cpu", lambda: True)
    text = write_script(TrainConfig())
    assert 'PRECISION = "bf16"' in text
    assert '"precision": "auto"' in text  # CONFIG keeps the choice as made
    monkeypatch.setattr(precision, "native_bf16_cpu", lambda: False)
    assert 'PRECISION = "fp32"' in write_script(TrainConfig())
