"""Exercise every CUDA path of the workbench and print one table (under 4 minutes).

Run on a CUDA machine: ``.venv/bin/python bench/device_check.py``. Each check
prints one row: its name, ok / FAIL / skipped, a figure, and what it saw. On a
machine without CUDA every CUDA check is skipped with its reason and the CPU
checks still run, so the script itself is tested everywhere. Exit code 1 if any
check failed, 0 otherwise (skips included).

The rows that train in this program (the product's ``prepare_run`` and
``iter_fit``, on the bundled ``digits`` data unless said otherwise) each run in
a child process of their own, with a time limit: a CUDA error or a hang there
fails that row only, and each starts from a fresh CUDA context.

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
mnist99 nccl ddp syncbn gloo compile-ddp.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from workbench.core import events as E
from workbench.core.checkpoints import load_checkpoint, restore_run, save_checkpoint
from workbench.core.config import TrainConfig
from workbench.core.data import load_arrays
from workbench.core.engine import TrainControl, iter_fit, prepare_run
from workbench.core.training_run import TrainingRun

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


@dataclass(frozen=True)
class Row:
    """One line of the table: status is ok, FAIL or skipped."""

    name: str
    status: str
    figure: str
    detail: str


def ok_if(passed: bool, name: str, figure: str, detail: str) -> Row:
    """A row that is ok when ``passed``, FAIL otherwise."""
    return Row(name, "ok" if passed else "FAIL", figure, detail)


@dataclass(frozen=True)
class Context:
    """What every training row needs: where to train, the MNIST folder, scratch."""

    device: str
    data_dir: Path
    tmp: Path


# ------------------------------------------------------------ training rows


def _digits():
    return load_arrays("digits")


def _cfg(ctx: Context, **changes) -> TrainConfig:
    base = TrainConfig(device=ctx.device, batch_size=64, epochs=2, log_every=1)
    return base.replace(**changes)


def _train(cfg: TrainConfig | TrainingRun, arrays=None, stop_at: int | None = None):
    """Iterate a run (stopped after ``stop_at``); the run and its events.

    ``run.seen`` says what the first training batch's forward saw (not for a
    compiled model: a hook would change what it compiles).
    """
    run = cfg if isinstance(cfg, TrainingRun) else prepare_run(cfg, arrays=arrays)
    seen: dict[str, object] = {}

    def look(module, args, output) -> None:
        if module.training and "dtype" not in seen:
            seen["dtype"], seen["input_device"] = output.dtype, args[0].device

    if not run.config.compile:
        run.model.register_forward_hook(look)
    control = TrainControl()
    events = []
    for event in iter_fit(run, control):
        events.append(event)
        if isinstance(event, E.StepMetrics) and event.global_step == stop_at:
            control.request_stop()
    run.loaders.release_workers()
    run.seen = seen  # type: ignore[attr-defined]
    return run, events


def _losses(events) -> list[float]:
    return [e.loss for e in events if isinstance(e, E.StepMetrics)]


def _steady_speed(events, warmup: int = 3) -> float:
    """Median images/s of the logged steps after ``warmup`` (start-up left out)."""
    rates = [
        e.images_per_s
        for e in events
        if isinstance(e, E.StepMetrics) and e.global_step > warmup
    ]
    return statistics.median(rates) if rates else math.nan


@contextlib.contextmanager
def _recorded_scalers() -> Iterator[list[torch.amp.GradScaler]]:
    """Every ``torch.amp.GradScaler`` the engine makes meanwhile."""
    made: list[torch.amp.GradScaler] = []
    real = torch.amp.GradScaler

    class Recording(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    torch.amp.GradScaler = Recording  # type: ignore[misc]
    try:
        yield made
    finally:
        torch.amp.GradScaler = real  # type: ignore[misc]


def _mixed(ctx: Context, precision: str, name: str) -> Row:
    with _recorded_scalers() as scalers:
        run, events = _train(_cfg(ctx, precision=precision), _digits())
    result, (scaler,) = events[-1], scalers
    dtype = run.seen["dtype"]
    want = torch.float16 if precision == "fp16" else torch.bfloat16
    scaled = scaler.is_enabled() and scaler._scale is not None
    problems = [f"logits were {dtype}, not {want}"] if dtype != want else []
    if scaled != (precision == "fp16"):
        problems.append("the GradScaler was " + ("on" if scaled else "off"))
    if not all(map(math.isfinite, _losses(events))):
        problems.append("a loss was not finite")
    if result.val_accuracy < 0.9:
        problems.append("val accuracy under 90%")
    scale = f", loss scale {scaler.get_scale():g}" if scaled else ", no scaler"
    detail = "; ".join(problems) or f"{dtype} logits{scale}"
    figure = f"val {result.val_accuracy:.1%}, {result.images_per_s:,.0f} img/s"
    return ok_if(not problems, name, figure, detail)


def check_fp16(ctx: Context) -> Row:
    return _mixed(ctx, "fp16", "fp16 + GradScaler")


def check_bf16(ctx: Context) -> Row:
    return _mixed(ctx, "bf16", "bf16")


def check_fast_path(ctx: Context) -> Row:
    run, events = _train(_cfg(ctx, loader="fast"), _digits())
    stored = run.loaders.train.data_device
    passed = stored.type == run.device.type and run.seen["input_device"] == run.device
    return ok_if(
        passed,
        "fast path, data on the device",
        f"{_steady_speed(events):,.0f} img/s",
        f"dataset stored on {stored}, batches on {run.seen['input_device']}",
    )


def check_pin_memory(ctx: Context, steps: int = 30) -> Row:
    """Pinned against unpinned batches (0 workers), then pinned through 2 workers."""
    cfg = _cfg(ctx, loader="dataloader", max_steps=steps)
    arrays, speeds = _digits(), {True: [], False: []}
    pinned = {}
    for _ in range(2):  # alternating, so the machine's noise hits both alike
        for pin in (True, False):
            run, events = _train(cfg.replace(pin_memory=pin), arrays)
            pinned[pin] = run.loaders.train.pin_memory
            speeds[pin].append(_steady_speed(events))
    workers, _ = _train(cfg.replace(pin_memory=True, workers=2, max_steps=8), arrays)
    on, off = (statistics.median(speeds[p]) for p in (True, False))
    cuda = run.device.type == "cuda"
    seen = {r.seen["input_device"] for r in (run, workers)}
    passed = (
        pinned == {True: cuda, False: False}
        and workers.loaders.train.pin_memory == cuda
        and seen == {run.device}
    )
    return ok_if(
        passed,
        "DataLoader + pin_memory",
        f"pinned {on:,.0f}, unpinned {off:,.0f} img/s ({on / off:.2f}x)",
        f"pinned: {pinned[True]} with 0 workers, {workers.loaders.train.pin_memory} "
        f"with 2 (only CUDA pins); batches on {', '.join(map(str, seen))}; "
        "medians of 2 alternating rounds, 0 workers",
    )


def _scramble_rngs() -> None:
    random.seed(12345)
    np.random.seed(12345)
    torch.manual_seed(12345)  # every CUDA device's generator too
    torch.rand(1000)
    if torch.cuda.is_available():
        torch.rand(1000, device="cuda")


def check_exact_resume(ctx: Context, stop_at: int = 30, steps: int = 46) -> Row:
    """Straight run against stopped, saved, scrambled and resumed (dropout: cnn)."""
    cfg, arrays = _cfg(ctx, model="cnn", max_steps=steps), _digits()
    straight, straight_events = _train(cfg, arrays)
    first, first_events = _train(cfg, arrays, stop_at=stop_at)
    path = save_checkpoint(ctx.tmp / "half.pt", first)
    _scramble_rngs()
    resumed, resumed_events = _train(restore_run(load_checkpoint(path), arrays=arrays))
    same_losses = _losses(first_events) + _losses(resumed_events) == _losses(
        straight_events
    )
    states = straight.model.state_dict(), resumed.model.state_dict()
    same_weights = all(torch.equal(states[0][k], states[1][k]) for k in states[0])
    needs = {
        "CUDA RNG in the checkpoint": "cuda" in load_checkpoint(path)["rng"],
        "deterministic algorithms": torch.are_deterministic_algorithms_enabled(),
        "CUBLAS_WORKSPACE_CONFIG": "CUBLAS_WORKSPACE_CONFIG" in os.environ,
    }
    cuda = resumed.device.type == "cuda"
    missing = [name for name, held in needs.items() if cuda and not held]
    steps = straight.global_step
    detail = (
        f"stopped at step {stop_at} of {steps}: losses "
        + ("identical" if same_losses else "DIFFER")
        + ", weights "
        + ("bit-identical" if same_weights else "DIFFER")
        + (f"; missing: {', '.join(missing)}" if missing else "")
    )
    passed = same_losses and same_weights and not missing
    return ok_if(passed, "exact resume", f"{steps} steps", detail)


def check_compile(ctx: Context, steps: int = 20) -> Row:
    cfg, arrays = _cfg(ctx, max_steps=steps), _digits()
    _, eager = _train(cfg, arrays)
    _, compiled = _train(cfg.replace(compile=True), arrays)
    # A step that compiles logs no loss: compare the steps both logged.
    losses = [
        {e.global_step: e.loss for e in events if isinstance(e, E.StepMetrics)}
        for events in (eager, compiled)
    ]
    common = losses[0].keys() & losses[1].keys()
    worst = max(
        (abs(losses[0][s] - losses[1][s]) / abs(losses[0][s]) for s in common),
        default=math.inf,
    )
    if len(common) < steps // 2:
        worst = math.inf
    return ok_if(
        worst <= 1e-3,
        "torch.compile",
        f"compiling took {compiled[-1].compile_seconds:.1f} s",
        f"largest step-loss difference to eager {worst:.1e} over {len(common)} "
        f"steps (limit 1e-3); {eager[-1].images_per_s:,.0f} img/s eager, "
        f"{compiled[-1].images_per_s:,.0f} compiled",
    )


def check_time_to_99(ctx: Context) -> Row:
    cfg = TrainConfig(
        dataset="mnist", data_dir=str(ctx.data_dir), download=False, device=ctx.device
    )
    arrays = load_arrays("mnist", str(ctx.data_dir), download=False)
    _, events = _train(cfg, arrays)
    seconds, reached = 0.0, None
    epochs = [e for e in events if isinstance(e, E.EpochMetrics)]
    for epoch in epochs:
        seconds += epoch.seconds
        if epoch.val_accuracy >= 0.99 and reached is None:
            reached = seconds
    best = max((e.val_accuracy for e in epochs), default=math.nan)
    figure = f"{reached:.1f} s" if reached is not None else "not reached"
    return ok_if(
        reached is not None,
        "time to 99% on MNIST",
        figure,
        f"default settings ({cfg.model}, batch {cfg.batch_size}, "
        f"{cfg.resolved_epochs} epoch(s)): best test accuracy {best:.2%}, "
        f"{seconds:.1f} s of training",
    )


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
}
NAMES = {
    "fp16": "fp16 + GradScaler",
    "bf16": "bf16",
    "fast": "fast path, data on the device",
    "pin": "DataLoader + pin_memory",
    "resume": "exact resume",
    "compile": "torch.compile",
    "mnist99": "time to 99% on MNIST",
    "nccl": "nccl all-reduce",
    "ddp": "DDP on every GPU",
    "syncbn": "SyncBatchNorm",
    "gloo": "gloo DDP on the CPU",
    "compile-ddp": "compile with DDP",
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
    if key == "mnist99" and not (data_dir / "MNIST").is_dir():
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
