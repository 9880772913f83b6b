"""Events own their ledger format: to_record / from_record, old lines included."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.runs.folder import METRICS_FILE, RunFolder
from workbench.core.runs.listing import read_metrics
from workbench.core.training_run import MetricHistory

STEP = E.StepMetrics(
    epoch=1,
    step=3,
    global_step=7,
    total_steps=12,
    loss=0.75,
    accuracy=0.5,
    lr=1e-3,
    images_per_s=5120.0,
    elapsed_s=1.25,
    step_seconds=0.0125,
)
EPOCH = E.EpochMetrics(
    epoch=1,
    global_step=8,
    train_loss=0.5,
    train_accuracy=0.875,
    val_loss=0.625,
    val_accuracy=0.75,
    images_per_s=4096.0,
    seconds=2.5,
    confusion=((3, 1), (0, 4)),
)
HEALTH = E.LayerHealth(
    global_step=7,
    layers=("hidden.1", "head"),
    grad_norms=(0.0, 0.25),
    weight_norms=(3.5, 1.5),
)
HISTOGRAMS = E.WeightHistograms(
    epoch=1,
    global_step=8,
    layers=("hidden.1", "head"),
    edges=((-1.0, 0.0, 1.0), (-0.5, 0.5)),
    counts=((2, 3), (5,)),
)
EVENTS = [STEP, EPOCH, HEALTH, HISTOGRAMS]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_every_recorded_event_round_trips_through_a_json_line(event):
    record = event.to_record()
    assert record["kind"] == type(event).KIND
    line = json.dumps(record, allow_nan=False)  # builtins only, no tuples needed
    assert type(event).from_record(json.loads(line)) == event
    assert E.event_from_record(json.loads(line)) == event


def test_every_field_is_in_the_record():
    for event in EVENTS:
        fields = {f.name for f in dataclasses.fields(event)}
        assert set(event.to_record()) == fields | {"kind"}, type(event).__name__


def test_nan_survives_the_ledger_and_missing_confusion_is_none():
    diverged = E.EpochMetrics(0, 4, math.nan, 0.0, math.nan, 0.0, 10.0, 1.0)
    record = json.loads(json.dumps(diverged.to_record(), allow_nan=True))
    assert "confusion" not in record
    back = E.EpochMetrics.from_record(record)
    assert math.isnan(back.train_loss)
    assert math.isnan(back.val_loss)
    assert back.confusion is None
    assert back.global_step == 4


# Lines exactly as version 0.x wrote them, before the events owned their format:
# {"kind": ..., **asdict(event)}, epochs from the history (with "confusion"),
# and the (step, loss) lines a continued run is seeded with.
OLD_LEDGER = [
    {
        "kind": "step",
        "epoch": 0,
        "step": 2,
        "global_step": 2,
        "total_steps": 12,
        "loss": 2.25,
        "accuracy": 0.125,
        "lr": 0.001,
        "images_per_s": 3000.0,
        "elapsed_s": 0.5,
    },
    {"kind": "step", "global_step": 3, "loss": 1.5},
    {
        "kind": "health",
        "global_step": 2,
        "layers": ["hidden.1", "head"],
        "grad_norms": [0.0, 0.5],
        "weight_norms": [3.0, 1.0],
    },
    {
        "kind": "histograms",
        "epoch": 0,
        "global_step": 6,
        "layers": ["head"],
        "edges": [[-1.0, 0.0, 1.0]],
        "counts": [[3, 4]],
    },
    {
        "kind": "epoch",
        "epoch": 0,
        "global_step": 6,
        "train_loss": 1.0,
        "train_accuracy": 0.5,
        "val_loss": float("nan"),
        "val_accuracy": 0.25,
        "images_per_s": 2000.0,
        "seconds": 1.5,
        "confusion": [[1, 0], [2, 1]],
    },
    {"kind": "a-kind-from-a-newer-version", "global_step": 6},
    {"kind": "health", "global_step": 7},  # damaged: no layers
]


def test_a_ledger_written_by_the_old_code_still_reads(runs_root):
    folder = RunFolder.create(TrainConfig(model="mlp"), origin="test")
    text = "".join(json.dumps(r, allow_nan=True) + "\n" for r in OLD_LEDGER)
    (folder.path / METRICS_FILE).write_text(text + '{"kind": "step", "glo')
    metrics = read_metrics(folder)

    full, seeded = metrics["step"]
    assert (full.epoch, full.step, full.global_step, full.total_steps) == (0, 2, 2, 12)
    assert (full.loss, full.accuracy, full.lr) == (2.25, 0.125, 0.001)
    assert (full.images_per_s, full.elapsed_s) == (3000.0, 0.5)
    assert math.isnan(full.step_seconds)  # the old code did not measure it
    assert (seeded.global_step, seeded.loss) == (3, 1.5)
    assert math.isnan(seeded.accuracy)

    (health,) = metrics["health"]
    assert health == E.LayerHealth(2, ("hidden.1", "head"), (0.0, 0.5), (3.0, 1.0))
    (histograms,) = metrics["histograms"]
    assert histograms == E.WeightHistograms(
        0, 6, ("head",), ((-1.0, 0.0, 1.0),), ((3, 4),)
    )
    (epoch,) = metrics["epoch"]
    assert (epoch.epoch, epoch.global_step, epoch.val_accuracy) == (0, 6, 0.25)
    assert (epoch.train_loss, epoch.seconds) == (1.0, 1.5)
    assert math.isnan(epoch.val_loss)
    assert epoch.confusion == ((1, 0), (2, 1))


def test_checkpoint_history_of_the_old_code_loads_typed_and_saves_the_same():
    old_epochs = [
        {k: v for k, v in OLD_LEDGER[4].items() if k != "kind"},
        # A checkpoint from before confusion matrices were kept.
        {
            "epoch": 1,
            "global_step": 12,
            "train_loss": 0.5,
            "train_accuracy": 0.75,
            "val_loss": 0.25,
            "val_accuracy": 0.875,
            "images_per_s": 2500.0,
            "seconds": 1.25,
        },
    ]
    old = {"steps": [[2, 2.25], [4, 1.5]], "epochs": old_epochs}
    history = MetricHistory.from_dict(old)
    assert all(isinstance(e, E.EpochMetrics) for e in history.epochs)
    assert [e.epoch for e in history.epochs] == [0, 1]
    assert history.epochs[0].confusion == ((1, 0), (2, 1))
    assert history.epochs[1].confusion is None
    assert history.epochs[1].val_accuracy == 0.875
    assert history.steps == [(2, 2.25), (4, 1.5)]
    # Saved again, it is the same document: older versions still read it.
    saved = history.to_dict()
    assert json.dumps(saved, allow_nan=True) == json.dumps(old, allow_nan=True)
