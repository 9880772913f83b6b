"""Exercise every CUDA path of the workbench and print one table (under 4 minutes).

Run on a CUDA machine: ``.venv/bin/python bench/device_check.py``. Each check
prints one row: its name, ok / FAIL / skipped, a figure, and what it saw. On a
machine without CUDA every CUDA check is skipped with its reason and the CPU
checks still run, so the script itself is tested everywhere. Exit code 1 if any
check failed, 0 otherwise (skips included).

The rows that train through the product's ``prepare_run`` and ``iter_fit``
(``device_rows.py``, on the bundled ``digits`` data unless said otherwise) each
run in a child process of their own, with a time limit: a CUDA error or a hang
there fails that row only, and each starts from a fresh CUDA context.

fp16 + GradScaler   precision fp16: autocast gives float16 logits, the engine's
                    ``torch.amp.GradScaler`` is on and scales the loss; accuracy.
bf16                precision bf16: bfloat16 logits, no scaler; accuracy.
fast path on GPU    the fast loader keeps the whole dataset on the GPU; img/s.
DataLoader + pin    the DataLoader path with ``pin_memory`` pins batches and
                    copies them with ``non_blocking``; images/s with pin_memory on
                    and off, alternating (0 workers, medians of 2 rounds each),
                    then a short pinned run through 2 worker processes.
exact resume        a dropout model stopped mid-epoch, saved, RNGs scrambled,
                    resumed: the same per-step losses and bit-identical weights
                    as the straight run (CUDA RNG state in the checkpoint,
                    deterministic algorithms and CUBLAS_WORKSPACE_CONFIG set).
torch.compile       ``compile=True`` logs the losses of eager mode (1e-3
                    relative); compile seconds and both speeds.
time to 99% MNIST   default settings on real MNIST (``--data-dir``): training
                    seconds until the test accuracy reaches 99%.
step split          each logged step's time split into data, copy, forward,
                    backward, optimizer and other (CUDA events on CUDA): the
                    parts add up to the step time within 5%.
copy phase          the copy phase of a step with ``pin_memory`` (and so
                    ``non_blocking``) against without, alternating.
speed doctor        ``doctor-speed`` on the default run of real MNIST: its
                    diagnosis, each candidate's gain, what it recommends.
nccl all-reduce     a process group over every visible GPU (torchrun, one
                    process a GPU) all-reduces a tensor; the sum is checked.
DDP on every GPU    ``train --nproc N --device cuda`` (N = visible GPUs, at
                    least 2) logs the same per-step losses as one GPU within
                    1e-4 relative; images/s of both.
SyncBatchNorm       ``--sync-bn`` with the default model on every GPU: the run
                    says nothing about per-process statistics.
gloo DDP on the CPU two CPU processes against one (the CPU reference).
compile with DDP    ``--compile`` on two CPU processes against one.

``--device cpu`` runs the training rows on the CPU (fp16 is skipped: the
workbench refuses it there): a dry run of this script's own code.
``--only KEY`` (repeatable) picks rows: fp16 bf16 fast pin resume compile
mnist99 split copy nccl ddp syncbn gloo compile-ddp doctor.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import torch
from device_rows import (
    Context,
    Row,
    check_bf16,
    check_compile,
    check_copy_phase,
    check_exact_resume,
    check_fast_path,
    check_fp16,
    check_pin_memory,
    check_speed_doctor,
    check_step_split,
    check_time_to_99,
    ok_if,
)

ROOT = Path(__file__).resolve().parents[1]
WORKBENCH = [sys.executable, "-m", "workbench"]
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
TRAIN = ["train", "--quiet", "--dataset", "digits", "--batch-size", "64"]
NO_CUDA = "no CUDA device (torch.cuda.is_available() is False)"
BUDGET_S = 225  # the whole table in under 4 minutes, with room for the last row

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


# ------------------------------------------------------- command-line rows


def _run(command: list[str], env: dict[str, str] | None = None, timeout: int = 120):
    return subprocess.run(
        command,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _launch(tmp: Path, name: str, *flags: str, nproc: int = 1):
    """Start ``train`` with ``flags``; wait for it with :func:`_metrics`."""
    metrics = tmp / f"{name}.json"
    launch = [*WORKBENCH, *TRAIN, *flags, "--metrics-json", str(metrics)]
    if nproc > 1:
        launch += ["--nproc", str(nproc)]
    process = subprocess.Popen(
        launch,
        cwd=ROOT,
        env={**os.environ, "PTCORE_RUNS_DIR": str(tmp / name)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return process, metrics


def _metrics(started, timeout: int = 120) -> dict:
    """A started ``train``'s --metrics-json document (raises if it failed)."""
    process, metrics = started
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    if process.returncode != 0:
        raise RuntimeError(stderr.strip().splitlines()[-1:] or process.returncode)
    document = json.loads(metrics.read_text())
    document["stdout"] = stdout
    return document


