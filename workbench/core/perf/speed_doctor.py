"""The speed doctor: which settings would make this run faster, measured here.

:func:`candidates` lists the changes that apply to a run (another loader or
worker count, pinned memory on CUDA, bf16, ``torch.compile``, the other memory
format of a convolutional model, a doubled batch). :func:`diagnose` times the
run's own settings and each change in alternating rounds of a few steps
(``timed_rounds``), says whether the run waits for its data, and recommends a
change only when its worst round (of four or more: the worst but one) beats
the baseline by more than the baseline's own round-to-round noise
(:func:`judge`). A loader change is not timed when the run waits too little
for its data for any loader to gain past :data:`MIN_GAIN`. Nothing is
changed: each recommendation carries the settings an "Apply" would set.
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from workbench.core.config import MAX_WHOLE, ConfigError, TrainConfig
from workbench.core.data.registry import ImageArrays
from workbench.core.data.sources import load_run_arrays
from workbench.core.perf.graph_breaks import (
    CompileReport,
    dynamo_notes_kept,
    explain_graph_breaks,
)
from workbench.core.perf.recompile_probe import epoch_recompiles
from workbench.core.perf.timed_rounds import (
    MIN_GAIN,
    Arm,
    CancelFn,
    Judgement,
    PrepareFn,
    Schedule,
    Timing,
    arm_budget,
    baseline_noise,
    judge,
    skipped_steps,
    spare_rounds,
)
from workbench.core.perf.timed_rounds import DoctorProgress as DoctorProgress
from workbench.core.train.engine import prepare_run
from workbench.core.train.step_clock import FORWARD, PHASES
from workbench.core.training_run import TrainingRun

STEPS = 8  # timed steps of each arm per round
ROUNDS = 4  # so one stalled round can be spared (timed_rounds.SPARE_FROM)
WARMUP = 3  # untimed steps before an arm's first round
KINDS = ("loader", "precision", "compile", "memory format", "batch")
# Compiling takes tens of seconds even for small-cnn on a CPU: asked for only.
DEFAULT_KINDS = ("loader", "precision", "memory format", "batch")
SLOW_KINDS = {"compile": "compiling alone takes tens of seconds"}
MAX_WORKERS = 8  # worker counts tried: 0, 1, 2, 4, 8, at most the CPU count
# A doubled batch is tried when an epoch still holds this many of them.
MIN_BATCHES = 4
DATA_BOUND = 0.5  # of each step waiting for the loader: data-bound
PARTLY_DATA_BOUND = 0.2

Setting = bool | int | str
Changes = tuple[tuple[str, Setting], ...]
_FAST: Changes = (("loader", "fast"), ("workers", 0))  # fast takes no workers


@dataclass(frozen=True, slots=True)
class Candidate:
    """A change to try: ``changes`` are (config field, value) pairs."""

    name: str
    changes: Changes
    reason: str
    kind: str


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What decides which candidates apply, read off a prepared run."""

    precision: str  # what the run trains in ("auto" resolved)
    convolutional: bool
    train_images: int
    cpus: int
    bf16: bool  # the device runs bf16 autocast
    free_bytes: int | None = None  # CUDA: free memory; None elsewhere
    peak_bytes: int | None = None  # CUDA: the most the run's steps have held


def run_facts(run: TrainingRun) -> RunFacts:
    """The facts of a prepared (on CUDA: already stepped) run."""
    device = run.device
    free = peak = None
    if device.type == "cuda":
        free = torch.cuda.mem_get_info(device)[0]
        peak = torch.cuda.max_memory_allocated(device)
    return RunFacts(
        precision=run.precision,
        convolutional=any(isinstance(m, nn.Conv2d) for m in run.model.modules()),
        train_images=run.loaders.train.num_samples,
        cpus=os.cpu_count() or 1,
        bf16=device.type == "cpu"
        or (device.type == "cuda" and torch.cuda.is_bf16_supported()),
        free_bytes=free,
        peak_bytes=peak,
    )


def worker_counts(cpus: int) -> list[int]:
    """DataLoader worker counts worth trying: 0, 1, 2, 4, ... up to the CPUs."""
    counts, n = [0], 1
    while n <= min(cpus, MAX_WORKERS):
        counts.append(n)
        n *= 2
    return counts


