"""The training engine: prepare a run, then iterate it as a generator of events.

``iter_fit`` is the standard loop (zero_grad, forward, loss, backward, step) and
nothing else; the window iterates it in a thread, the command line in a for
loop. Stop and pause are checked at every batch boundary. The run's state lives
in ``training_run``, what is measured between steps in ``measures``; both are
re-exported here for callers that import them from the engine.
"""

from __future__ import annotations

import math
import random
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import torch
from torch import nn

from workbench.core.config import TrainConfig
from workbench.core.data.build import build_loaders
from workbench.core.data.registry import DatasetInfo, DownloadProgress, ImageArrays
from workbench.core.distributed import ddp
from workbench.core.distributed import env as distributed
from workbench.core.events import (
    CompileFinished,
    CompileStarted,
    Notice,
    RunStarted,
    TrainEvent,
    TrainResult,
    WeightsReady,
)
from workbench.core.models.builtins import build_model, head_name, snapshot_state
from workbench.core.models.catalog import pretrained
from workbench.core.models.torchvision_models import replaced_head_notice
from workbench.core.perf.profiling import check_steps
from workbench.core.train import class_weights
from workbench.core.train.best_epoch import run_stop_reason
from workbench.core.train.determinism import deterministic_kernels
from workbench.core.train.devices import DeviceError, resolve_device
from workbench.core.train.feature_cache import FeatureFeed
from workbench.core.train.freezing import (
    count_parameters,
    reconcile_optimizer,
    set_frozen,
    train_mode,
    trainable_parameters,
)
from workbench.core.train.precision import resolve_precision
from workbench.core.train.probes import autocast_context as autocast_context
from workbench.core.train.probes import evaluate as evaluate
from workbench.core.train.probes import evaluate_one_batch as evaluate_one_batch
from workbench.core.train.probes import evaluate_predictions as evaluate_predictions
from workbench.core.train.probes import layer_health as layer_health
from workbench.core.train.probes import mean_loss_and_accuracy, sync_device
from workbench.core.train.probes import weight_histograms as weight_histograms
from workbench.core.train.profiled_steps import ProfiledSteps
from workbench.core.train.recompile_notices import with_recompile_notices
from workbench.core.train.step_clock import (
    BACKWARD,
    DATA,
    FORWARD,
    OPTIMIZER,
    OTHER,
    StepClock,
)
from workbench.core.train.step_reports import (
    Interval,
    PhaseTotals,
    TrainingError,
    compile_overhead,
    epoch_metrics,
    log_step,
)
from workbench.core.training_run import MetricHistory as MetricHistory
from workbench.core.training_run import TrainingRun as TrainingRun

_ALL_FROZEN = (
    "every parameter is frozen, so there is nothing to train: "
    "unfreeze at least one layer"
)


