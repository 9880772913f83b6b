"""bench/device_check.py on a machine without CUDA: each CUDA row is skipped with
its reason, the CPU rows run, a failed row fails the script without stopping the
others, and the training rows' own code runs (on the CPU) and can fail."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from workbench.core.checkpoints import io as checkpoints
from workbench.core.train import engine

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "device_check.py"
CUDA_ROWS = (
    "fp16 + GradScaler",
    "bf16",
    "fast path, data on the device",
    "DataLoader + pin_memory",
    "exact resume",
    "torch.compile",
    "time to 99% on MNIST",
    "nccl all-reduce",
)


@pytest.fixture
def device_check(monkeypatch):
    # As when run as a script: its own folder first on the path (device_rows).
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("device_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def rows(device_check):
    """bench/device_rows.py: the training rows (as device_check imported it)."""
    return sys.modules["device_rows"]


@pytest.fixture
def no_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def _fake_cpu_rows(device_check, monkeypatch, gloo=None):
    ran = []

    def faker(name):
        def fake(tmp):
            ran.append(name)
            return device_check.Row(name, "ok", "0", "largest 0")

        return fake

    monkeypatch.setattr(
        device_check, "check_gloo", gloo or faker("gloo DDP on the CPU")
    )
    monkeypatch.setattr(device_check, "check_compile_ddp", faker("compile with DDP"))
    return ran


def _table(out: str) -> dict[str, str]:
    """The table's lines by row name (the part after the last blank line)."""
    table = out.split("\n\n")[-2].splitlines()
    names = [*CUDA_ROWS, "DDP on every GPU", "SyncBatchNorm", "gloo DDP on the CPU"]
    names.append("compile with DDP")
    return {n: line for line in table[1:] for n in names if line.startswith(n + "  ")}


def test_without_cuda_every_cuda_row_is_skipped_with_its_reason(
    device_check, monkeypatch, capsys, no_cuda
):
    ran = _fake_cpu_rows(device_check, monkeypatch)
    monkeypatch.setattr(device_check, "run_in_child", pytest.fail)
    assert device_check.main(["--data-dir", str(SCRIPT)]) == 0
    out = capsys.readouterr().out
    rows = _table(out)
    assert ran == ["gloo DDP on the CPU", "compile with DDP"]
    for name in CUDA_ROWS:
        expected = ["skipped", "-", *device_check.NO_CUDA.split()]
        assert rows[name].split()[-len(expected) :] == expected, rows[name]
        # ... and a line of its own while the script runs.
        assert f"  {name}: skipped: {device_check.NO_CUDA}\n" in out
    for name in ("DDP on every GPU", "SyncBatchNorm"):
        assert "skipped" in rows[name]
        assert device_check.NO_CUDA in rows[name]
    assert " ok " in rows["gloo DDP on the CPU"]


def test_a_failed_row_fails_the_script_and_the_rest_still_run(
    device_check, monkeypatch, capsys, no_cuda
):
    def broken(tmp):
        raise RuntimeError("gloo went away\nsecond line")

    _fake_cpu_rows(device_check, monkeypatch, gloo=broken)
    assert device_check.main([]) == 1
    out = capsys.readouterr().out
    rows = _table(out)
    assert rows["gloo DDP on the CPU"].split()[-6:] == [
        "FAIL",
        "-",
        "RuntimeError:",
        "gloo",
        "went",
        "away",
    ]
    assert "second line" not in out
    assert _table(out)["compile with DDP"].split()[3] == "ok"  # the row after it


def test_skipped_rows_alone_exit_zero(device_check, capsys, no_cuda):
    assert device_check.main(["--only", "nccl", "--only", "fp16"]) == 0
    assert "skipped" in capsys.readouterr().out


def test_rows_past_the_time_budget_are_skipped_with_a_line(
    device_check, monkeypatch, capsys
):
    _fake_cpu_rows(device_check, monkeypatch)
    assert device_check.main(["--only", "gloo", "--budget", "0"]) == 0
    line = _table(capsys.readouterr().out)["gloo DDP on the CPU"]
    assert "skipped" in line
    assert "the 0 s budget is spent (run --only gloo)" in line


@pytest.mark.parametrize(
    ("key", "device", "gpus", "reason"),
    [
        ("bf16", "cuda", 0, "no CUDA device (torch.cuda.is_available() is False)"),
        ("bf16", "cpu", 0, None),
        (
            "fp16",
            "cpu",
            0,
            "fp16 needs a CUDA device (the workbench refuses it on cpu)",
        ),
        ("fp16", "cuda", 1, None),
        ("ddp", "cuda", 1, "needs 2 or more GPUs, one process a GPU (1 visible)"),
        ("ddp", "cuda", 2, None),
        ("nccl", "cpu", 0, "no CUDA device (torch.cuda.is_available() is False)"),
        ("gloo", "cuda", 0, None),
        ("mnist99", "cuda", 1, "no MNIST files in /nowhere (give --data-dir)"),
        ("doctor", "cuda", 1, "no MNIST files in /nowhere (give --data-dir)"),
        ("doctor", "cuda", 0, "no CUDA device (torch.cuda.is_available() is False)"),
    ],
)
def test_skip_reasons(device_check, key, device, gpus, reason):
    assert device_check.skip_reason(key, device, gpus, Path("/nowhere")) == reason


