"""The runs ledger and the checkpoint checks, second pass: what a user relies on.

Issue 33 (second pass): which runs the next start offers to resume, finding,
tagging and deleting runs, what ``run.json`` says of a run's best accuracy,
its duration and its autosaves, what ``runs list`` and ``runs show`` print,
and what a checkpoint or weights file must hold to load.
"""

from __future__ import annotations

import copy
import json
import math
import os
from types import SimpleNamespace
from typing import Any

import pytest
import torch

import workbench
from workbench.cli.commands import main
from workbench.core import events as E
from workbench.core.checkpoints.io import (
    CheckpointError,
    checkpoint_dict,
    load_checkpoint,
    load_weights_file,
    migrate,
    restore_run,
)
from workbench.core.checkpoints.report import checkpoint_lines
from workbench.core.checkpoints.schema import SchemaError, check_like
from workbench.core.config import TrainConfig
from workbench.core.runs.folder import (
    METRICS_FILE,
    RUN_FILE,
    RunFolder,
    delete_run,
    interrupted_runs,
    tag_run,
)
from workbench.core.runs.listing import find_run, list_runs, summarize
from workbench.core.runs.recorder import RunRecorder
from workbench.core.runs.reproduce import reproducible
from workbench.core.train.engine import iter_fit, prepare_run
from workbench.core.training_run import MetricHistory

# Past Linux's PID_MAX_LIMIT (2**22) and macOS's 99999: never a live process.
_NO_SUCH_PID = 2**22 + 1
_CFG = TrainConfig(model="mlp", epochs=1)


def _set(folder: RunFolder, **fields: Any) -> None:
    """Write ``run.json`` fields as another process left them (``updated`` too)."""
    path = folder.path / RUN_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(fields)
    path.write_text(json.dumps(data), encoding="utf-8")


def _saved_run(status: str, pid: int, updated: str, *, checkpoint: bool = True):
    folder = RunFolder.create(_CFG, origin="test")
    _set(folder, status=status, pid=pid, updated=updated)
    if checkpoint:
        folder.checkpoint_path.write_bytes(b"a checkpoint")
    return folder


# ------------------------------------------------------ runs offered for resume


def test_only_runs_whose_process_is_gone_and_that_saved_are_offered_newest_first():
    day = "2026-01-0{}T12:00:00+00:00"
    crashed = _saved_run("running", _NO_SUCH_PID, day.format(1))
    closed = _saved_run("closed", _NO_SUCH_PID, day.format(3))
    _saved_run("running", _NO_SUCH_PID, day.format(4), checkpoint=False)
    _saved_run("running", os.getpid(), day.format(5))  # still training
    for n, status in enumerate(("stopped", "finished", "failed", "dismissed")):
        _saved_run(status, _NO_SUCH_PID, day.format(6 + n))
    offered = interrupted_runs()
    assert [f.id for f in offered] == [closed.id, crashed.id]


def test_a_run_of_another_users_live_process_is_not_offered(monkeypatch):
    _saved_run("running", 4242, "2026-01-01T12:00:00+00:00")

    def not_yours(pid: int, signal: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr("workbench.core.runs.folder.os.kill", not_yours)
    assert interrupted_runs() == []


# ------------------------------------------------- finding, tagging, deleting


def test_a_prefix_several_runs_share_is_refused_naming_them():
    first = RunFolder.create(_CFG, origin="test")
    second = RunFolder.create(_CFG.replace(seed=1), origin="test")
    ids = [r.id for r in list_runs()]
    assert sorted(ids) == sorted([first.id, second.id])
    shared = first.id[:8]  # the day both were made
    with pytest.raises(KeyError) as ambiguous:
        find_run(shared)
    assert ambiguous.value.args[0] == (
        f"{shared!r} matches 2 runs ({', '.join(ids)}): give more of the id"
    )
    assert find_run(second.id) == second


def test_blank_tags_are_dropped():
    folder = RunFolder.create(_CFG, origin="test")
    tag_run(folder, ["mlp", " ", "", " baseline "])
    assert summarize(folder).tags == ("baseline", "mlp")


def test_delete_refuses_a_folder_that_is_no_run(tmp_path):
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "cat.jpg").write_bytes(b"a cat")
    with pytest.raises(FileNotFoundError, match="is not a run folder"):
        delete_run(RunFolder(photos))
    assert (photos / "cat.jpg").read_bytes() == b"a cat"


