from __future__ import annotations

import sys

import pytest
import torch

from workbench.core.train import devices
from workbench.core.train.devices import (
    DeviceError,
    best_device,
    list_devices,
    resolve_device,
)


def test_cpu_cuda_and_mps_are_all_listed_with_names():
    infos = list_devices()
    kinds = [i.kind for i in infos]
    assert kinds[0] == "cpu"
    assert "cuda" in kinds
    assert "mps" in kinds
    assert infos[0].available
    assert infos[0].name
    for info in infos:
        assert info.name
        assert info.available or info.reason  # an unavailable one says why


def test_auto_picks_the_best_available():
    expected = "cuda:0" if torch.cuda.is_available() else "cpu"
    if torch.backends.mps.is_available():
        expected = "mps"
    assert best_device() == expected
    assert resolve_device("auto") == torch.device(expected)


def test_unavailable_device_error_carries_the_reason(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(DeviceError, match="not available: no CUDA GPU or driver"):
        resolve_device("cuda")
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    with pytest.raises(DeviceError, match="mps' is not available: "):
        resolve_device("mps")


def test_nonsense_device_names_the_choices():
    with pytest.raises(DeviceError, match="auto, cpu, cuda, cuda:N, mps"):
        resolve_device("gpu0")


def test_elsewhere_cpuinfo_is_skipped_and_said_once(monkeypatch, caplog):
    real_open = open

    def no_cpuinfo(path, *args, **kwargs):
        assert path != "/proc/cpuinfo", "read /proc/cpuinfo off Linux"
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr("builtins.open", no_cpuinfo)
    devices._say_cpuinfo_skipped.cache_clear()
    with caplog.at_level("DEBUG", logger=devices.__name__):
        assert list_devices()[0].name
        assert list_devices()[0].name
    devices._say_cpuinfo_skipped.cache_clear()
    said = [r.getMessage() for r in caplog.records if r.name == devices.__name__]
    assert len(said) == 1, said
    assert "/proc/cpuinfo skipped: not Linux" in said[0]