def _train_cli(tmp: Path, name: str, *flags: str, nproc: int = 1) -> dict:
    return _metrics(_launch(tmp, name, *flags, nproc=nproc))


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
        return Row("nccl all-reduce", "FAIL", "-", done.stderr.strip()[-300:])
    return Row("nccl all-reduce", "ok", f"{seconds:.1f} s", done.stdout.strip())


def check_ddp_cuda(gpus: int, tmp: Path) -> Row:
    flags = ("--model", "mlp", "--device", "cuda", "--max-steps", "100")
    # One after the other: their speeds are compared.
    one = _train_cli(tmp, "cuda-one", *flags)
    many = _train_cli(tmp, "cuda-many", *flags, nproc=gpus)
    worst = _largest_relative(one, many)
    speeds = (doc["final"]["images_per_s"] for doc in (one, many))
    return ok_if(
        worst <= 1e-4,
        f"DDP on {gpus} GPUs (nccl)",
        "{:,.0f} img/s on one GPU, {:,.0f} on all".format(*speeds),
        f"largest step-loss difference {worst:.2e} (limit 1e-4)",
    )


def check_sync_bn(gpus: int, tmp: Path) -> Row:
    doc = _train_cli(
        tmp, "sync-bn", "--device", "cuda", "--epochs", "1", "--sync-bn", nproc=gpus
    )
    said = "BatchNorm statistics are per process" in doc["stdout"]
    accuracy = doc["final"]["val_accuracy"]
    detail = "the run said its statistics are per process" if said else "1 epoch"
    return ok_if(not said, "SyncBatchNorm", f"val {accuracy:.1%}", detail)


def _one_and_two(tmp: Path, name: str, flags: tuple[str, ...]) -> tuple[dict, dict]:
    """One CPU process and two, started side by side (no speed is compared)."""
    one = _launch(tmp, f"{name}-one", *flags)
    two = _launch(tmp, f"{name}-two", *flags, nproc=2)
    return _metrics(one), _metrics(two)


def check_gloo(tmp: Path) -> Row:
    flags = ("--model", "mlp", "--device", "cpu", "--max-steps", "50")
    one, two = _one_and_two(tmp, "gloo", flags)
    worst = _largest_relative(one, two)
    return ok_if(
        worst <= 1e-5,
        "gloo DDP on the CPU",
        f"{worst:.1e}",
        f"largest step-loss difference of 2 processes to 1 {worst:.2e} (limit 1e-5)",
    )


def check_compile_ddp(tmp: Path) -> Row:
    flags = ("--model", "mlp", "--device", "cpu", "--max-steps", "40", "--compile")
    one, two = _one_and_two(tmp, "compile", flags)
    worst = _largest_relative(one, two)
    seconds = two["final"]["compile_seconds"]
    return ok_if(
        worst <= 1e-4,
        "compile with DDP",
        f"compiling took {seconds:.1f} s",
        f"largest step-loss difference of 2 processes to 1 {worst:.2e} (limit 1e-4)",
    )


# ------------------------------------------------------------------ the table

# Rows that train in this program: run each in a child process (key: function,
# time limit in seconds).
TRAINING_ROWS: dict[str, tuple[Callable[[Context], Row], int]] = {
    "fp16": (check_fp16, 90),
    "bf16": (check_bf16, 90),
    "fast": (check_fast_path, 90),
    "pin": (check_pin_memory, 120),
    "resume": (check_exact_resume, 90),
    "compile": (check_compile, 150),
    "mnist99": (check_time_to_99, 120),
    "split": (check_step_split, 90),
    "copy": (check_copy_phase, 120),
    "doctor": (check_speed_doctor, 150),
}
NAMES = {
    "fp16": "fp16 + GradScaler",
    "bf16": "bf16",
    "fast": "fast path, data on the device",
    "pin": "DataLoader + pin_memory",
    "resume": "exact resume",
    "compile": "torch.compile",
    "mnist99": "time to 99% on MNIST",
    "split": "step split",
    "copy": "copy phase, pin_memory",
    "nccl": "nccl all-reduce",
    "ddp": "DDP on every GPU",
    "syncbn": "SyncBatchNorm",
    "gloo": "gloo DDP on the CPU",
    "compile-ddp": "compile with DDP",
    "doctor": "speed doctor, default run",  # last: the longest row
}


def _default_data_dir() -> Path:
    beside, inside = ROOT.parent / "shared/data/mnist", ROOT / "shared/data/mnist"
    return beside if beside.exists() or not inside.exists() else inside


