"""What a CUDA run needs to repeat and resume exactly, checked on a CPU machine.

No GPU here: the CUDA calls are replaced by recorders, and the tests check what
the workbench asks of them (``bench/device_check.py`` checks the real thing on a
GPU: a run stopped and resumed on CUDA gives the same losses and weights).
"""

from __future__ import annotations

from typing import ClassVar

import torch

from workbench.core.checkpoints import io as checkpoints
from workbench.core.config import TrainConfig
from workbench.core.train import determinism, engine


def test_a_cuda_run_asks_for_deterministic_kernels_and_cublas_setting(monkeypatch):
    calls = []
    monkeypatch.setattr(
        torch, "use_deterministic_algorithms", lambda *a, **k: calls.append((a, k))
    )
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    monkeypatch.setattr(torch.backends.cudnn, "benchmark", True)
    determinism.deterministic_kernels(torch.device("cuda", 0))
    assert calls == [((True,), {"warn_only": True})]
    assert determinism.os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    assert torch.backends.cudnn.benchmark is False


def test_a_users_own_cublas_setting_is_kept(monkeypatch):
    monkeypatch.setattr(torch, "use_deterministic_algorithms", lambda *a, **k: None)
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    determinism.deterministic_kernels(torch.device("cuda"))
    assert determinism.os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":16:8"


def test_a_cpu_run_leaves_the_process_settings_alone(monkeypatch):
    calls = []
    monkeypatch.setattr(
        torch, "use_deterministic_algorithms", lambda *a, **k: calls.append(a)
    )
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    determinism.deterministic_kernels(torch.device("cpu"))
    assert calls == []
    assert "CUBLAS_WORKSPACE_CONFIG" not in determinism.os.environ


def test_prepare_run_sets_determinism_for_its_device_before_loading(
    monkeypatch, tiny_arrays
):
    order = []
    monkeypatch.setattr(
        engine, "deterministic_kernels", lambda device: order.append(device)
    )
    real_build = engine.build_loaders

    def build(*args, **kwargs):
        order.append("loaders")
        return real_build(*args, **kwargs)

    monkeypatch.setattr(engine, "build_loaders", build)
    engine.prepare_run(TrainConfig(model="mlp", device="cpu"), arrays=tiny_arrays)
    assert order == [torch.device("cpu"), "loaders"]


class FakeCuda:
    """torch.cuda's RNG calls on a machine with ``count`` GPUs."""

    def __init__(self, monkeypatch, count: int) -> None:
        self.count = count
        self.states = [torch.full((16,), 10 + i, dtype=torch.uint8) for i in range(2)]
        self.restored: list[list[torch.Tensor]] = []
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: self.count)
        monkeypatch.setattr(
            torch.cuda, "get_rng_state_all", lambda: [s.clone() for s in self.states]
        )
        monkeypatch.setattr(
            torch.cuda, "set_rng_state_all", lambda states: self.restored.append(states)
        )


def test_a_checkpoint_keeps_every_gpus_rng_and_a_resume_restores_it(
    monkeypatch, tmp_path, tiny_arrays
):
    cfg = TrainConfig(model="mlp", device="cpu", epochs=1, batch_size=64)
    run = engine.prepare_run(cfg, arrays=tiny_arrays)
    engine.fit(run)
    # A CUDA machine from here (training itself would touch the fake device).
    cuda = FakeCuda(monkeypatch, count=2)
    path = checkpoints.save_checkpoint(tmp_path / "run.pt", run)
    payload = checkpoints.load_checkpoint(path)
    assert [s.tolist() for s in payload["rng"]["cuda"]] == [
        s.tolist() for s in cuda.states
    ]
    checkpoints.restore_run(payload, arrays=tiny_arrays)
    (restored,) = cuda.restored
    assert [s.tolist() for s in restored] == [s.tolist() for s in cuda.states]


def test_a_machine_with_fewer_gpus_restores_the_gpus_it_has(monkeypatch):
    cuda = FakeCuda(monkeypatch, count=2)
    states = checkpoints.rng_states()
    cuda.count = 1  # the checkpoint opens on a one-GPU machine
    checkpoints.set_rng_states(states)
    (restored,) = cuda.restored
    assert [s.tolist() for s in restored] == [cuda.states[0].tolist()]


class RecordingScaler(torch.amp.GradScaler):
    made: ClassVar[list[RecordingScaler]] = []

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        RecordingScaler.made.append(self)


def test_fp16_trains_with_a_gradient_scaler_and_bf16_without(monkeypatch, tiny_arrays):
    # fp16 is refused on the CPU by policy; CPU autocast and GradScaler work,
    # so the engine's scaler is observed here with the refusal lifted.
    monkeypatch.setattr(engine, "check_precision", lambda precision, device: None)
    monkeypatch.setattr(torch.amp, "GradScaler", RecordingScaler)
    monkeypatch.setattr(RecordingScaler, "made", [])
    for precision in ("fp16", "bf16"):
        cfg = TrainConfig(
            model="mlp", device="cpu", precision=precision, epochs=1, batch_size=64
        )
        engine.fit(engine.prepare_run(cfg, arrays=tiny_arrays))
    fp16, bf16 = RecordingScaler.made
    assert fp16.is_enabled()
    assert fp16._scale is not None  # the losses were scaled
    assert fp16.get_scale() > 1.0
    assert not bf16.is_enabled()