class TrainControl:
    """Stop and pause flags shared between the caller and a running engine.

    Plain ``threading.Event``s: the engine polls them between batches, so a
    button handler in another thread may call these methods directly.
    """

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._running = threading.Event()
        self._running.set()
        self._mask_changed = threading.Event()
        self._weights_wanted = threading.Event()
        self._weights_lock = threading.Lock()
        self._weights: tuple[int, dict[str, torch.Tensor]] | None = None
        self._profile: tuple[int, Path] | None = None

    def request_stop(self) -> None:
        """Finish the current batch, then end the run (also ends a pause)."""
        self._stop.set()
        self._running.set()

    def pause(self) -> None:
        """Hold the run before its next batch."""
        self._running.clear()

    def resume(self) -> None:
        """Let a paused run go on."""
        self._running.set()

    @property
    def stop_requested(self) -> bool:
        """True once :meth:`request_stop` was called."""
        return self._stop.is_set()

    @property
    def paused(self) -> bool:
        """True between :meth:`pause` and :meth:`resume`."""
        return not self._running.is_set()

    def wait_if_paused(self) -> None:
        """Block while paused; returns at once otherwise."""
        while not self._running.wait(0.1):
            pass

    def notify_mask_changed(self) -> None:
        """Tell the engine ``requires_grad`` was edited (while paused)."""
        self._mask_changed.set()

    def take_mask_changed(self) -> bool:
        """True once after each :meth:`notify_mask_changed`."""
        if self._mask_changed.is_set():
            self._mask_changed.clear()
            return True
        return False

    def request_weights(self) -> None:
        """Ask the engine for a copy of the weights at its next batch boundary.

        The engine answers with a :class:`WeightsReady` event; the copy is then
        waiting in :meth:`take_weights`. Reading the model from another thread
        while it trains could see a half-updated step; this cannot.
        """
        self._weights_wanted.set()

    @property
    def weights_requested(self) -> bool:
        """True while a :meth:`request_weights` is unanswered."""
        return self._weights_wanted.is_set()

    def offer_weights(self, global_step: int, state: dict[str, torch.Tensor]) -> None:
        """Engine side: hand over the copy asked for (replaces an untaken one)."""
        with self._weights_lock:
            self._weights = (global_step, state)
        self._weights_wanted.clear()

    def request_profile(self, steps: int, trace_path: Path) -> None:
        """Profile the next ``steps`` steps (after a short warm-up) into ``trace_path``.

        The engine answers with a ``ProfileReport`` event once they are
        recorded, or when the run ends first.
        """
        self._profile = (check_steps(steps), Path(trace_path))

    def take_profile_request(self) -> tuple[int, Path] | None:
        """Engine side: the profile asked for since the last call, once."""
        request, self._profile = self._profile, None
        return request

    def take_weights(self) -> tuple[int, dict[str, torch.Tensor]] | None:
        """The latest copy and the step it was taken after, once; else None."""
        with self._weights_lock:
            weights, self._weights = self._weights, None
        return weights


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch so a CPU run repeats exactly.

    Also asks oneDNN for its deterministic algorithms: some of its CPU kernels
    (a convolution's weight gradient with no input gradient, as behind a frozen
    first layer) may otherwise sum partial results in a varying order. It
    costs no throughput on small-cnn/MNIST, with or without a frozen block.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.backends.mkldnn.deterministic = True


# A run of up to this many steps logs every step (a live curve shows them all);
# a longer one logs about this many points in all. Counted in steps, not time,
# so the logged steps repeat exactly and Reproduce can compare them.
AUTO_LOG_POINTS = 5000


def resolve_log_every(log_every: int | None, total_steps: int) -> int:
    """Steps between two logged points: ``log_every``, or automatic when None."""
    if log_every is not None:
        return log_every
    return max(1, math.ceil(total_steps / AUTO_LOG_POINTS))


# Layer health (every layer's norms, plus a ledger line) is sampled at most every
# this many steps, so logging every step stays cheap: the health sample is most
# of a logged step's extra work (about 2.4 ms on small-cnn/MNIST).
HEALTH_EVERY = 10


def health_due(global_step: int, log_every: int) -> bool:
    """Whether the log step ``global_step`` also samples layer health.

    Every ``log_every`` multiple of at least :data:`HEALTH_EVERY` steps, so the
    samples fall on log steps and an interval of 10 or more samples at each.
    """
    return global_step % (log_every * math.ceil(HEALTH_EVERY / log_every)) == 0


def check_precision(precision: str, device: torch.device) -> None:
    """Raise :class:`TrainingError` for a precision this device cannot train in."""
    if precision == "fp16" and device.type != "cuda":
        raise TrainingError(
            "precision fp16 needs a CUDA device (it trains with a gradient scaler); "
            f"this run uses {device.type}: choose bf16 or fp32"
        )
    if precision == "bf16" and device.type not in ("cpu", "cuda"):
        raise TrainingError(
            f"precision bf16 autocast is not supported on {device.type}"
        )


