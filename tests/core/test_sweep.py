"""Sweeps on Optuna: a checked search space; every trial an ordinary run."""

from __future__ import annotations

import json

import pytest

from workbench.cli.commands import main
from workbench.core.config import ConfigError, TrainConfig, load_config
from workbench.core.runs.folder import runs_dir
from workbench.core.runs.listing import list_runs
from workbench.core.tuning.space import Choices, LogRange, SearchSpace
from workbench.core.tuning.study import best_trial, open_study, recorded_plan
from workbench.core.tuning.sweep import SweepSettings, run_sweep

BASE = TrainConfig(model="mlp", epochs=2, batch_size=256, log_every=5, lr=0.006)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, "the sweep varies nothing"),
        ({"lr": [0.1, 0.001]}, "--sweep-lr 0.1 0.001: the range is empty or inverted"),
        ({"lr": [0.01, 0.01]}, "the range is empty or inverted"),
        ({"weight_decay": [0, 0.1]}, "a log-scale range cannot reach 0 or below"),
        ({"lr": [1e-4]}, "--sweep-lr takes a range: LOW HIGH, not 1 values"),
        ({"momentum": [0.9]}, "cannot sweep 'momentum'"),
        ({"optimizer": ["adam", "rmsprop"]}, "'rmsprop' is not one of adam"),
        ({"batch_size": ["64", "x"]}, "are not all int values"),
        ({"batch_size": [0, 64]}, "must be whole numbers above 0"),
        ({"augment": ["crop", "blur"]}, "'blur' is not one of crop"),
    ],
)
def test_a_space_that_cannot_work_is_one_line(raw, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        SearchSpace.parse(raw)


def test_a_trials_values_become_a_checked_config():
    space = SearchSpace.parse(
        {"lr": ["1e-4", "1e-1"], "batch_size": [32, 64], "augment": ["crop", "flip"]}
    )
    assert space.dimensions["lr"] == LogRange(1e-4, 1e-1)
    assert space.dimensions["batch_size"] == Choices((32, 64))
    cfg = space.apply(
        BASE.replace(augment=("flip",)),
        {"lr": 0.02, "batch_size": 32, "augment_crop": True, "augment_flip": False},
    )
    assert (cfg.lr, cfg.batch_size, cfg.augment) == (0.02, 32, ("crop",))
    # Trial 0 is the user's settings; a value outside the space is drawn instead.
    assert space.current(BASE.replace(batch_size=64)) == {
        "lr": 0.006,
        "batch_size": 64,
        "augment_crop": False,
        "augment_flip": False,
    }
    assert "lr" not in space.current(BASE.replace(lr=0.5))


def test_frozen_blocks_freeze_the_models_leading_blocks():
    space = SearchSpace.parse({"frozen_blocks": [0, 2]})
    cfg = space.apply(BASE.replace(model="small-cnn"), {"frozen_blocks": 2})
    assert cfg.frozen == ("block1.*", "block2.*")
    with pytest.raises(ConfigError, match="small-cnn has 5 blocks"):
        space.apply(BASE.replace(model="small-cnn"), {"frozen_blocks": 5})


def _sweep(study: str, trials: int = 4, **changes):
    space = SearchSpace.parse({"lr": [1e-4, 1e-1], "batch_size": [128, 256]})
    settings = SweepSettings(space, trials, study, seed=0, **changes)
    return list(run_sweep(BASE, settings))


def test_every_trial_is_a_run_and_trial_0_is_the_users_settings():
    done = _sweep("s1")
    assert [d.number for d in done] == [0, 1, 2, 3]
    assert done[0].params == {"lr": 0.006, "batch_size": 256}
    for trial in done:
        info = json.loads((trial.run_folder / "run.json").read_text())
        assert info["sweep"] == {"study": "s1", "trial": trial.number}
        assert info["config"]["lr"] == pytest.approx(trial.params["lr"])
        assert info["config"]["batch_size"] == trial.params["batch_size"]
        assert info["status"] == ("pruned" if trial.state == "pruned" else "finished")
        assert (trial.run_folder / "checkpoint.pt").is_file()  # pruned ones too
        assert trial.state in ("complete", "pruned")
    listed = {r.folder.path: r for r in list_runs()}
    for trial in done:
        assert listed[trial.run_folder].sweep == f"s1 #{trial.number}"
    study = open_study("s1", create=False)
    assert len(study.trials) == 4
    # The same seed proposes the same trials.
    again = _sweep("s2")
    assert [d.params for d in again] == [d.params for d in done]


def test_a_later_sweep_of_the_same_study_adds_trials():
    _sweep("grow", trials=2)
    more = _sweep("grow", trials=3)
    assert [d.number for d in more] == [2]


def test_pruning_stops_a_trial_after_an_epoch_and_keeps_it():
    done = _sweep("prune", trials=6, pruner="halving")
    pruned = [d for d in done if d.state == "pruned"]
    assert pruned, [d.state for d in done]
    for trial in pruned:
        assert trial.epochs < BASE.epochs
        info = json.loads((trial.run_folder / "run.json").read_text())
        assert info["status"] == "pruned"


def test_the_command_line_sweeps_and_shows(capsys):
    flags = ["--model", "mlp", "--epochs", "1", "--batch-size", "256", "--quiet"]
    sweep = ["--sweep-lr", "1e-3", "1e-1", "--trials", "2", "--study", "cli"]
    assert main(["sweep", *flags, *sweep]) == 0
    out = capsys.readouterr().out
    assert "sweep cli: 2 trials over lr" in out
    assert "trial 0: lr 6.00e-03 -> " in out
    assert str(runs_dir()) in out
    assert main(["runs", "list"]) == 0
    listed = capsys.readouterr().out
    assert listed.count("  sweep cli #") == 2
    assert main(["sweep", "show", "cli"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("study cli: 2 trials")
    assert "  trial 1: lr " in shown
    # The best trial is a run like any: Reproduce trains it again, step for step.
    best = best_trial("cli", None)
    assert f"best: trial {best.number}, " in shown
    (run,) = [r for r in list_runs() if r.sweep == f"cli #{best.number}"]
    assert main(["runs", "reproduce", run.id]) == 0
    assert "reproduced: all " in capsys.readouterr().out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--trials", "0", "--sweep-lr", "1e-3", "1e-1"], "--trials must be 1 or more"),
        (["--sweep-lr", "1e-1", "1e-3"], "the range is empty or inverted"),
        (
            ["--sweep-lr", "1e-3", "1e-1", "--storage", "sqlite:///x.db"],
            "give a postgresql:// URL",
        ),
        (["show", "nothing-here"], "no study named 'nothing-here'"),
    ],
)
def test_bad_sweeps_are_one_line_exit_2_and_leave_no_run(capsys, flags, message):
    assert main(["sweep", "--model", "mlp", "--quiet", *flags]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    left = list(runs_dir().rglob("*")) if runs_dir().exists() else []
    assert left == []  # no run folder, no study file


SWEEP_TOML = """model = "mlp"
epochs = 1
batch_size = 256

[sweep]
lr = [1e-3, 1e-1]
batch_size = [128, 256]
trials = 2
"""


def test_a_config_files_sweep_table_is_the_space_and_flags_win(tmp_path, capsys):
    path = tmp_path / "run.toml"
    path.write_text(SWEEP_TOML)
    # train reads the same file and leaves the table to sweep.
    assert load_config(path) == TrainConfig(model="mlp", epochs=1, batch_size=256)
    flags = ["--config", str(path), "--study", "toml", "--quiet"]
    assert main(["sweep", *flags, "--sweep-batch-size", "256"]) == 0
    assert "sweep toml: 2 trials over lr, batch_size" in capsys.readouterr().out
    plan = recorded_plan(open_study("toml", create=False))
    assert plan.space == SearchSpace.parse({"lr": [1e-3, 1e-1], "batch_size": [256]})
    assert plan.trials == 2
    assert plan.base == TrainConfig(model="mlp", epochs=1, batch_size=256)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("lr = 0.1", "[sweep] lr must be a list (a range or choices), not 0.1"),
        ("momentum = [0.8, 0.9]", "[sweep] 'momentum' is not a field a sweep varies"),
        ('lr = [1e-3, 1e-1]\ntrials = "x"', "[sweep] trials must be a whole number"),
        ("lr = [1e-1, 1e-3]", "the range is empty or inverted"),
    ],
)
def test_a_bad_sweep_table_is_one_line(tmp_path, capsys, table, message):
    path = tmp_path / "run.toml"
    path.write_text(f'model = "mlp"\n\n[sweep]\n{table}\n')
    assert main(["sweep", "--config", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert not runs_dir().exists() or list(runs_dir().rglob("*")) == []