def test_every_setting_changed_on_any_resume_stays_recorded():
    folder = RunFolder.create(_CFG, origin="test")
    folder.claim(_CFG.replace(epochs=3))
    folder.claim(_CFG.replace(epochs=3, lr=0.5))
    folder.update(status="finished")
    assert folder.info()["changed_on_resume"] == ["epochs", "lr"]
    assert reproducible(summarize(folder)) == (
        f"run {folder.id} was resumed with other settings (epochs, lr): no single "
        "config repeats it"
    )
    masked = RunFolder.create(_CFG, origin="test")
    masked.record_mask_change(2, ["head.weight"])
    masked.claim(_CFG.replace(epochs=3))
    masked.update(status="finished")
    assert "changed its freeze mask" in reproducible(summarize(masked))


# --------------------------------------------------------- what run.json says


def _epoch(epoch: int, accuracy: float) -> E.EpochMetrics:
    return E.EpochMetrics(epoch, 4 * (epoch + 1), 0.5, 0.5, 0.5, accuracy, 1.0, 1.0)


@pytest.mark.parametrize(
    ("accuracies", "best", "shown"),
    [
        ((math.nan, 0.5, 0.8, 0.6), 0.8, "80.00%"),
        ((0.0, math.nan), 0.0, "0.00%"),
        ((math.nan,), None, "n/a"),
    ],
    ids=["best-of-several", "zero", "none-measured"],
)
def test_the_best_accuracy_is_the_best_measured_epochs(capsys, accuracies, best, shown):
    folder = RunFolder.create(_CFG, origin="test")
    recorder = RunRecorder(folder, 0)
    run = SimpleNamespace(
        history=MetricHistory(), epoch=0, global_step=0, batch_in_epoch=0
    )
    for n, accuracy in enumerate(accuracies):
        event = _epoch(n, accuracy)
        run.history.epochs.append(event)  # as the engine does before yielding
        run.epoch, run.global_step = n + 1, event.global_step
        assert recorder.on_event(event, run) is None
    summary = summarize(folder)
    assert summary.problem is None
    assert summary.best_val_accuracy == best
    capsys.readouterr()
    assert main(["runs", "list"]) == 0
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if folder.id in ln]
    assert line.split()[3] == shown


@pytest.fixture(scope="module")
def resumed(tiny_arrays, tmp_path_factory):
    """A 3-epoch run autosaving every 2 epochs, in a folder that trained 100 s.

    Also: the saved epoch seen after each epoch's event, and its last event.
    """
    cfg = TrainConfig(
        model="mlp", epochs=3, batch_size=64, log_every=2, autosave_every=2
    )
    run = prepare_run(cfg, arrays=tiny_arrays)
    folder = RunFolder.create(cfg, origin="test", root=tmp_path_factory.mktemp("r"))
    folder.update(seconds=100.0)  # before this process continued it
    recorder = RunRecorder(folder, cfg.autosave_every)
    assert recorder.start(run) is None
    saved, result = [], None
    for event in iter_fit(run):
        assert recorder.on_event(event, run) is None
        if isinstance(event, E.EpochMetrics):
            path = folder.checkpoint_path
            saved.append(load_checkpoint(path)["epoch"] if path.is_file() else None)
        result = event
    assert isinstance(result, E.TrainResult)
    return SimpleNamespace(run=run, folder=folder, saved=saved, result=result)


def test_autosave_every_n_saves_after_every_nth_epoch_and_at_the_end(resumed):
    assert resumed.saved == [None, 2, 2]
    assert load_checkpoint(resumed.folder.checkpoint_path)["epoch"] == 3


def test_a_continued_runs_duration_adds_the_time_trained_before(resumed):
    assert resumed.result.seconds > 0
    seconds = resumed.folder.info()["seconds"]
    assert seconds == 100.0 + resumed.result.seconds