def candidates(
    cfg: TrainConfig, device: torch.device | str, facts: RunFacts
) -> list[Candidate]:
    """The changes that apply to ``cfg`` on ``device`` and are not its settings."""
    cuda = torch.device(device).type == "cuda"
    found = []
    if cfg.loader == "dataloader":
        why = "the dataset in memory, batches sliced on the device: no per-image work"
        found.append(Candidate("fast loader", _FAST, why, "loader"))
    for n in worker_counts(facts.cpus):
        if cfg.loader != "dataloader" or n != cfg.workers:
            name = f"DataLoader, {n or 'no'} worker{'' if n == 1 else 's'}"
            why = "images prepared one by one" + (f" in {n} processes" if n else "")
            changes = (("loader", "dataloader"), ("workers", n))
            found.append(Candidate(name, changes, why, "loader"))
    if cuda and cfg.loader == "dataloader" and not cfg.pin_memory:
        why = "batches in pinned host memory, copied to the GPU with non_blocking"
        found.append(Candidate("pinned memory", (("pin_memory", True),), why, "loader"))
    if facts.bf16 and facts.precision != "bf16":
        why = "bf16 autocast: half the bytes per activation (emulated, so measured, "
        why += "on a CPU without native bf16)"
        found.append(Candidate("bf16", (("precision", "bf16"),), why, "precision"))
    if not cfg.compile:
        why = "fused kernels; the steps that compile are left out of the timing"
        found.append(Candidate("torch.compile", (("compile", True),), why, "compile"))
    if facts.convolutional:
        on = not cfg.channels_last
        why = "the memory format convolutions run in (oneDNN and cuDNN prefer it)"
        name = f"channels-last {'on' if on else 'off'}"
        found.append(Candidate(name, (("channels_last", on),), why, "memory format"))
    batch = cfg.batch_size * 2
    # On CUDA a doubled batch needs at most its peak again; a CPU swaps, not fails.
    fits = not cuda or (
        facts.free_bytes is not None
        and facts.peak_bytes is not None
        and facts.free_bytes >= facts.peak_bytes
    )
    if fits and facts.train_images >= batch * MIN_BATCHES and batch <= MAX_WHOLE:
        why = (
            "twice the images per step: it changes the training, not only its "
            "speed (half the steps an epoch; the learning rate may need retuning)"
        )
        found.append(
            Candidate(f"batch {batch}", (("batch_size", batch),), why, "batch")
        )
    return found


@dataclass(frozen=True, slots=True)
class Finding:
    """One candidate as measured: its gain, spread and verdict.

    ``low``/``high``: the worst and best rounds' ratios; ``bound``: the one the
    verdict was taken on (above ``low`` when the worst round was spared).
    """

    name: str
    kind: str
    reason: str
    changes: Changes
    gain: float
    low: float
    high: float
    rounds: int
    recommended: bool
    verdict: str
    bound: float = math.nan


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """A finished (or cancelled) diagnosis; the last item :func:`diagnose` yields."""

    device: str
    precision: str
    images_per_s: float  # the baseline's median over rounds
    noise: float
    steps: int
    rounds: int
    data_share: float
    diagnosis: str
    findings: tuple[Finding, ...] = ()
    seconds: float = 0.0
    cancelled: bool = False

    @property
    def recommended(self) -> tuple[Finding, ...]:
        """The findings to act on, at most one of each kind."""
        return tuple(f for f in self.findings if f.recommended)


def prepare_with_data_once() -> PrepareFn:
    """``prepare_run`` that loads the dataset once for every arm."""
    loaded: list[ImageArrays] = []

    def prepare(cfg: TrainConfig) -> TrainingRun:
        if cfg.dataset == "folder":  # its loaders read (and cache) the folder
            return prepare_run(cfg)
        if not loaded:
            loaded.append(load_run_arrays(cfg))
        return prepare_run(cfg, arrays=loaded[0])

    return prepare


def diagnose(
    cfg: TrainConfig,
    *,
    steps: int = STEPS,
    rounds: int = ROUNDS,
    warmup: int = WARMUP,
    kinds: Collection[str] = DEFAULT_KINDS,
    prepare: PrepareFn | None = None,
    cancel: CancelFn | None = None,
) -> Iterator[DoctorProgress | DoctorReport]:
    """Time ``cfg`` against each candidate; yield progress, then the report.

    Parameters
    ----------
    cfg : TrainConfig
        The run as the user set it up; never changed.
    steps, rounds, warmup : int
        Timed steps per arm and round, rounds (2 or more: one round cannot
        show the noise), untimed steps before an arm's first round.
    kinds : collection of str
        Which kinds of candidate to try (``KINDS``); compile is left out by
        default, as compiling alone takes tens of seconds.
    prepare : callable, optional
        Builds a run from a config; default ``prepare_run``, the data loaded
        once.
    cancel : callable, optional
        Polled between steps; True ends the diagnosis with a cancelled report.

    Raises
    ------
    ConfigError
        For steps, rounds, warmup or kinds out of range.
    """
    check_settings(steps, rounds, warmup, kinds)
    prepare = prepare or prepare_with_data_once()
    cancel = cancel or (lambda: False)
    started = time.perf_counter()
    baseline = Arm(
        "your settings", cfg, arm_budget(cfg, steps, rounds, warmup), prepare
    )
    schedule = Schedule([baseline], steps=steps, rounds=rounds, warmup=warmup)
    where = (cfg.device, cfg.precision)
    found: list[Candidate] = []  # found[i - 1] is timed by arm i
    # The arms' compiles must not leave their sizes to the user's next run.
    with dynamo_notes_kept():
        try:
            finished = yield from schedule.warm_up(cancel, probe=steps)
            if finished:
                where = (str(baseline.device), baseline.run.precision)
                found, untimed = _choose(cfg, baseline, kinds)
                schedule.arms += [
                    _arm(cfg, c, steps, rounds, warmup, prepare) for c in found
                ]
                for i, why in untimed.items():
                    schedule.drop(i, why)
                finished = yield from schedule.warm_up(cancel)
            if finished:
                finished = yield from schedule.time_rounds(
                    cancel, lambda r: _drop_the_slower(schedule, r)
                )
            if not finished:
                yield _cancelled(baseline, where, (steps, rounds), started)
                return
        finally:
            schedule.close()
    yield _report(schedule, found, where, started)


