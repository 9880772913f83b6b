"""The rows of ``device_check.py`` that train in-process, through the product's paths.

Each ``check_*(ctx)`` prepares runs with ``prepare_run`` and iterates them with
``iter_fit`` (the bundled ``digits`` data unless said otherwise) on
``ctx.device`` and returns one :class:`Row`. ``device_check.py`` runs each in a
child process of its own; the tests call them on the CPU.
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from workbench.core import events as E
from workbench.core.checkpoints.io import load_checkpoint, restore_run, save_checkpoint
from workbench.core.config import TrainConfig
from workbench.core.data.sources import load_arrays
from workbench.core.perf.speed_doctor import ROUNDS, STEPS, diagnose, flags, gain_text
from workbench.core.train.engine import TrainControl, iter_fit, prepare_run
from workbench.core.train.step_clock import PHASES, split_text
from workbench.core.training_run import TrainingRun


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


def check_step_split(ctx: Context) -> Row:
    """Each logged step's split (CUDA events on CUDA) adds up to its step time."""
    run, events = _train(_cfg(ctx, epochs=1), _digits())
    steps = [e for e in events if isinstance(e, E.StepMetrics) and e.global_step > 3]
    errors = [abs(sum(e.phases) - e.step_seconds) / e.step_seconds for e in steps]
    result = events[-1]
    split = dict(zip(PHASES, result.phases, strict=True)) if result.phases else {}
    worst = max(errors) if errors else math.nan
    clock = "CUDA events" if run.device.type == "cuda" else "perf_counter"
    passed = bool(errors) and worst <= 0.05 and split.get("backward", 0) > 0
    return ok_if(
        passed,
        "step split",
        split_text(result.phases) or "not measured",
        f"parts against the step time: worst {worst:.1%} over {len(errors)} logged "
        f"steps (target 5%), timed with {clock}",
    )


def check_copy_phase(ctx: Context, steps: int = 40) -> Row:
    """The copy phase with pin_memory + non_blocking against without, alternating."""
    cfg = _cfg(ctx, loader="dataloader", max_steps=steps)
    arrays, copies, pinned = _digits(), {True: [], False: []}, {}
    for _ in range(2):
        for pin in (True, False):
            run, events = _train(cfg.replace(pin_memory=pin), arrays)
            pinned[pin] = run.loaders.train.pin_memory
            phases = events[-1].phases
            copies[pin].append(phases[PHASES.index("copy")] if phases else math.nan)
    on, off = (1000 * statistics.median(copies[p]) for p in (True, False))
    return ok_if(
        not (math.isnan(on) or math.isnan(off)),
        "copy phase, pin_memory",
        f"copy {on:.3f} ms pinned + non_blocking, {off:.3f} ms without",
        f"a step's copy to {run.device} (DataLoader, 0 workers), medians of 2 "
        f"alternating rounds; batches pinned: {pinned[True]} (only CUDA pins)",
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


def check_speed_doctor(
    ctx: Context, dataset: str = "mnist", steps: int = STEPS, rounds: int = ROUNDS
) -> Row:
    """The speed doctor on ``dataset``'s default run: its diagnosis and advice."""
    cfg = TrainConfig(
        dataset=dataset, data_dir=str(ctx.data_dir), download=False, device=ctx.device
    )
    *_, report = diagnose(cfg, steps=steps, rounds=rounds)
    advice = " ".join(flags(f.changes) for f in report.recommended)
    timed = [f for f in report.findings if f.rounds]
    each = "; ".join(f"{f.name} {gain_text(f)} {f.verdict}" for f in timed)
    sane = math.isfinite(report.images_per_s) and report.images_per_s > 0
    return ok_if(
        not report.cancelled and sane and all(f.gain > 1 for f in report.recommended),
        "speed doctor, default run",
        f"{report.images_per_s:,.0f} img/s; apply: {advice or 'nothing'}",
        f"{dataset} on {report.device} in {report.precision}, {report.rounds} rounds "
        f"of {report.steps} steps, noise {report.noise:.0%}: {report.diagnosis}. "
        f"{each}",
    )