def test_runs_show_says_the_last_logged_loss_and_its_step(capsys):
    folder = RunFolder.create(_CFG, origin="test")
    steps = ((400, 0.5), (800, 0.25), (1200, 0.125))
    (folder.path / METRICS_FILE).write_text(
        "".join(
            json.dumps({"kind": "step", "global_step": s, "loss": x}) + "\n"
            for s, x in steps
        ),
        encoding="utf-8",
    )
    capsys.readouterr()
    assert main(["runs", "show", folder.id]) == 0
    out = capsys.readouterr().out
    assert "logged steps: 3, last loss 0.1250 at step 1,200\n" in out


# ------------------------------------------------- what a checkpoint must hold


@pytest.fixture(scope="module")
def payload(resumed) -> dict[str, Any]:
    return checkpoint_dict(resumed.run)


def _refused(payload: dict[str, Any]) -> str:
    with pytest.raises(CheckpointError) as refused:
        migrate(payload, "run.pt")
    return str(refused.value)


def test_a_true_or_false_format_version_is_refused(payload):
    for flag in (True, False):
        said = _refused({**payload, "format_version": flag})
        assert said == f"run.pt has an invalid checkpoint format {flag!r}"


def test_each_optimizer_state_entry_and_history_step_is_checked(payload):
    optimizer = {**payload["optimizer_state"], "state": {0: 5}}
    assert _refused({**payload, "optimizer_state": optimizer}) == (
        "run.pt cannot be used: the checkpoint's optimizer_state.state[0] is a "
        "whole number, not a dict"
    )
    history = {**payload["history"], "steps": [[2, 0.5, 7]]}
    assert _refused({**payload, "history": history}) == (
        "run.pt cannot be used: the checkpoint's history.steps is a list, not a "
        "list of (step, loss) pairs"
    )


def test_a_checkpoint_records_the_versions_that_wrote_it(resumed, payload):
    assert payload["torch_version"] == str(torch.__version__)
    assert payload["workbench_version"] == workbench.__version__
    path = resumed.folder.checkpoint_path
    lines = checkpoint_lines(path, payload["model_state"], payload)
    assert lines[1] == (
        f"format: ptcore-workbench checkpoint, version 3 (torch {torch.__version__}"
        f", workbench {workbench.__version__})"
    )


def test_weights_under_a_model_key_load_and_an_empty_dict_holds_none(tmp_path, payload):
    state = payload["model_state"]
    torch.save({"model": state, "epoch": 3}, tmp_path / "tutorial.pt")
    loaded, checkpoint = load_weights_file(tmp_path / "tutorial.pt")
    assert checkpoint is None
    assert loaded.keys() == state.keys()
    assert all(torch.equal(loaded[k], state[k]) for k in state)
    for empty in ({}, {"state_dict": {}}):
        torch.save(empty, tmp_path / "empty.pt")
        with pytest.raises(CheckpointError, match="holds no model weights"):
            load_weights_file(tmp_path / "empty.pt")


def test_resuming_for_another_length_says_the_schedule_starts_over(
    tiny_arrays, resumed, payload
):
    longer = resumed.run.config.replace(epochs=4)
    run = restore_run(copy.deepcopy(payload), config=longer, arrays=tiny_arrays)
    assert run.notices == [
        "the learning-rate schedule starts over: the run's length changed"
    ]
    assert run.scheduler.state_dict()["total_steps"] == run.total_steps == 16


def test_saved_settings_are_checked_by_kind_not_by_exact_type():
    fresh = {"lr": 0.001, "betas": (0.9, 0.999), "foreach": None, "amsgrad": False}
    where = "optimizer_state.param_groups[0]"
    # A whole lr, betas as a list, a setting this torch leaves unset: all fine.
    check_like({"lr": 1, "betas": [0.9, 0.99], "foreach": True}, fresh, where)
    for key, value, said in (
        ("lr", "1", "lr is a string, not a number"),
        ("betas", 0.9, "betas is a number, not a list"),
        ("amsgrad", 0, "amsgrad is a whole number, not true/false"),
    ):
        with pytest.raises(SchemaError) as refused:
            check_like({**fresh, key: value}, fresh, where)
        assert str(refused.value) == f"{where}.{said}"