def check_settings(
    steps: int, rounds: int, warmup: int, kinds: Collection[str]
) -> None:
    """Raise :class:`ConfigError` for a diagnosis that cannot be made."""
    if steps < 1:
        raise ConfigError(f"steps: {steps} must be 1 or more")
    if rounds < 2:
        raise ConfigError(f"rounds: {rounds} must be 2 or more (one shows no noise)")
    if warmup < 0:
        raise ConfigError(f"warmup: {warmup} must be 0 or more")
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise ConfigError(f"kinds: {', '.join(unknown)} not among {', '.join(KINDS)}")


def _choose(
    cfg: TrainConfig, baseline: Arm, kinds: Collection[str]
) -> tuple[list[Candidate], dict[int, str]]:
    """The candidates that apply, and why some (by arm number) are not timed."""
    found = candidates(cfg, baseline.device, run_facts(baseline.run))
    share = baseline.warm.data_share if baseline.warm else math.nan
    # With no worker process competing for the CPU, a loader can at best take
    # the wait away: the step then lasts 1 - share of its time (Amdahl).
    bound = 1 / (1 - min(share, 0.99)) if not math.isnan(share) else math.inf
    unhelpful = skipped_steps(cfg) == 1 and bound <= 1 + MIN_GAIN
    untimed = {}
    for i, c in enumerate(found, start=1):
        if c.kind not in kinds:
            slow = f"; {SLOW_KINDS[c.kind]}" if c.kind in SLOW_KINDS else ""
            untimed[i] = f"not timed: {c.kind} was not asked for{slow}"
        elif c.kind == "loader" and unhelpful:
            untimed[i] = (
                f"not timed: {share:.0%} of each step waits for the loader, so "
                f"no loader can gain over {bound:.2f}x"
            )
    return found, untimed


def _arm(
    cfg: TrainConfig,
    candidate: Candidate,
    steps: int,
    rounds: int,
    warmup: int,
    prepare: PrepareFn,
) -> Arm:
    changed = cfg.replace(**dict(candidate.changes))
    budget = arm_budget(changed, steps, rounds, warmup)
    return Arm(candidate.name, changed, budget, prepare)


def _drop_the_slower(schedule: Schedule, round_index: int) -> None:
    """Stop timing arms that can no longer be recommended.

    :func:`judge` needs each round it does not spare above 1 + noise (noise
    >= MIN_GAIN), so one round more than it spares at or below ``1 +
    MIN_GAIN`` decides; it also saves the time.
    """
    arms = schedule.arms
    base = [t.images_per_s for t in arms[0].timings]
    for i, arm in enumerate(arms[1:], start=1):
        if i in schedule.dropped:
            continue
        rates = [t.images_per_s for t in arm.timings]
        slow = sum(c <= b * (1 + MIN_GAIN) for b, c in zip(base, rates, strict=False))
        if slow > spare_rounds(schedule.rounds):
            why = f"no faster in round {round_index + 1}: not timed further"
            schedule.drop(i, why)


def describe_wait(share: float, phases: Sequence[float]) -> str:
    """The diagnosis in words: data-bound or compute-bound, and by how much."""
    if math.isnan(share):
        return "not measured"
    if share >= DATA_BOUND:
        text = f"data-bound: {share:.0%} of each step waits for the loader"
    elif share >= PARTLY_DATA_BOUND:
        text = f"partly data-bound: {share:.0%} of each step waits for the loader"
    else:
        text = f"compute-bound: {share:.0%} of each step waits for the loader"
    rest = sorted(zip(phases[FORWARD:], PHASES[FORWARD:], strict=False), reverse=True)
    if rest:
        text += "; " + ", ".join(f"{name} {part:.0%}" for part, name in rest[:3])
    return text


