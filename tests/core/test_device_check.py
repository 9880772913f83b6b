"""bench/device_check.py on a machine without CUDA: each CUDA check is skipped
with its reason, the CPU checks run, and the table says which is which."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "device_check.py"


@pytest.fixture
def device_check():
    spec = importlib.util.spec_from_file_location("device_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_cuda_every_cuda_check_is_skipped_with_its_reason(
    device_check, monkeypatch, capsys
):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    ran = []

    def fake_gloo(tmp):
        ran.append(tmp)
        return device_check.Row("gloo DDP on the CPU", "ok", "largest difference 0")

    monkeypatch.setattr(device_check, "check_gloo", fake_gloo)
    monkeypatch.setattr(device_check, "check_compile_ddp", fake_gloo)
    assert device_check.main([]) == 0
    table = capsys.readouterr().out.split("\n\n")[-1]
    assert len(ran) == 2
    for name in ("nccl all-reduce", "DDP on every GPU", "SyncBatchNorm"):
        (row,) = [line for line in table.splitlines() if line.startswith(name)]
        assert "skipped" in row
        assert "no CUDA GPU visible" in row


def test_a_failed_check_fails_the_script_and_the_rest_still_run(
    device_check, monkeypatch, capsys
):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)

    def broken(tmp):
        raise RuntimeError("gloo went away")

    monkeypatch.setattr(device_check, "check_gloo", broken)
    monkeypatch.setattr(
        device_check,
        "check_compile_ddp",
        lambda tmp: device_check.Row("compile with DDP", "ok", "0"),
    )
    assert device_check.main([]) == 1
    out = capsys.readouterr().out
    assert "FAILED    RuntimeError: gloo went away" in out
    assert "nccl all-reduce      skipped" in out