def test_the_table_lines_up_its_columns(device_check, capsys):
    Row = device_check.Row
    device_check.print_table(
        [Row("a", "ok", "12 img/s", "fine"), Row("longer name", "FAIL", "-", "bad")]
    )
    _, header, first, second = capsys.readouterr().out.splitlines()
    assert header.split() == ["check", "result", "figure", "detail"]
    for column in ("result", "figure", "detail"):
        at = header.index(column)
        assert first[at] != " "
        assert second[at] != " "
    assert second.split() == ["longer", "name", "FAIL", "-", "bad"]


def test_a_training_row_that_raises_is_a_fail_with_its_one_line(
    device_check, monkeypatch, tmp_path
):
    def broken(ctx):
        raise ValueError("CUDA error: an illegal memory access\nmore text")

    monkeypatch.setitem(device_check.TRAINING_ROWS, "bf16", (broken, 90))
    ctx = device_check.Context("cpu", tmp_path, tmp_path)
    row = device_check.run_row_here("bf16", ctx)
    assert (row.name, row.status, row.detail) == (
        "bf16",
        "FAIL",
        "ValueError: CUDA error: an illegal memory access",
    )


@pytest.mark.slow
def test_a_child_process_brings_its_rows_answer_back(device_check, tmp_path):
    ctx = device_check.Context("cpu", tmp_path / "no-mnist", tmp_path)
    row = device_check.run_in_child("mnist99", ctx, timeout=120)
    assert row.name == "time to 99% on MNIST"
    assert row.status == "FAIL"
    assert row.detail.startswith("DataMissing: MNIST files are missing")


@pytest.mark.slow
def test_a_child_process_that_hangs_is_a_fail(device_check, tmp_path):
    ctx = device_check.Context("cpu", tmp_path, tmp_path)
    row = device_check.run_in_child("bf16", ctx, timeout=0.5)
    assert (row.status, row.detail) == ("FAIL", "no answer within 0 s")


@pytest.mark.slow
def test_the_exact_resume_row_passes_on_the_cpu_and_fails_without_rng(
    rows, monkeypatch, tmp_path
):
    ctx = rows.Context("cpu", tmp_path, tmp_path)
    row = rows.check_exact_resume(ctx, stop_at=3, steps=6)
    assert row.status == "ok", row
    assert row.detail == (
        "stopped at step 3 of 6: losses identical, weights bit-identical"
    )
    monkeypatch.setattr(checkpoints, "set_rng_states", lambda states: None)
    row = rows.check_exact_resume(ctx, stop_at=3, steps=6)
    assert row.status == "FAIL"
    assert "losses DIFFER, weights DIFFER" in row.detail


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_the_mixed_precision_rows_check_logits_and_scaler_on_the_cpu(
    rows, monkeypatch, tmp_path, precision
):
    # fp16 is refused on the CPU by policy; CPU autocast and GradScaler work.
    monkeypatch.setattr(engine, "check_precision", lambda precision, device: None)
    monkeypatch.setattr(rows, "_cfg", _mlp(rows._cfg))
    ctx = rows.Context("cpu", tmp_path, tmp_path)
    row = getattr(rows, f"check_{precision}")(ctx)
    assert row.status == "ok", row
    if precision == "bf16":
        assert row.detail == "torch.bfloat16 logits, no scaler"
    else:
        assert row.detail.startswith("torch.float16 logits, loss scale ")
    assert row.figure.startswith("val ")


@pytest.mark.slow
def test_the_fp16_row_fails_without_a_scaler(rows, monkeypatch, tmp_path):
    monkeypatch.setattr(engine, "check_precision", lambda precision, device: None)
    monkeypatch.setattr(rows, "_cfg", _mlp(rows._cfg))
    monkeypatch.setattr(torch.amp, "GradScaler", ScalerOff)
    row = rows.check_fp16(rows.Context("cpu", tmp_path, tmp_path))
    assert row.status == "FAIL"
    assert row.detail == "the GradScaler was off"


class ScalerOff(torch.amp.GradScaler):
    """A GradScaler that never scales, whatever the engine asks."""

    def __init__(self, device: str, enabled: bool = True) -> None:
        super().__init__(device, enabled=False)


def _mlp(make_cfg):
    """The rows' config with the small MLP: the same code, fast on the CPU."""

    def mlp(ctx, **changes):
        return make_cfg(ctx, **changes).replace(model="mlp")

    return mlp


@pytest.mark.slow
def test_the_step_split_rows_pass_on_the_cpu(rows, tmp_path):
    ctx = rows.Context("cpu", tmp_path, tmp_path)
    split = rows.check_step_split(ctx)
    assert split.status == "ok", split
    assert split.figure.startswith("a step ")
    assert "timed with perf_counter" in split.detail
    copy = rows.check_copy_phase(ctx, steps=6)
    assert copy.status == "ok", copy
    assert "batches pinned: False (only CUDA pins)" in copy.detail


@pytest.mark.slow
def test_the_speed_doctor_row_diagnoses_a_default_run_on_the_cpu(rows, tmp_path):
    ctx = rows.Context("cpu", tmp_path, tmp_path)
    row = rows.check_speed_doctor(ctx, dataset="digits", steps=3, rounds=2)
    assert row.status == "ok", row
    assert row.name == "speed doctor, default run"
    assert "img/s; apply: " in row.figure
    assert row.detail.startswith("digits on cpu in ")
    assert "each step waits for the loader" in row.detail, row.detail