def _baseline_wait(timings: Sequence[Timing]) -> tuple[float, tuple[float, ...]]:
    """The median share waiting for data, and of each phase, over the rounds."""
    shares = [t.data_share for t in timings if not math.isnan(t.data_share)]
    share = statistics.median(shares) if shares else math.nan
    split = [t.phase_shares for t in timings if t.phase_shares]
    phases = tuple(statistics.median(p) for p in zip(*split, strict=False))
    return share, phases


def _report(
    schedule: Schedule,
    found: list[Candidate],
    where: tuple[str, str],
    started: float,
) -> DoctorReport:
    arms, dropped = schedule.arms, schedule.dropped
    base = [t.images_per_s for t in arms[0].timings]
    findings = []
    for i, candidate in enumerate(found, start=1):
        verdict = judge(base, [t.images_per_s for t in arms[i].timings])
        why = dropped.get(i) or _verdict(verdict)
        findings.append(
            Finding(
                candidate.name,
                candidate.kind,
                candidate.reason,
                candidate.changes,
                verdict.gain,
                verdict.low,
                verdict.high,
                verdict.rounds,
                verdict.recommended,
                why,
                verdict.bound,
            )
        )
    share, phases = _baseline_wait(arms[0].timings)
    return DoctorReport(
        device=where[0],
        precision=where[1],
        images_per_s=statistics.median(base),
        noise=baseline_noise(base),
        steps=schedule.steps,
        rounds=schedule.rounds,
        data_share=share,
        diagnosis=describe_wait(share, phases),
        findings=tuple(_best_of_each_kind(findings)),
        seconds=time.perf_counter() - started,
    )


def _verdict(judged: Judgement) -> str:
    if judged.recommended:
        return "recommended"
    if judged.gain > 1:
        return "within the noise"
    return "slower"


def _best_of_each_kind(findings: list[Finding]) -> list[Finding]:
    """Keep one recommendation per kind (the fastest); the others say so."""
    best: dict[str, Finding] = {}
    for f in findings:
        if f.recommended and (f.kind not in best or f.gain > best[f.kind].gain):
            best[f.kind] = f
    return [
        f
        if not f.recommended or best[f.kind] is f
        else dataclasses.replace(
            f,
            recommended=False,
            verdict=f"faster, but {best[f.kind].name} is faster still",
        )
        for f in findings
    ]


def _cancelled(
    baseline: Arm, where: tuple[str, str], length: tuple[int, int], started: float
) -> DoctorReport:
    rates = [t.images_per_s for t in baseline.timings]
    return DoctorReport(
        device=where[0],
        precision=where[1],
        images_per_s=statistics.median(rates) if rates else math.nan,
        noise=baseline_noise(rates),
        steps=length[0],
        rounds=length[1],
        data_share=math.nan,
        diagnosis="cancelled",
        seconds=time.perf_counter() - started,
        cancelled=True,
    )


def explain_config(cfg: TrainConfig, prepare: PrepareFn = prepare_run) -> CompileReport:
    """The graph breaks of the model ``cfg`` trains, and an epoch's recompiles.

    The breaks are traced on two of its own images; the recompiles are those
    of a walk through an epoch's batch sizes and modes (:func:`epoch_recompiles`).
    The model is built uncompiled (both compile a copy of it anyway);
    ``prepare`` builds the run, as :func:`prepare_run` does.
    """
    run = prepare(cfg.replace(compile=False))
    try:
        x, _y = next(iter(run.loaders.train))
        report = explain_graph_breaks(run.model, x[:2])
        if report.error:  # what cannot be traced cannot be walked either
            return report
        return dataclasses.replace(
            report, recompiles=epoch_recompiles(run), epoch_walked=True
        )
    finally:
        run.loaders.release_workers()


def flags(changes: Changes) -> str:
    """``--loader fast --workers 0``: the ``train`` flags that make ``changes``."""
    words = []
    for name, value in changes:
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            words.append(flag if value else "--no-" + flag[2:])
        else:
            words.append(f"{flag} {value}")
    return " ".join(words)


def gain_text(finding: Finding) -> str:
    """``1.82x (1.75-1.90)``: the median gain and its range over the rounds.

    A worst round the verdict spared is named apart, after the range the
    verdict read: ``1.28x (1.20-1.35, 0.74 spared)``.
    """
    if finding.rounds == 0 or math.isnan(finding.gain):
        return "-"
    if finding.rounds == 1:
        return f"{finding.gain:.2f}x (1 round)"
    if finding.bound > finding.low:
        judged = f"{finding.bound:.2f}-{finding.high:.2f}"
        return f"{finding.gain:.2f}x ({judged}, {finding.low:.2f} spared)"
    return f"{finding.gain:.2f}x ({finding.low:.2f}-{finding.high:.2f})"
