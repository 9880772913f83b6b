"""The speed doctor: what it tries, how it judges a gain, what it diagnoses.

Issue 38. The noise rule is tested on made-up rates (no timing flakiness);
the measured cases train for real on the bundled digits: a DataLoader made
slow on purpose (2 ms per image, ``tests/core/slow_dataset.py``) is
data-bound and gets loader advice that measures >= 1.5x; the fast in-memory
path gets none. ``bench/speed_doctor_bench.py`` repeats both 20 times.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from tests.core.slow_dataset import slow_prepare
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.sources import load_run_arrays
from workbench.core.perf import speed_doctor as doctor
from workbench.core.perf.speed_doctor import (
    Candidate,
    DoctorProgress,
    DoctorReport,
    RunFacts,
    candidates,
    describe_wait,
    diagnose,
    run_facts,
)
from workbench.core.perf.timed_rounds import (
    MIN_GAIN,
    Arm,
    judge,
    measure,
    round_order,
)
from workbench.core.train.engine import prepare_run

CPU = torch.device("cpu")
# A small-cnn digits run on a 2-core CPU that does not compute bf16 natively.
FACTS = RunFacts(
    precision="fp32", convolutional=True, train_images=1437, cpus=2, bf16=True
)


def names(found: list[Candidate]) -> list[str]:
    return [c.name for c in found]


def test_the_fast_path_on_a_cpu_tries_loaders_bf16_compile_and_the_memory_format():
    found = candidates(TrainConfig(), CPU, FACTS)
    assert names(found) == [
        "DataLoader, no workers",
        "DataLoader, 1 worker",
        "DataLoader, 2 workers",
        "bf16",
        "torch.compile",
        "channels-last off",
    ]
    assert {c.kind for c in found} == {
        "loader",
        "precision",
        "compile",
        "memory format",
    }
    # Each is a valid change of the config (the window's Apply sets exactly these).
    for c in found:
        TrainConfig().replace(**dict(c.changes))
    # No CUDA-only candidate on a CPU; no doubled batch: 1,437 images hold
    # fewer than four batches of 512.
    assert "pinned memory" not in names(found)
    assert not any(c.kind == "batch" for c in found)


def test_a_dataloader_run_is_offered_the_fast_loader_and_other_worker_counts():
    cfg = TrainConfig(loader="dataloader", workers=2, compile=True, precision="bf16")
    facts = dataclasses.replace(FACTS, precision="bf16", cpus=16)
    found = candidates(cfg, CPU, facts)
    loaders = [c for c in found if c.kind == "loader"]
    assert names(loaders) == [
        "fast loader",
        "DataLoader, no workers",
        "DataLoader, 1 worker",
        "DataLoader, 4 workers",  # up to 8, not every count up to 16
        "DataLoader, 8 workers",
    ]
    assert dict(loaders[0].changes) == {"loader": "fast", "workers": 0}
    # bf16 and compile are its settings already.
    assert {c.kind for c in found} == {"loader", "memory format"}


def test_cuda_adds_pinned_memory_and_a_doubled_batch_that_fits():
    cfg = TrainConfig(dataset="mnist", loader="dataloader")
    facts = RunFacts(
        "fp32", True, 60_000, 8, True, free_bytes=8 << 30, peak_bytes=1 << 30
    )
    found = candidates(cfg, "cuda", facts)
    assert "pinned memory" in names(found)
    batch = next(c for c in found if c.kind == "batch")
    assert dict(batch.changes) == {"batch_size": 512}
    assert "changes the training" in batch.reason
    too_big = dataclasses.replace(facts, free_bytes=1 << 29)
    assert not any(c.kind == "batch" for c in candidates(cfg, "cuda", too_big))
    # No pinned memory for the fast loader: it keeps the data on the GPU.
    assert "pinned memory" not in names(
        candidates(cfg.replace(loader="fast"), "cuda", facts)
    )


def test_other_models_and_devices_get_only_what_applies():
    mlp = dataclasses.replace(FACTS, convolutional=False)
    assert not any(
        c.kind == "memory format" for c in candidates(TrainConfig(), CPU, mlp)
    )
    off = candidates(TrainConfig(channels_last=False), CPU, FACTS)
    assert dict(next(c for c in off if c.kind == "memory format").changes) == {
        "channels_last": True
    }
    no_bf16 = dataclasses.replace(FACTS, bf16=False)  # mps: no bf16 autocast
    assert "bf16" not in names(candidates(TrainConfig(), "mps", no_bf16))
    # A CPU with the images for it gets a doubled batch.
    many = dataclasses.replace(FACTS, train_images=60_000)
    assert "batch 512" in names(candidates(TrainConfig(), CPU, many))


def test_the_facts_of_a_prepared_run():
    cnn = run_facts(prepare_run(TrainConfig(max_steps=1)))
    assert cnn.convolutional
    assert cnn.train_images == 1437
    assert cnn.free_bytes is None
    mlp = run_facts(prepare_run(TrainConfig(model="mlp", max_steps=1)))
    assert not mlp.convolutional


@pytest.mark.parametrize(
    ("baseline", "candidate", "recommended"),
    [
        pytest.param([100, 102, 98], [200, 190, 210], True, id="2x-quiet"),
        pytest.param([100, 150, 60], [150, 200, 100], False, id="1.5x-noise-90%"),
        pytest.param([100, 101, 99], [104, 103, 104], False, id="under-5%"),
        pytest.param([100, 101, 99], [130, 131, 99], False, id="a-round-no-faster"),
        pytest.param([100], [300], False, id="one-round-no-noise"),
        pytest.param([100, 100, 100], [300], False, id="dropped-after-one"),
        pytest.param([100, 100, 100], [120, 121, 119], True, id="1.2x-no-noise"),
        # From 4 rounds on the worst round is spared: a stall is no veto...
        pytest.param(
            [100, 100, 100, 100], [300, 310, 290, 50], True, id="spared-stall"
        ),
        pytest.param(
            [100, 101, 99, 20], [300, 310, 290, 300], True, id="spared-base-stall"
        ),
        # ...but two are.
        pytest.param([100, 100, 100, 100], [300, 50, 290, 60], False, id="two-stalls"),
        pytest.param(
            [100, 101, 20, 20], [150, 160, 140, 150], False, id="two-base-stalls"
        ),
    ],
)
def test_a_gain_is_recommended_only_when_its_worst_round_beats_the_noise(
    baseline, candidate, recommended
):
    judged = judge(baseline, candidate)
    assert judged.recommended is recommended
    assert judged.low <= judged.bound <= judged.gain <= judged.high


def test_the_gain_is_the_median_paired_ratio_with_its_spread():
    judged = judge([100, 200, 100], [180, 400, 190])
    assert judged.gain == pytest.approx(1.9)
    assert (judged.low, judged.high) == pytest.approx((1.8, 2.0))
    assert judged.noise == pytest.approx(1.0)  # (200 - 100) / 100
    assert not judged.recommended  # 1.8 < 1 + 1.0
    assert judge([100, 100], []).rounds == 0
    assert MIN_GAIN == 0.05
    spared = judge([100, 100, 100, 100], [150, 160, 140, 90])
    assert (spared.low, spared.bound, spared.high) == pytest.approx((0.9, 1.4, 1.6))
    assert spared.recommended


def test_the_gain_shows_the_rounds_judged_and_names_a_spared_one():
    def finding(baseline, candidate):
        judged = judge(baseline, candidate)
        return doctor.Finding(
            "x", "loader", "", (), judged.gain, judged.low, judged.high,
            judged.rounds, judged.recommended, "", judged.bound,
        )  # fmt: skip

    spared = finding([100, 100, 100, 100], [128, 135, 120, 74])
    assert doctor.gain_text(spared) == "1.24x (1.20-1.35, 0.74 spared)"
    assert doctor.gain_text(finding([100, 100], [120, 130])) == "1.25x (1.20-1.30)"
    assert doctor.gain_text(finding([100, 100], [120])) == "1.20x (1 round)"


def test_rounds_alternate_the_order_of_the_arms():
    orders = [round_order(4, r) for r in range(4)]
    assert orders[0] == [0, 1, 2, 3]
    assert orders[1] == [3, 2, 1, 0]
    assert orders[2] == [1, 2, 3, 0]
    assert all(sorted(order) == [0, 1, 2, 3] for order in orders)
    assert len({order[0] for order in orders}) == 3  # nor always first
    assert len({order[-1] for order in orders}) == 3  # nor always last


def test_the_diagnosis_in_words():
    phases = (0.78, 0.0, 0.08, 0.1, 0.03, 0.01)
    assert describe_wait(0.78, phases) == (
        "data-bound: 78% of each step waits for the loader; "
        "backward 10%, forward 8%, optimizer 3%"
    )
    assert describe_wait(0.3, ()).startswith("partly data-bound: 30%")
    assert describe_wait(0.02, ()).startswith("compute-bound: 2%")
    assert describe_wait(math.nan, ()) == "not measured"


def test_bad_settings_are_config_errors():
    for kwargs, message in [
        ({"steps": 0}, "steps: 0"),
        ({"rounds": 1}, "rounds: 1 must be 2 or more"),
        ({"kinds": ("speed",)}, "kinds: speed not among"),
    ]:
        with pytest.raises(ConfigError, match=message):
            next(diagnose(TrainConfig(), **kwargs))


def _last(items: list[DoctorProgress | DoctorReport]) -> DoctorReport:
    assert all(isinstance(i, DoctorProgress) for i in items[:-1])
    report = items[-1]
    assert isinstance(report, DoctorReport)
    return report


def test_a_quick_diagnosis_reports_plain_data_and_changes_nothing():
    cfg = TrainConfig(model="mlp", batch_size=64)
    items = list(diagnose(cfg, steps=2, rounds=2, warmup=1, kinds=("batch",)))
    report = _last(items)
    progress = items[:-1]
    assert progress[0].round == 0  # warming up
    assert progress[-1].done == progress[-1].total - 1
    assert not report.cancelled
    assert report.device == "cpu"
    assert report.images_per_s > 0
    batch = next(f for f in report.findings if f.kind == "batch")
    assert batch.rounds in (1, 2)
    assert dict(batch.changes) == {"batch_size": 128}
    untimed = [f for f in report.findings if f.kind == "loader"]
    assert untimed
    assert all(f.rounds == 0 and f.verdict.startswith("not timed") for f in untimed)
    for f in report.findings:  # plain data: Python scalars and tuples of them
        for value in dataclasses.astuple(f):
            assert isinstance(value, str | int | float | bool | tuple)
    assert cfg == TrainConfig(model="mlp", batch_size=64)


def test_cancel_ends_the_diagnosis_with_a_cancelled_report():
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) > 3

    items = list(diagnose(TrainConfig(model="mlp"), steps=2, cancel=cancel))
    report = _last(items)
    assert report.cancelled
    assert report.findings == ()


def test_without_the_engine_s_phases_the_wait_for_the_loader_is_timed_around_it():
    def prepare(cfg: TrainConfig):
        run = prepare_run(cfg)
        run.time_phases = False  # as a run that does not split its steps
        return run

    cfg = TrainConfig(model="mlp", loader="dataloader", batch_size=64)
    arm = Arm("mlp", cfg, budget=10, prepare=prepare)
    try:
        timing = arm.time_steps(1, 3, lambda: False)
    finally:
        arm.close()
    assert timing is not None
    assert timing.phase_shares == ()
    # Per-image PIL work against a tiny MLP: a good part of each step.
    assert 0.05 < timing.data_share <= 1.0
    assert timing.images_per_s > 0


@pytest.fixture
def slow():
    """The DataLoader path sleeping 2 ms per training image, on one thread.

    One thread: on a CPU that other processes load, two threads waiting for
    each other at every operator slow a step many times over, and the
    2 ms per image stops being most of it.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield slow_prepare(load_run_arrays(TrainConfig()))
    torch.set_num_threads(threads)


