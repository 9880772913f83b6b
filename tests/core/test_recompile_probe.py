"""The speed doctor's walk through an epoch finds the recompiles training meets."""

from __future__ import annotations

import pytest
import torch

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.perf.graph_breaks import (
    BATCH_SIZE,
    MODE,
    explain_graph_breaks,
    report_lines,
)
from workbench.core.perf.recompile_probe import epoch_recompiles
from workbench.core.train.engine import fit, prepare_run

AGAIN = "torch.compile compiled again: "


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Dynamo as in a new process: another test's compiled mlp would be reused."""
    torch._dynamo.reset()


def _trained_recompile_causes(events: list[E.TrainEvent]) -> list[str]:
    notices = [e.message for e in events if isinstance(e, E.Notice)]
    said = [m.removeprefix(AGAIN) for m in notices if m.startswith(AGAIN)]
    return [text.split(": ", 1)[0] for text in said]


def test_the_walk_finds_the_recompiles_that_training_then_says(tiny_arrays):
    # 256 images in batches of 96: validation's mode, then the last batch (64).
    cfg = TrainConfig(model="mlp", compile=True, epochs=2, batch_size=96, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)

    found = epoch_recompiles(run)

    assert [r.cause for r in found] == [MODE, BATCH_SIZE]
    assert "expected 96, actual 64" in found[1].reason
    # Training afterwards meets the same, in the same order: the walk left
    # Dynamo's notes of which sizes change as they were.
    assert _trained_recompile_causes(fit(run)) == [MODE, BATCH_SIZE]


def test_the_walk_predicts_a_new_process_whatever_ran_before(tiny_arrays):
    cfg = TrainConfig(model="mlp", compile=True, batch_size=96, log_every=1)
    # A compiled step in this process: its batch and validation's differ in
    # size, and Dynamo notes the batch size as one that changes.
    fit(prepare_run(cfg.replace(max_steps=1), arrays=tiny_arrays))

    found = epoch_recompiles(prepare_run(cfg, arrays=tiny_arrays))

    assert [r.cause for r in found] == [MODE, BATCH_SIZE]


def test_an_epoch_of_whole_batches_recompiles_only_for_validation(tiny_arrays):
    cfg = TrainConfig(model="small-cnn", compile=True, batch_size=128, log_every=1)

    found = epoch_recompiles(prepare_run(cfg, arrays=tiny_arrays))

    assert [r.cause for r in found] == [MODE]


def test_the_walk_keeps_dynamos_notes_and_the_runs_model(tiny_arrays):
    from torch._dynamo import pgo

    cfg = TrainConfig(model="small-cnn", compile=True, batch_size=96, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)
    before = {k: v.clone() for k, v in run.model.state_dict().items()}
    notes = dict(pgo.get_code_state())

    epoch_recompiles(run)
    explain_graph_breaks(run.model, next(iter(run.loaders.train))[0][:2])

    assert dict(pgo.get_code_state()) == notes
    after = run.model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_the_doctor_reports_an_epochs_recompiles(tiny_arrays):
    from workbench.core.perf.speed_doctor import explain_config

    cfg = TrainConfig(model="mlp", compile=True, batch_size=96)
    report = explain_config(cfg, lambda c: prepare_run(c, arrays=tiny_arrays))

    assert report.epoch_walked
    lines = report_lines(report)
    assert "2 recompiles over an epoch's batch sizes and modes:" in lines
    assert any(line.startswith(f"  {BATCH_SIZE}: ") for line in lines), lines

    whole = explain_config(
        cfg.replace(batch_size=128, model="small-cnn"),
        lambda c: prepare_run(c, arrays=tiny_arrays),
    )
    assert "1 recompile over an epoch's batch sizes and modes:" in report_lines(whole)


def test_a_diagnosis_of_a_compiled_run_leaves_dynamos_notes_as_they_were(
    tiny_arrays,
):
    from torch._dynamo import pgo

    from workbench.core.perf.speed_doctor import DoctorReport, diagnose

    cfg = TrainConfig(model="mlp", compile=True, batch_size=96)
    notes = dict(pgo.get_code_state())

    *_, report = diagnose(
        cfg,
        steps=2,
        rounds=2,
        warmup=1,
        kinds=("precision",),
        prepare=lambda c: prepare_run(c, arrays=tiny_arrays),
    )

    assert isinstance(report, DoctorReport)
    assert not report.cancelled
    assert dict(pgo.get_code_state()) == notes
