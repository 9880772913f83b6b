"""The run ledger: what every run writes, a killed run's metrics, reproduce, manage."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
import torchvision

from workbench.cli.commands import main
from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.runs.compare import config_differences
from workbench.core.runs.folder import RunFolder, delete_run, rename_run, tag_run
from workbench.core.runs.listing import (
    find_run,
    list_runs,
    read_events,
    read_metrics,
    summarize,
)
from workbench.core.runs.recorder import RunRecorder
from workbench.core.runs.reproduce import (
    compare,
    compare_with_folder,
    original_config,
    reproducible,
)
from workbench.core.train.engine import fit, iter_fit, prepare_run


def _train(*flags: str) -> int:
    return main(["train", "--quiet", *flags])


def test_a_command_line_run_writes_its_ledger(runs_root, capsys):
    flags = ["--model", "mlp", "--epochs", "2", "--log-every", "2", "--seed", "3"]
    assert _train(*flags) == 0
    (summary,) = list_runs()
    assert summary.folder.path.parent == runs_root
    assert (summary.dataset, summary.model, summary.status) == (
        "digits",
        "mlp",
        "finished",
    )
    assert 0 < summary.best_val_accuracy <= 1
    assert summary.seconds > 0
    info = summary.folder.info()
    assert info["origin"] == "command line"
    assert set(info["versions"]) >= {"torch", "torchvision", "python", "workbench"}
    # The exact build, local label too (read without importing torchvision).
    assert info["versions"]["torchvision"] == torchvision.__version__
    assert info["device"] == "cpu"
    metrics = read_metrics(summary.folder)
    assert [s.global_step for s in metrics["step"]] == list(range(2, 13, 2))
    assert all(s.step_seconds > 0 for s in metrics["step"])
    assert len(metrics["epoch"]) == 2
    assert sum(map(sum, metrics["epoch"][-1].confusion)) == 360  # digits' test set
    layers = metrics["health"][0].layers
    assert layers == ("hidden.1", "hidden.3", "head")
    assert len(metrics["histograms"]) == 2
    assert [e["kind"] for e in read_events(summary.folder)] == ["start", "finish"]
    assert "run folder:" in capsys.readouterr().out


_LOG_AND_REPORT = textwrap.dedent(
    """
    import sys
    from workbench.core import events as E
    from workbench.core.config import TrainConfig
    from workbench.core.train.engine import iter_fit, prepare_run
    from workbench.core.runs.folder import RunFolder
    from workbench.core.runs.recorder import RunRecorder

    cfg = TrainConfig(model="small-cnn", epochs=200, batch_size=32, log_every=1)
    run = prepare_run(cfg)
    recorder = RunRecorder(RunFolder.create(cfg, origin="test"), 0)
    recorder.start(run)
    for event in iter_fit(run):
        recorder.on_event(event, run)
        if isinstance(event, E.StepMetrics):
            print("logged", event.global_step, flush=True)
    """
)


@pytest.mark.slow
def test_a_killed_run_keeps_every_metric_it_logged(runs_root):
    proc = subprocess.Popen(
        [sys.executable, "-c", _LOG_AND_REPORT],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    reported: list[int] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            reported.append(int(line.split()[1]))
            if len(reported) == 60:  # past the first epoch's end (45 steps)
                break
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    (summary,) = list_runs()
    assert summary.status == "interrupted"  # killed: its process is gone
    logged = [s.global_step for s in read_metrics(summary.folder)["step"]]
    assert logged[: len(reported)] == reported  # nothing reported was lost
    assert logged == list(range(1, len(logged) + 1))  # and nothing torn
    assert read_metrics(summary.folder)["epoch"][0].epoch == 0


def test_two_runs_with_the_same_seed_reproduce(runs_root, tiny_arrays):
    cfg = TrainConfig(model="small-cnn", epochs=2, batch_size=64, log_every=1, seed=5)
    run = prepare_run(cfg, arrays=tiny_arrays)
    recorder = RunRecorder(RunFolder.create(cfg, origin="test"), 1)
    recorder.start(run)
    for event in iter_fit(run):
        recorder.on_event(event, run)
    folder = recorder.folder
    assert original_config(folder) == cfg
    again = prepare_run(original_config(folder), arrays=tiny_arrays)
    fit(again)
    verdict = compare_with_folder(folder, again.history.steps)
    assert verdict.reproduced
    assert verdict.compared == 8
    assert "reproduced: all 8 logged losses are identical" == verdict.describe()
    other = prepare_run(cfg.replace(seed=6), arrays=tiny_arrays)
    fit(other)
    differs = compare_with_folder(folder, other.history.steps)
    assert not differs.reproduced
    assert differs.first_difference == 1
    assert "first differ at step 1" in differs.describe()


def test_compare_names_the_first_differing_step():
    original = [
        E.StepMetrics.from_record({"global_step": s, "loss": 1.0 / s})
        for s in (1, 2, 3)
    ]
    assert compare(original, [(1, 1.0), (2, 0.5), (3, 1 / 3)]).reproduced
    late = compare(original, [(1, 1.0), (2, 0.5), (3, 0.3)])
    assert (late.first_difference, late.repeated) == (3, 0.3)


def test_runs_list_show_and_reproduce_on_the_command_line(runs_root, capsys):
    assert _train("--model", "mlp", "--epochs", "1", "--log-every", "1") == 0
    capsys.readouterr()
    assert main(["runs", "list"]) == 0
    out = capsys.readouterr().out
    (summary,) = list_runs()
    assert summary.id in out
    assert "finished" in out
    assert main(["runs", "show", summary.id[:15]]) == 0
    shown = capsys.readouterr().out
    assert f"run {summary.id}" in shown
    assert "epoch 1: step 6" in shown
    assert "event " in shown
    assert main(["runs", "reproduce", summary.id]) == 0
    assert "reproduced: all 6 logged losses are identical" in capsys.readouterr().out
    assert main(["runs", "show", "no-such-run"]) == 2
    assert "no run 'no-such-run'" in capsys.readouterr().err


def test_rename_tag_delete_and_the_config_differences(runs_root, tiny_arrays):
    folders = []
    for lr in (0.01, 0.02):
        cfg = TrainConfig(model="mlp", lr=lr, epochs=1)
        folders.append(RunFolder.create(cfg, origin="test"))
    rename_run(folders[0], "  baseline ")
    tag_run(folders[0], ["lr", "mlp ", "lr"])
    by_id = {r.id: r for r in list_runs()}
    first = by_id[folders[0].id]
    assert (first.title, first.tags) == ("baseline", ("lr", "mlp"))
    assert find_run("baseline") == folders[0]
    diff = config_differences([r.config for r in list_runs()])
    assert set(diff) == {"lr"}
    delete_run(folders[1])
    assert [r.id for r in list_runs()] == [folders[0].id]
    with pytest.raises(KeyError, match="no run"):
        find_run(folders[1].id)


def test_tensorboard_event_files_hold_the_scalars(runs_root, tiny_arrays):
    from tensorboard.backend.event_processing.event_accumulator import (
        EventAccumulator,
    )

    cfg = TrainConfig(model="mlp", epochs=1, batch_size=64, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)
    recorder = RunRecorder(RunFolder.create(cfg, origin="test"), 0, tensorboard=True)
    assert recorder.start(run) is None
    for event in iter_fit(run):
        recorder.on_event(event, run)
    logs = EventAccumulator(str(recorder.folder.path / "tensorboard")).Reload()
    losses = [s.value for s in logs.Scalars("loss")]
    steps = read_metrics(recorder.folder)["step"]
    assert losses == pytest.approx([s.loss for s in steps])
    assert "val_accuracy" in logs.Tags()["scalars"]
    assert "grad_norm/head" in logs.Tags()["scalars"]
    assert json.loads((recorder.folder.path / "run.json").read_text())["status"] == (
        "finished"
    )


def test_resuming_from_an_earlier_checkpoint_forgets_the_steps_logged_after_it(
    runs_root, tiny_arrays
):
    cfg = TrainConfig(model="mlp", epochs=2, batch_size=64, log_every=1)
    run = prepare_run(cfg, arrays=tiny_arrays)
    recorder = RunRecorder(RunFolder.create(cfg, origin="test"), 1)
    recorder.start(run)
    for event in iter_fit(run):
        recorder.on_event(event, run)
    path = recorder.folder.path / "metrics.jsonl"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"kind": "step", "global_step": 9, "lo')  # torn by a crash
    # The crash came after step 8; the last checkpoint held step 4 (epoch 1).
    resumed = prepare_run(cfg, arrays=tiny_arrays)
    resumed.global_step = 4
    RunRecorder(recorder.folder, 1).start(resumed)
    steps = [r.global_step for r in read_metrics(recorder.folder)["step"]]
    assert steps == [1, 2, 3, 4]
    assert path.read_text().endswith("\n")


def test_runs_that_cannot_be_repeated_from_their_config_are_refused(runs_root):
    from workbench.core.config import ConfigError

    cfg = TrainConfig(model="mlp", epochs=1)
    resumed = RunFolder.create(cfg, origin="test")
    resumed.claim(cfg.replace(epochs=3))
    info = resumed.info()
    assert info["changed_on_resume"] == ["epochs"]
    assert info["config"]["epochs"] == 3
    resumed.update(status="finished")
    with pytest.raises(ConfigError, match="resumed with other settings"):
        original_config(resumed)
    tuned = RunFolder.create(cfg, origin="test", started_from="fine-tune of x")
    tuned.update(status="finished")
    with pytest.raises(ConfigError, match="started from fine-tune of x"):
        original_config(tuned)
    plain = RunFolder.create(cfg, origin="test")
    plain.claim(cfg)  # the same settings: still repeatable
    plain.update(status="finished")
    assert original_config(plain) == cfg


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (lambda f, cfg: f.update(status="running"), "is still training"),
        (lambda f, cfg: f.update(status="stopped"), "did not finish (stopped)"),
        (
            lambda f, cfg: f.record_mask_change(3, ["fc.weight"]),
            "changed its freeze mask",
        ),
        (lambda f, cfg: f.claim(cfg.replace(lr=0.5)), "resumed with other settings"),
        (lambda f, cfg: f.update(started_from="fine-tune of x"), "started from"),
        (lambda f, cfg: f.update(config={}), "has no config"),
        (lambda f, cfg: f.update(config={"epochs": "many"}), "no usable config"),
    ],
)
def test_one_decision_says_which_runs_can_be_reproduced(runs_root, setup, reason):
    from workbench.core.config import ConfigError
    from workbench.core.session import Session

    cfg = TrainConfig(model="mlp", epochs=1)
    folder = RunFolder.create(cfg, origin="test")
    folder.update(status="finished")
    assert reproducible(summarize(folder)) is None
    setup(folder, cfg)
    if folder.info()["status"] == "running" and reason != "is still training":
        folder.update(status="finished")  # claim() marks it running again
    why = reproducible(summarize(folder))
    assert why is not None
    assert reason in why
    # The session refuses with the very words the Runs tab shows.
    with pytest.raises(ConfigError) as refused:
        Session(origin="test").reproduce(folder)
    assert str(refused.value) == why
    with pytest.raises(ConfigError):
        original_config(folder)


def test_the_ledger_reads_back_the_events_the_run_yielded(runs_root, tiny_arrays):
    cfg = TrainConfig(model="mlp", epochs=2, batch_size=64, log_every=2)
    run = prepare_run(cfg, arrays=tiny_arrays)
    recorder = RunRecorder(RunFolder.create(cfg, origin="test"), 0)
    recorder.start(run)
    events = []
    for event in iter_fit(run):
        recorder.on_event(event, run)
        events.append(event)
    metrics = read_metrics(recorder.folder)
    for kind, cls in [
        ("step", E.StepMetrics),
        ("epoch", E.EpochMetrics),
        ("health", E.LayerHealth),
        ("histograms", E.WeightHistograms),
    ]:
        assert metrics[kind] == [e for e in events if isinstance(e, cls)], kind
    assert metrics["epoch"] == run.history.epochs

    # A run continued from its checkpoint in a new folder: the ledger starts
    # with the history the checkpoint kept ((step, loss) and every epoch).
    again = RunRecorder(RunFolder.create(cfg, origin="test"), 0)
    again.start(run)
    seeded = read_metrics(again.folder)
    assert [(s.global_step, s.loss) for s in seeded["step"]] == run.history.steps
    assert seeded["epoch"] == run.history.epochs


def test_the_run_index_rereads_only_the_runs_that_changed(runs_root, monkeypatch):
    import shutil

    from workbench.core.runs import index as run_index

    cfg = TrainConfig(model="mlp", epochs=1)
    folders = [RunFolder.create(cfg.replace(seed=s), origin="test") for s in range(5)]
    read = []

    def counted(folder):
        read.append(folder.id)
        return summarize(folder)

    monkeypatch.setattr(run_index, "summarize", counted)
    index = run_index.RunIndex()
    assert index.runs() == list_runs()
    assert len(read) == 5
    read.clear()
    assert index.runs() == list_runs()
    assert read == []  # nothing changed, nothing read
    rename_run(folders[1], "renamed")
    shutil.rmtree(folders[3].path)
    assert index.runs() == list_runs()
    assert read == [folders[1].id]
    assert [r.title for r in index.runs()].count("renamed") == 1


def test_two_runs_begun_the_same_second_with_the_same_suffix_get_two_folders(
    runs_root, monkeypatch
):
    from datetime import datetime

    from workbench.core.runs import folder as folder_module

    class _Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime(2026, 12, 6, 1, 2, 3, tzinfo=tz)

    drawn = iter(["aaaa", "aaaa", "bbbb"])
    monkeypatch.setattr(folder_module, "datetime", _Frozen)
    monkeypatch.setattr(folder_module.secrets, "token_hex", lambda _n: next(drawn))
    first = RunFolder.create(TrainConfig(lr=0.01), origin="test")
    second = RunFolder.create(TrainConfig(lr=0.02), origin="test")
    assert first.id == "20261206-010203-digits-small-cnn-aaaa"
    assert second.id == "20261206-010203-digits-small-cnn-bbbb"
    assert first.info()["config"]["lr"] == 0.01  # not overwritten by the second
