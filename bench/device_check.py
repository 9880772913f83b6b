"""Exercise the GPU paths of the workbench and print one table (under 4 minutes).

Run on a CUDA machine: ``.venv/bin/python bench/device_check.py``. Each check
prints one row: what ran, ok/FAILED/skipped, and its figures. On a machine
without CUDA every CUDA check is skipped with its reason, and the CPU checks
still run, so the script itself is tested everywhere.

Checks now (the performance issue adds fp16, pin_memory, compile, exact resume
and time to 99% on CUDA):

nccl all-reduce       a process group over every visible GPU (torchrun, one
                      process a GPU) all-reduces a tensor; the sum is checked.
DDP on every GPU      ``train --nproc N --device cuda`` (N = visible GPUs, at
                      least 2) logs the same per-step losses as one GPU within
                      1e-4 relative; images/s of both.
SyncBatchNorm         ``--sync-bn`` with the default model on every GPU: the
                      run says nothing about per-process statistics.
gloo DDP on the CPU   two CPU processes against one (the CPU reference).
compile with DDP      ``--compile`` on two CPU processes against one (too
                      slow for the test suite: about 50 s on two cores).

Exit code 1 if any check failed, 0 otherwise (skips included).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
WORKBENCH = [sys.executable, "-m", "workbench"]
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
TRAIN = ["train", "--quiet", "--dataset", "digits", "--batch-size", "64"]

# The all-reduce check, run by torchrun in each process (one per GPU).
_ALL_REDUCE = """
import os, torch, torch.distributed as dist
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl")
value = torch.full((1024,), float(rank + 1), device="cuda")
dist.all_reduce(value)
expected = world * (world + 1) / 2
assert torch.all(value == expected), (value[:4], expected)
if rank == 0:
    print(f"sum {value[0].item():g} over {world} GPU(s)")
dist.destroy_process_group()
"""


class Row:
    """One line of the table."""

    def __init__(self, name: str, status: str, detail: str) -> None:
        self.name, self.status, self.detail = name, status, detail


def _run(command: list[str], env: dict[str, str] | None = None, timeout: int = 120):
    return subprocess.run(
        command,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _train(tmp: Path, name: str, *flags: str, nproc: int = 1) -> dict:
    """``train`` with ``flags``; its --metrics-json document (raises if it failed)."""
    metrics = tmp / f"{name}.json"
    launch = [*WORKBENCH, *TRAIN, *flags, "--metrics-json", str(metrics)]
    if nproc > 1:
        launch += ["--nproc", str(nproc)]
    done = _run(launch, {"PTCORE_RUNS_DIR": str(tmp / name)})
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1:] or done.returncode)
    document = json.loads(metrics.read_text())
    document["stdout"] = done.stdout
    return document


def _largest_relative(a: dict, b: dict) -> float:
    losses = [[s["loss"] for s in doc["steps"]] for doc in (a, b)]
    if len(losses[0]) != len(losses[1]):
        return float("inf")
    return max(abs(x - y) / abs(x) for x, y in zip(*losses, strict=True))


def check_nccl(gpus: int, tmp: Path) -> Row:
    script = tmp / "all_reduce.py"
    script.write_text(_ALL_REDUCE)
    started = time.perf_counter()
    done = _run([*TORCHRUN, f"--nproc-per-node={gpus}", str(script)])
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        return Row("nccl all-reduce", "FAILED", done.stderr.strip()[-300:])
    return Row("nccl all-reduce", "ok", f"{done.stdout.strip()}, {seconds:.1f} s")


def check_ddp_cuda(gpus: int, tmp: Path) -> Row:
    flags = ("--model", "mlp", "--device", "cuda", "--max-steps", "100")
    one = _train(tmp, "cuda-one", *flags)
    many = _train(tmp, "cuda-many", *flags, nproc=gpus)
    worst = _largest_relative(one, many)
    status = "ok" if worst <= 1e-4 else "FAILED"
    speeds = (doc["final"]["images_per_s"] for doc in (one, many))
    return Row(
        f"DDP on {gpus} GPUs (nccl)",
        status,
        f"largest step-loss difference {worst:.2e} (limit 1e-4); "
        "{:,.0f} img/s on one GPU, {:,.0f} on all".format(*speeds),
    )


def check_sync_bn(gpus: int, tmp: Path) -> Row:
    doc = _train(
        tmp, "sync-bn", "--device", "cuda", "--epochs", "1", "--sync-bn", nproc=gpus
    )
    said = "BatchNorm statistics are per process" in doc["stdout"]
    status = "FAILED" if said else "ok"
    accuracy = doc["final"]["val_accuracy"]
    return Row("SyncBatchNorm", status, f"1 epoch, val accuracy {accuracy:.2%}")


def check_gloo(tmp: Path) -> Row:
    flags = ("--model", "mlp", "--device", "cpu", "--max-steps", "50")
    one = _train(tmp, "cpu-one", *flags)
    two = _train(tmp, "cpu-two", *flags, nproc=2)
    worst = _largest_relative(one, two)
    status = "ok" if worst <= 1e-5 else "FAILED"
    return Row("gloo DDP on the CPU", status, f"largest difference {worst:.2e}")


def check_compile_ddp(tmp: Path) -> Row:
    flags = ("--model", "mlp", "--device", "cpu", "--max-steps", "40", "--compile")
    one = _train(tmp, "compile-one", *flags)
    two = _train(tmp, "compile-two", *flags, nproc=2)
    worst = _largest_relative(one, two)
    status = "ok" if worst <= 1e-4 else "FAILED"
    seconds = two["final"]["compile_seconds"]
    return Row(
        "compile with DDP",
        status,
        f"largest difference {worst:.2e} (limit 1e-4); compiling took {seconds:.1f} s",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    print(f"torch {torch.__version__}, CUDA GPUs visible: {gpus}")
    for index in range(gpus):
        print(f"  cuda:{index} {torch.cuda.get_device_name(index)}")
    no_cuda = "no CUDA GPU visible" if not gpus else None
    one_gpu = "needs 2 or more GPUs (one process a GPU)" if gpus < 2 else None
    checks: list[tuple[str, str | None, Callable[[Path], Row]]] = [
        ("nccl all-reduce", no_cuda, lambda tmp: check_nccl(gpus, tmp)),
        ("DDP on every GPU", no_cuda or one_gpu, lambda t: check_ddp_cuda(gpus, t)),
        ("SyncBatchNorm", no_cuda or one_gpu, lambda t: check_sync_bn(gpus, t)),
        ("gloo DDP on the CPU", None, check_gloo),
        ("compile with DDP", None, check_compile_ddp),
    ]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, skip, check in checks:
            if skip:
                rows.append(Row(name, "skipped", skip))
                continue
            try:
                rows.append(check(Path(scratch)))
            except Exception as exc:  # one failed check must not hide the rest
                rows.append(Row(name, "FAILED", f"{type(exc).__name__}: {exc}"))
            print(f"  {rows[-1].name}: {rows[-1].status}", flush=True)
    width = max(len(row.name) for row in rows)
    print()
    print(f"{'check':<{width}}  {'result':<8}  figures")
    for row in rows:
        print(f"{row.name:<{width}}  {row.status:<8}  {row.detail}")
    return 1 if any(row.status == "FAILED" for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