def skip_reason(key: str, device: str, gpus: int, data_dir: Path) -> str | None:
    """Why row ``key`` cannot run here, or None."""
    cuda_wanted = key in TRAINING_ROWS and device.startswith("cuda")
    if (cuda_wanted or key in ("nccl", "ddp", "syncbn")) and not gpus:
        return NO_CUDA
    if key == "fp16" and not device.startswith("cuda"):
        return f"fp16 needs a CUDA device (the workbench refuses it on {device})"
    if key in ("ddp", "syncbn") and gpus < 2:
        return f"needs 2 or more GPUs, one process a GPU ({gpus} visible)"
    if key in ("mnist99", "doctor") and not (data_dir / "MNIST").is_dir():
        return f"no MNIST files in {data_dir} (give --data-dir)"
    return None


def run_in_child(key: str, ctx: Context, timeout: float) -> Row:
    """Row ``key`` in a fresh process: a crash or hang fails this row only."""
    answer = ctx.tmp / f"{key}.json"
    command = [sys.executable, str(Path(__file__).resolve()), "--row", key]
    command += ["--device", ctx.device, "--data-dir", str(ctx.data_dir)]
    command += ["--row-json", str(answer), "--scratch", str(ctx.tmp)]
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    try:
        done = _run(command, {"PYTHONPATH": path}, timeout=math.ceil(timeout))
    except subprocess.TimeoutExpired:
        return Row(NAMES[key], "FAIL", "-", f"no answer within {timeout:.0f} s")
    if answer.is_file():
        return Row(**json.loads(answer.read_text()))
    last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
    return Row(NAMES[key], "FAIL", "-", f"the process died: {last}")


def run_row_here(key: str, ctx: Context) -> Row:
    """Row ``key`` in this process; an exception is a FAIL with its one line."""
    try:
        return TRAINING_ROWS[key][0](ctx)
    except Exception as exc:
        return Row(NAMES[key], "FAIL", "-", _one_line(exc))


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def print_table(rows: list[Row]) -> None:
    """The rows under a header, one line each."""
    name_w = max(len("check"), *(len(r.name) for r in rows))
    fig_w = max(len("figure"), *(len(r.figure) for r in rows))
    print()
    print(f"{'check':<{name_w}}  {'result':<7}  {'figure':<{fig_w}}  detail")
    for r in rows:
        print(f"{r.name:<{name_w}}  {r.status:<7}  {r.figure:<{fig_w}}  {r.detail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=list(NAMES), default=[])
    parser.add_argument("--device", default="cuda", help="for the training rows")
    parser.add_argument("--data-dir", type=Path, default=_default_data_dir())
    parser.add_argument("--budget", type=float, default=BUDGET_S)
    parser.add_argument("--row", choices=list(TRAINING_ROWS), help=argparse.SUPPRESS)
    parser.add_argument("--row-json", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--scratch", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.row:  # the child of run_in_child
        row = run_row_here(args.row, Context(args.device, args.data_dir, args.scratch))
        args.row_json.write_text(json.dumps(asdict(row)))
        return 0
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    print(f"torch {torch.__version__}, CUDA GPUs visible: {gpus}")
    for index in range(gpus):
        print(f"  cuda:{index} {torch.cuda.get_device_name(index)}")
    started = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        ctx = Context(args.device, args.data_dir, Path(scratch))
        subprocess_rows: dict[str, Callable[[], Row]] = {
            "nccl": lambda: check_nccl(gpus, ctx.tmp),
            "ddp": lambda: check_ddp_cuda(gpus, ctx.tmp),
            "syncbn": lambda: check_sync_bn(gpus, ctx.tmp),
            "gloo": lambda: check_gloo(ctx.tmp),
            "compile-ddp": lambda: check_compile_ddp(ctx.tmp),
        }
        for key in args.only or list(NAMES):
            left = args.budget - (time.perf_counter() - started)
            skip = skip_reason(key, args.device, gpus, args.data_dir)
            if skip is None and left <= 0:
                skip = f"the {args.budget:.0f} s budget is spent (run --only {key})"
            if skip:
                row = Row(NAMES[key], "skipped", "-", skip)
            elif key in TRAINING_ROWS:
                row = run_in_child(key, ctx, min(TRAINING_ROWS[key][1], left + 15))
            else:
                try:
                    row = subprocess_rows[key]()
                except Exception as exc:  # one failed check must not hide the rest
                    row = Row(NAMES[key], "FAIL", "-", _one_line(exc))
            rows.append(row)
            figure = "" if row.figure == "-" else f" {row.figure};"
            print(f"  {row.name}: {row.status}:{figure} {row.detail}", flush=True)
    print_table(rows)
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 1 if any(row.status == "FAIL" for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