def build_optimizer(cfg: TrainConfig, model: nn.Module) -> torch.optim.Optimizer:
    """The configured optimizer over the trainable parameters only."""
    params = trainable_parameters(model)
    if not params:
        raise TrainingError(_ALL_FROZEN)
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(
            params, lr=cfg.lr, momentum=0.9, weight_decay=cfg.weight_decay
        )
    optim_cls = torch.optim.AdamW if cfg.optimizer == "adamw" else torch.optim.Adam
    return optim_cls(params, lr=cfg.lr, weight_decay=cfg.weight_decay)


def build_scheduler(
    cfg: TrainConfig, optimizer: torch.optim.Optimizer, total_steps: int
) -> torch.optim.lr_scheduler.LRScheduler | None:
    """One-cycle warm-up and anneal over the whole run, or none."""
    if cfg.schedule == "constant":
        return None
    return torch.optim.lr_scheduler.OneCycleLR(
        optimizer,
        max_lr=cfg.lr,
        total_steps=max(total_steps, 1),
        # Adam's beta1 is not a momentum OneCycle should cycle.
        cycle_momentum=cfg.optimizer == "sgd",
    )


def prepare_run(
    cfg: TrainConfig,
    *,
    arrays: ImageArrays | None = None,
    progress: Callable[[DownloadProgress], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> TrainingRun:
    """Load data, build the model (materialised), freeze, and build the optimizer."""
    try:
        device = distributed.rank_device(resolve_device(cfg.device))
    except DeviceError as exc:
        raise TrainingError(str(exc)) from exc
    precision, _ = resolve_precision(cfg.precision, device)
    check_precision(precision, device)
    deterministic_kernels(device)  # before the first CUDA computation
    processes = distributed.start(device)
    seed_everything(cfg.seed)
    loaders = build_loaders(
        cfg, device, arrays=arrays, progress=progress, cancel=cancel
    )
    model = build_model(
        cfg.model,
        loaders.info.num_classes,
        seed=cfg.seed,
        input_shape=loaders.info.image_shape,
        weights=cfg.weights,
        progress=progress,
        cancel=cancel,
    )
    # channels_last: oneDNN's convolutions run faster on it (~1.3x on a 2-core CPU).
    layout = torch.channels_last if cfg.channels_last else torch.contiguous_format
    model = model.to(device, memory_format=layout)
    set_frozen(model, cfg.frozen)
    run_notices = [*loaders.notices, *_model_notices(cfg, model, loaders.info)]
    total_steps = cfg.resolved_epochs * len(loaders.train)
    if cfg.max_steps is not None:
        total_steps = min(total_steps, cfg.max_steps)
    optimizer = build_optimizer(cfg, model)
    scheduler = build_scheduler(cfg, optimizer, total_steps)
    if cfg.compile:
        # In place: the module keeps its own state_dict keys (no "_orig_mod.").
        model.compile(mode=cfg.compile_mode)
    run = TrainingRun(
        config=cfg,
        model=model,
        optimizer=optimizer,
        scheduler=scheduler,
        loaders=loaders,
        device=device,
        total_steps=total_steps,
        precision=precision,
        log_every=resolve_log_every(cfg.log_every, total_steps),
        notices=run_notices + ([processes] if processes else []),
        class_weights=class_weights.prepare(cfg, loaders, device),
    )
    ddp.attach(run)  # after freezing: DDP leaves frozen parameters out
    return run


def _model_notices(cfg: TrainConfig, model: nn.Module, info: DatasetInfo) -> list[str]:
    """Which layer a pretrained model's new head replaced."""
    if not pretrained(cfg.model, cfg.weights):
        return []
    head = head_name(model)
    return [replaced_head_notice(cfg.model, cfg.weights, head, info.num_classes)]


def iter_fit(
    run: TrainingRun, control: TrainControl | None = None
) -> Iterator[TrainEvent]:
    """Train ``run`` to its end, yielding events; the last one is a TrainResult.

    Raises
    ------
    TrainingError
        When the loss stops being finite (checked at every log step, so within
        ``run.log_every`` steps of the first bad one).
    """
    control = control or TrainControl()
    cfg, model, device = run.config, run.model, run.device
    total_params, trainable = count_parameters(model)
    feed = yield from FeatureFeed.prepare(run, lambda: control.stop_requested)
    yield RunStarted(
        total_steps=run.total_steps,
        steps_per_epoch=run.steps_per_epoch,
        start_step=run.global_step,
        device=str(device),
        precision=run.precision,
        model=cfg.model,
        parameters=total_params,
        trainable_parameters=trainable,
        feature_cache=feed.status,
    )
    for message in run.notices:
        yield Notice(message)

    clock = StepClock(device, phases=run.time_phases)
    run.loaders.train.copying = clock.copying
    profiled = ProfiledSteps(clock, device)
    try:
        steps = _train(run, control, feed, clock, profiled)
        yield from with_recompile_notices(steps) if cfg.compile else steps
    finally:
        profiled.close()  # a failed or abandoned run leaves no profiler running


def _train(
    run: TrainingRun,
    control: TrainControl,
    feed: FeatureFeed,
    clock: StepClock,
    profiled: ProfiledSteps,
) -> Iterator[TrainEvent]:
    """The loop of :func:`iter_fit`, from the first batch to the TrainResult."""
    cfg, model, device = run.config, run.model, run.device
    scaler = torch.amp.GradScaler(device.type, enabled=run.precision == "fp16")
    interval = Interval(device)
    epoch_stats = Interval(device)
    step_times: list[float] = []
    compile_seconds = 0.0
    compiled_sizes: set[int] = set()  # batch sizes torch.compile has traced
    train_seconds = 0.0
    train_samples = 0
    run_phases = PhaseTotals()
    run_started = time.perf_counter()
    stopped = False
    val_loss = val_acc = math.nan
    if run.history.epochs:
        val_loss = run.history.epochs[-1].val_loss
        val_acc = run.history.epochs[-1].val_accuracy

    early_stop = _early_stop(run)  # a resumed run that had stopped early stays so
    while (
        not run.finished
        and run.epoch < cfg.resolved_epochs
        and not stopped
        and early_stop is None
    ):
        epoch = run.epoch
        run.loaders.train.set_epoch(epoch)
        train_mode(model)
        epoch_stats.reset()
        epoch_started = time.perf_counter()
        # Step time runs from the end of the previous step, so fetching the batch
        # (the data pipeline) and handing the logged step over count, and time
        # spent paused does not.
        clock.restart()
        for x, y in feed.iter_from(run.batch_in_epoch):
            clock.mark(DATA)
            if control.paused:
                control.wait_if_paused()
                clock.restart(FORWARD)
            # Every rank stops at the same step, or one would wait in DDP's
            # all-reduce for a rank that left.
            if ddp.stop_agreed(control.stop_requested):
                stopped = True
                break
            if request := control.take_profile_request():
                yield from profiled.start(*request)
                clock.restart(FORWARD)
            if control.weights_requested:
                # Between two steps: nothing is updating the weights now.
                control.offer_weights(run.global_step, snapshot_state(model))
                yield WeightsReady(run.global_step)
                clock.restart(FORWARD)
            if control.take_mask_changed():
                reconcile_optimizer(run.optimizer, model)
                if not run.optimizer.param_groups[0]["params"]:
                    raise TrainingError(_ALL_FROZEN)
                train_mode(model)
                if fallback := feed.recheck(run.batch_in_epoch):
                    yield Notice(fallback[0])
                    x, y = next(fallback[1])
            # A batch size not traced yet recompiles (the first step, and an
            # epoch's last partial batch): say so, and keep it out of the speed.
            compiling = cfg.compile and len(x) not in compiled_sizes
            first_compile = not compiled_sizes
            if compiling:
                clock.drop_step()
                yield CompileStarted(len(x), first_compile)
                compile_started = time.perf_counter()
            run.optimizer.zero_grad(set_to_none=True)
            with autocast_context(run.precision, device):
                logits = feed.forward(run.train_module, x)
                loss = class_weights.training_loss(run, logits, y)
            clock.mark(FORWARD)
            share = class_weights.local_weight(run, y)
            scaler.scale(ddp.backward_loss(run, loss, len(y), share)).backward()
            clock.mark(BACKWARD)
            scaler.step(run.optimizer)
            scaler.update()
            if run.scheduler is not None:
                run.scheduler.step()
            clock.mark(OPTIMIZER)
            run.global_step += 1
            run.batch_in_epoch += 1
            epoch_stats.add(loss, logits, y)
            if compiling:
                if first_compile:
                    # Also compile the eval graph now: validation does not stall later.
                    evaluate_one_batch(run)
                sync_device(device)
                seconds = time.perf_counter() - compile_started
                compiled_sizes.add(len(x))
                compile_seconds += seconds
                yield CompileFinished(seconds, len(x), first_compile)
                if run.finished:
                    break
                clock.restart()
                continue
            interval.add(loss, logits, y)
            is_log_step = run.global_step % run.log_every == 0 or run.finished
            if is_log_step:
                # Syncs the device (the interval's end); the global batch's loss.
                loss_value = ddp.step_loss(loss, len(y), share)
                ddp.reduce_sums(interval)
                interval.seconds, interval.phases = clock.take()
                train_seconds += interval.seconds
                train_samples += interval.samples
                run_phases.add(interval.phases, interval.steps)
                logged = log_step(run, interval, epoch, loss_value, run_started)
                step_times.append(logged.step_seconds)
                yield logged
                if run.finished or health_due(run.global_step, run.log_every):
                    # Gradients of this step are still there (zeroed at the next).
                    yield layer_health(run)
            clock.mark(OTHER)
            yield from profiled.after_step()
            if run.finished:
                break
        epoch_seconds = time.perf_counter() - epoch_started
        if stopped or epoch_stats.steps == 0:
            break
        ddp.reduce_sums(epoch_stats)
        predictions = feed.evaluate()  # the head on cached features when it can
        val_loss, val_acc = mean_loss_and_accuracy(predictions)
        completed = run.batch_in_epoch >= run.steps_per_epoch
        metrics = epoch_metrics(
            run, epoch_stats, epoch, (val_loss, val_acc), epoch_seconds, predictions
        )
        run.history.epochs.append(metrics)
        histograms = weight_histograms(run, epoch)
        if completed:
            run.epoch += 1
            run.batch_in_epoch = 0
        yield predictions
        yield histograms
        ddp.gather_rng(run)  # before any save of this epoch's end
        yield metrics
        if completed:
            early_stop = _early_stop(run)

    yield from profiled.end()  # the run ended first: the steps it recorded
    # The device syncs only at log points, so step time is a median over whole
    # log intervals: the steady step time that compile is judged against.
    step_seconds = statistics.median(step_times) if step_times else math.nan
    ddp.gather_rng(run)
    yield TrainResult(
        stopped=stopped,
        epochs_completed=run.epoch,
        global_step=run.global_step,
        val_loss=val_loss,
        val_accuracy=val_acc,
        images_per_s=train_samples / train_seconds if train_seconds else math.nan,
        seconds=time.perf_counter() - run_started,
        compile_seconds=compile_overhead(
            compile_seconds, len(compiled_sizes), step_seconds
        ),
        step_seconds=step_seconds,
        early_stop=early_stop or "",
        phases=run_phases.per_step(),
    )


def _early_stop(run: TrainingRun) -> str | None:
    """Why the run stops early now, by its history; None to train on.

    Every rank stops if one does: without SyncBatchNorm each rank validates
    with its own running statistics and could judge the epoch differently.
    """
    if run.config.early_stop is None:
        return None
    reason = run_stop_reason(run)
    if ddp.stop_agreed(reason is not None) and reason is None:
        return "another process stopped early"
    return reason


def fit(run: TrainingRun, control: TrainControl | None = None) -> list[TrainEvent]:
    """Run :func:`iter_fit` to the end and return every event (tests, scripts)."""
    return list(iter_fit(run, control))