@pytest.mark.slow
def test_a_slow_loader_is_diagnosed_data_bound_and_its_advice_measures_faster(
    slow, monkeypatch
):
    # Two worker counts, not three: each started worker costs seconds.
    monkeypatch.setattr(doctor, "worker_counts", lambda cpus: [0, 2])
    cfg = TrainConfig(loader="dataloader", workers=0, batch_size=32)
    items = list(diagnose(cfg, steps=4, kinds=("loader",), prepare=slow))
    report = _last(items)
    assert report.diagnosis.startswith("data-bound: ")
    assert report.data_share > 0.5
    advice = [f for f in report.recommended if f.kind == "loader"]
    assert [f.name for f in advice] == ["fast loader"], report.findings
    changed = cfg.replace(**dict(advice[0].changes))
    before, after = measure([cfg, changed], steps=4, rounds=4, prepare=slow)
    assert judge(before, after).gain >= 1.5, (before, after)  # median of 4 pairs


@pytest.mark.slow
def test_the_fast_path_gets_no_loader_advice(monkeypatch):
    # The DataLoader without workers: starting workers takes seconds each
    # (bench/speed_doctor_bench.py measures every worker count).
    monkeypatch.setattr(doctor, "worker_counts", lambda cpus: [0])
    for _ in range(3):
        # Two rounds: the strictest rule (every round must beat the noise).
        timing = {"steps": 4, "rounds": 2, "warmup": 1}
        items = list(diagnose(TrainConfig(), kinds=("loader",), **timing))
        report = _last(items)
        assert not report.diagnosis.startswith("data-bound"), report.diagnosis
        assert not [f for f in report.recommended if f.kind == "loader"]
