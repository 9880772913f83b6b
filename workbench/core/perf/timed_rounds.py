"""The speed doctor's clock and its rule: configs timed in turns, gains judged.

Each :class:`Arm` is one config's run, prepared once and trained by the engine
itself (``iter_fit``), a few steps at a time: a round times every arm in turn,
so a machine that slows down for a while slows all of them, and the ratios of
one round stay fair. An arm's run is kept between rounds, so its DataLoader
workers and compiled graphs are paid for once. :func:`judge` reads the rounds:
a gain counts only when its worst round (of four or more: the worst but one)
beats the baseline's own round-to-round noise.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import statistics
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch

from workbench.core.config import TrainConfig
from workbench.core.events import StepMetrics, TrainEvent, TrainResult
from workbench.core.train.engine import TrainingError, iter_fit, prepare_run
from workbench.core.train.step_clock import COPY, DATA
from workbench.core.training_run import TrainingRun

PrepareFn = Callable[[TrainConfig], TrainingRun]
CancelFn = Callable[[], bool]

# Batches each DataLoader worker keeps ready (torch's default prefetch_factor):
# after its arm sat idle they are waiting, so the first steps come too fast.
PREFETCH_FACTOR = 2
# A gain under this is no advice, however quiet the machine.
MIN_GAIN = 0.05
# From this many rounds on, a verdict spares the one worst round: another
# process can stall this one for seconds, and one stalled round would veto
# any gain (or make the baseline look noisy).
SPARE_FROM = 4


@dataclass(frozen=True, slots=True)
class Timing:
    """One arm's timed steps in one round.

    ``data_share``: the part of those steps spent waiting for the training
    loader, its copy to the device included (NaN when nothing was timed).
    ``phase_shares``: each phase's part of a step, in ``step_clock.PHASES``
    order; empty when the run does not time phases (the wait is then timed
    around the loader's ``next``).
    """

    images_per_s: float
    step_seconds: float
    data_share: float
    phase_shares: tuple[float, ...] = ()


class TimedLoader:
    """A training loader that sums the time spent waiting on it.

    Everything but iteration is the wrapped loader's own, so the engine and
    the feature cache use it as the loader itself.
    """

    def __init__(self, loader: Any) -> None:
        object.__setattr__(self, "loader", loader)
        object.__setattr__(self, "waited", 0.0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # The engine hands the loader its hooks (the step clock's ``copying``).
        if name == "waited":
            object.__setattr__(self, name, value)
        else:
            setattr(self.loader, name, value)

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self) -> Iterator[Any]:
        return self.iter_from(0)

    def iter_from(self, start_batch: int) -> Iterator[Any]:
        """The loader's batches from ``start_batch``, each wait timed."""
        started = time.perf_counter()
        # A DataLoader starts (or wakes) its workers here, before the first batch.
        batches = self.loader.iter_from(start_batch)
        self.waited += time.perf_counter() - started
        return self._timed(batches)

    def _timed(self, batches: Iterator[Any]) -> Iterator[Any]:
        while True:
            started = time.perf_counter()
            try:
                batch = next(batches)
            except StopIteration:
                self.waited += time.perf_counter() - started
                return
            self.waited += time.perf_counter() - started
            yield batch


def skipped_steps(cfg: TrainConfig) -> int:
    """Steps left out at the start of each round: one, plus what workers prefetched."""
    workers = cfg.workers if cfg.loader == "dataloader" else 0
    return 1 + PREFETCH_FACTOR * workers


def measured_config(cfg: TrainConfig, steps: int) -> TrainConfig:
    """``cfg`` as an arm trains it: every step logged, ``steps`` in all, no stop."""
    return cfg.replace(log_every=1, max_steps=steps, epochs=steps, early_stop=None)


class Arm:
    """One config's short run, trained a few timed steps per round.

    Parameters
    ----------
    name : str
        What the report calls it.
    cfg : TrainConfig
        The config to time (as the user would train it).
    budget : int
        Steps the run may take in all (warm-up and skipped steps included).
    prepare : callable
        Builds the run from a config (``prepare_run``, or the session's).
    """

    def __init__(self, name: str, cfg: TrainConfig, budget: int, prepare: PrepareFn):
        self.name = name
        self.config = cfg
        self.timings: list[Timing] = []
        self.warm: Timing | None = None  # the steps timed after the warm-up
        self._budget = budget
        self._prepare = prepare
        self._run: TrainingRun | None = None
        self._loader: TimedLoader | None = None
        self._events: Generator[TrainEvent, None, None] | None = None

    @property
    def device(self) -> torch.device:
        """The device the arm's run trains on (after it is prepared)."""
        assert self._run is not None, "prepare the arm first"
        return self._run.device

    @property
    def run(self) -> TrainingRun:
        """The arm's run (after it is prepared)."""
        assert self._run is not None, "prepare the arm first"
        return self._run

    def prepare(self) -> None:
        """Build the run and its event stream (once)."""
        if self._run is not None:
            return
        run = self._prepare(measured_config(self.config, self._budget))
        if run.device.type == "cuda":  # the peak run_facts reads: this run's steps
            torch.cuda.reset_peak_memory_stats(run.device)
        self._loader = TimedLoader(run.loaders.train)
        run.loaders = dataclasses.replace(run.loaders, train=self._loader)
        self._run = run
        self._events = cast(Generator[TrainEvent, None, None], iter_fit(run))

    def time_steps(
        self, skip: int, steps: int, cancel: CancelFn, keep: bool = True
    ) -> Timing | None:
        """Train ``skip`` steps untimed, then ``steps`` timed; None if cancelled.

        Steps that compile yield no ``StepMetrics`` and so count as neither.
        ``keep``: add the timing to :attr:`timings`; else it is :attr:`warm`.
        """
        self.prepare()
        assert self._events is not None
        assert self._loader is not None
        seen = 0
        samples = seconds = waited = 0.0
        phases: list[float] = []
        if skip == 0:
            self._loader.waited = 0.0
        for event in self._events:
            if cancel():
                return None
            if isinstance(event, TrainResult):
                raise TrainingError(f"{self.name}: the run ended before it was timed")
            if not isinstance(event, StepMetrics):
                continue
            seen += 1
            if seen <= skip:
                self._loader.waited = 0.0  # the timed window starts after these
                continue
            samples += event.images_per_s * event.step_seconds
            seconds += event.step_seconds
            pairs = itertools.zip_longest(phases, event.phases, fillvalue=0.0)
            phases = [a + b for a, b in pairs]
            if seen >= skip + steps:
                waited = self._loader.waited
                break
        else:
            raise TrainingError(f"{self.name}: the run ended before it was timed")
        timing = _timing(samples, seconds, waited, phases)
        if keep:
            self.timings.append(timing)
        else:
            self.warm = timing
        return timing

    def close(self) -> None:
        """End the run: stop its generator and its DataLoader workers."""
        if self._events is not None:
            self._events.close()
        if self._run is not None:
            for loader in (self._run.loaders.train, self._run.loaders.val):
                release = getattr(loader, "release_workers", None)
                if release is not None:
                    release()
        self._events = self._run = self._loader = None


def _timing(
    samples: float, seconds: float, waited: float, phases: Sequence[float]
) -> Timing:
    rate = samples / seconds if seconds > 0 else math.nan
    total = sum(phases)
    if total > 0:  # the engine's own split of each step
        shares = tuple(p / total for p in phases)
        data = shares[DATA] + shares[COPY]  # what a loader change can touch
    else:
        shares = ()
        data = min(waited / seconds, 1.0) if seconds > 0 else math.nan
    return Timing(rate, seconds, data, shares)


def round_order(arms: int, round_index: int) -> list[int]:
    """The order arms are timed in, in round ``round_index``.

    Round 0 goes 0, 1, 2, ...; the next rounds reverse and rotate it, so no
    arm always follows the same one, nor always comes first or last.
    """
    shift = (round_index // 2) % max(arms, 1)
    order = list(range(shift, arms)) + list(range(shift))
    return order[::-1] if round_index % 2 else order


@dataclass(frozen=True, slots=True)
class DoctorProgress:
    """Turn ``done`` of ``total``: ``arm`` in round ``round`` (0: warming up)."""

    done: int
    total: int
    round: int
    rounds: int
    arm: str


class Schedule:
    """Arms warmed up one after another, then timed in alternating rounds.

    Warming every arm up first (its run prepared, DataLoader workers started,
    first steps trained) keeps those seconds out of the rounds, so the arms
    of one round are timed back to back. ``dropped`` holds the arms no longer
    timed, with why; the baseline is arm 0 and a failure of it is raised.
    """

    def __init__(
        self, arms: list[Arm], *, steps: int, rounds: int, warmup: int
    ) -> None:
        self.arms = arms
        self.steps, self.rounds, self.warmup = steps, rounds, warmup
        self.dropped: dict[int, str] = {}
        self._warm: set[int] = set()
        self._turns = 0

    def progress(self, round_index: int, i: int) -> DoctorProgress:
        """The turn about to start: arm ``i`` in round ``round_index``."""
        live = [j for j in range(len(self.arms)) if j not in self.dropped]
        left = sum(self.rounds - len(self.arms[j].timings) for j in live)
        left += sum(j not in self._warm for j in live)
        done = self._turns
        return DoctorProgress(
            done, done + left, round_index, self.rounds, self.arms[i].name
        )

    def warm_up(
        self, cancel: CancelFn, probe: int = 1
    ) -> Generator[DoctorProgress, None, bool]:
        """Warm up each arm not yet warm; False if cancelled.

        ``probe`` steps are timed after the warm-up, into the arm's
        :attr:`Arm.warm` (not its ``timings``).
        """
        for i, arm in enumerate(self.arms):
            if i in self._warm or i in self.dropped:
                continue
            yield self.progress(0, i)
            skip = self.warmup + skipped_steps(arm.config)
            if self._turn(i, skip, probe, cancel, keep=False) is None:
                if i not in self.dropped:
                    return False
            self._warm.add(i)
        return True

    def time_rounds(
        self, cancel: CancelFn, after_round: Callable[[int], None] | None = None
    ) -> Generator[DoctorProgress, None, bool]:
        """Time every live arm in each round; False if cancelled."""
        for round_index in range(self.rounds):
            for i in round_order(len(self.arms), round_index):
                if i in self.dropped:
                    continue
                yield self.progress(round_index + 1, i)
                skip = skipped_steps(self.arms[i].config)
                timing = self._turn(i, skip, self.steps, cancel)
                if timing is None and i not in self.dropped:
                    return False
            if after_round is not None:
                after_round(round_index)
        return True

    def _turn(
        self, i: int, skip: int, steps: int, cancel: CancelFn, keep: bool = True
    ) -> Timing | None:
        self._turns += 1
        try:
            return self.arms[i].time_steps(skip, steps, cancel, keep)
        except RuntimeError as exc:  # a change this run cannot train with
            if i == 0:
                raise
            self.drop(i, f"failed: {str(exc).strip().splitlines()[0]}")
            return None

    def drop(self, i: int, why: str) -> None:
        """Time arm ``i`` no more, for the reason ``why``."""
        self.dropped[i] = why
        self.arms[i].close()

    def close(self) -> None:
        """End every arm's run."""
        for arm in self.arms:
            arm.close()


def measure(
    configs: Sequence[TrainConfig],
    *,
    steps: int,
    rounds: int,
    warmup: int = 3,
    prepare: PrepareFn = prepare_run,
    cancel: CancelFn = lambda: False,
) -> list[list[float]]:
    """Images per second of each config in each round (rounds alternate them).

    For benches and tests that check a diagnosis: the rates of
    ``configs[i]`` are ``result[i]``, one per round.
    """
    arms = [
        Arm(str(i), cfg, arm_budget(cfg, steps, rounds, warmup), prepare)
        for i, cfg in enumerate(configs)
    ]
    schedule = Schedule(arms, steps=steps, rounds=rounds, warmup=warmup)
    try:
        for _ in schedule.warm_up(cancel):
            pass
        for _ in schedule.time_rounds(cancel):
            pass
    finally:
        schedule.close()
    return [[t.images_per_s for t in arm.timings] for arm in arms]


def arm_budget(cfg: TrainConfig, steps: int, rounds: int, warmup: int) -> int:
    """Steps an arm may take in all: warm-up and probe, each round's, a margin."""
    return warmup + (rounds + 1) * (skipped_steps(cfg) + steps) + 2


@dataclass(frozen=True, slots=True)
class Judgement:
    """A candidate's gain over the baseline: per-round ratios, and the verdict.

    ``bound``: the ratio the verdict is taken on, the worst round's (with
    :data:`SPARE_FROM` rounds or more: the worst but one).
    """

    gain: float  # the median of the rounds' ratios
    low: float
    high: float
    bound: float
    noise: float  # the baseline's spread between rounds, a fraction
    rounds: int
    recommended: bool


def spare_rounds(rounds: int) -> int:
    """Rounds a verdict may leave out: one from :data:`SPARE_FROM` rounds on."""
    return 1 if rounds >= SPARE_FROM else 0


def baseline_noise(rates: Sequence[float]) -> float:
    """The baseline's round-to-round spread: (max - min) / median; NaN if < 2.

    With :data:`SPARE_FROM` rounds or more, the rate farthest from the median
    is left out.
    """
    if len(rates) < 2:
        return math.nan
    median = statistics.median(rates)
    kept = sorted(rates, key=lambda rate: abs(rate - median))
    kept = kept[: len(kept) - spare_rounds(len(rates))]
    return (max(kept) - min(kept)) / median


def judge(baseline: Sequence[float], candidate: Sequence[float]) -> Judgement:
    """Recommend only a gain whose worst round clears the noise.

    ``candidate[r]`` pairs with ``baseline[r]`` (the same round); a candidate
    dropped early has fewer rounds and is not recommended. The noise is the
    baseline's over all its rounds, at least :data:`MIN_GAIN`. With
    :data:`SPARE_FROM` rounds or more, the worst round is spared on both
    sides.
    """
    ratios = [c / b for b, c in zip(baseline, candidate, strict=False) if b > 0]
    noise = baseline_noise(baseline)
    if not ratios:
        return Judgement(math.nan, math.nan, math.nan, math.nan, noise, 0, False)
    ordered = sorted(ratios)
    bound = ordered[min(spare_rounds(len(baseline)), len(ordered) - 1)]
    recommended = len(ratios) == len(baseline) >= 2 and bound > 1 + max(noise, MIN_GAIN)
    median = statistics.median(ratios)
    return Judgement(
        median, ordered[0], ordered[-1], bound, noise, len(ratios), recommended
    )
