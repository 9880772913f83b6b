"""The best epoch kept as best.pt, and early stopping that survives a kill.

The rules on hand-made histories first; then real runs on ``digits``: the
record a run leaves, and a run killed (SIGKILL, after the epoch that follows
its best) and resumed, which must stop at the same epoch with the same best
weights as a run never killed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import textwrap

import pytest
from PIL import Image

from workbench.cli import main
from workbench.core.checkpoints.io import load_checkpoint
from workbench.core.events import EpochMetrics
from workbench.core.train.best_epoch import (
    best_epoch,
    completed_epochs,
    early_stop_reason,
    metric_value,
)


def _epoch(index: int, accuracy: float, loss: float = 1.0, confusion=()):
    return EpochMetrics(
        epoch=index,
        global_step=10 * (index + 1),
        train_loss=1.0,
        train_accuracy=0.5,
        val_loss=loss,
        val_accuracy=accuracy,
        images_per_s=1.0,
        seconds=1.0,
        confusion=confusion,
    )


def test_the_best_epoch_must_beat_the_best_by_more_than_the_delta():
    epochs = [_epoch(i, a) for i, a in enumerate([0.90, 0.95, 0.955, 0.94, 0.97])]
    assert best_epoch(epochs, "val_accuracy") == best_epoch(epochs, "val_accuracy", 0)
    plain = best_epoch(epochs, "val_accuracy")
    assert (plain.epoch, plain.value, plain.stale) == (4, 0.97, 0)
    coarse = best_epoch(epochs[:4], "val_accuracy", min_delta=0.01)
    # 0.955 beats 0.95 by 0.005 only: epoch 2 is stale, as is epoch 3.
    assert (coarse.epoch, coarse.stale) == (1, 2)
    tie = best_epoch([_epoch(0, 0.9), _epoch(1, 0.9)], "val_accuracy")
    assert (tie.epoch, tie.stale) == (0, 1)  # a tie is not an improvement


def test_loss_is_better_lower_and_macro_f1_comes_from_the_confusion():
    epochs = [_epoch(0, 0.5, loss=0.4), _epoch(1, 0.9, loss=0.6)]
    assert best_epoch(epochs, "val_loss").epoch == 0
    assert best_epoch(epochs, "val_accuracy").epoch == 1
    # 9 of class 0 right, the one image of class 1 called 0: accuracy 90%,
    # but class 1's F1 is 0, so macro-F1 is about 0.47.
    lopsided = _epoch(0, 0.9, confusion=((9, 0), (1, 0)))
    assert metric_value(lopsided, "macro_f1") == pytest.approx((18 / 19 + 0) / 2)
    assert math.isnan(metric_value(_epoch(0, 0.9), "macro_f1"))


def test_a_resumed_epoch_replaces_its_stopped_part_and_nan_never_wins():
    records = [_epoch(0, 0.8), _epoch(1, 0.99), _epoch(1, 0.85), _epoch(2, 0.7)]
    done = completed_epochs(records, 2)  # epoch 1 stopped once, then finished
    assert [(e.epoch, e.val_accuracy) for e in done] == [(0, 0.8), (1, 0.85)]
    nan = [_epoch(0, math.nan), _epoch(1, 0.5), _epoch(2, math.nan)]
    best = best_epoch(nan, "val_accuracy")
    assert (best.epoch, best.stale) == (1, 1)


def test_early_stop_waits_patience_stale_epochs_and_says_why():
    epochs = [_epoch(i, a) for i, a in enumerate([0.90, 0.95, 0.94, 0.93])]
    assert early_stop_reason(epochs[:3], "val_accuracy", 2, 0.0) is None
    why = early_stop_reason(epochs, "val_accuracy", 2, 0.0)
    assert why == (
        "validation accuracy did not improve for 2 epochs after epoch 2 (95.00%)"
    )
    assert early_stop_reason(epochs, "val_accuracy", None, 0.0) is None


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--early-stop", "0"], "early_stop: 0 must be a whole number >= 1"),
        (["--early-stop-delta", "-0.1"], "early_stop_delta: -0.1 must be a finite"),
    ],
)
def test_bad_early_stop_settings_are_one_line_and_leave_no_run(
    flags, message, capsys, runs_root
):
    assert main(["train", "--quiet", *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ptcore-workbench train: error: ")
    assert message in err
    assert list(runs_root.iterdir()) == []


def _weights_hash(path) -> str:
    payload = load_checkpoint(path)
    digest = hashlib.sha256()
    for name, tensor in sorted(payload["model_state"].items()):
        digest.update(name.encode())
        digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()


TRAIN = ["--quiet", "--epochs", "30", "--early-stop", "2", "--precision", "fp32"]


def _only_run(root):
    (folder,) = [p for p in root.iterdir() if (p / "run.json").is_file()]
    return folder, json.loads((folder / "run.json").read_text())


def test_a_run_keeps_its_best_epoch_and_records_its_early_stop(
    runs_root, tmp_path, capsys
):
    assert main(["train", *TRAIN]) == 0
    out = capsys.readouterr().out
    folder, info = _only_run(runs_root)
    best, early = info["best_epoch"], info["early_stop"]
    assert early["epoch"] == best["epoch"] + 2 < 30  # patience 2 after the best
    assert f"stopped early after epoch {early['epoch']}" in out
    assert f"best epoch {best['epoch']} of {early['epoch']}" in out
    assert str(folder / "best.pt") in out
    kept = load_checkpoint(folder / "best.pt")
    assert kept["epoch"] == best["epoch"]
    epochs = kept["history"]["epochs"]
    assert max(e["val_accuracy"] for e in epochs) == best["value"]
    assert load_checkpoint(folder / "checkpoint.pt")["epoch"] == early["epoch"]
    assert _weights_hash(folder / "best.pt") != _weights_hash(folder / "checkpoint.pt")
    # predict and export read the latest or, with --best, the best, and say which.
    image = tmp_path / "digit.png"
    digit = Image.new("L", (28, 28), 0)
    digit.paste(255, (12, 4, 16, 24))  # a stroke: a "1"
    digit.save(image)
    assert main(["predict", "--checkpoint", str(folder), str(image)]) == 0
    latest = f"the latest epoch, {early['epoch']}; the best was epoch {best['epoch']} "
    assert f"weights: {folder / 'checkpoint.pt'}, {latest}" in capsys.readouterr().err
    assert main(["predict", "--checkpoint", str(folder), "--best", str(image)]) == 0
    said = f"weights: {folder / 'best.pt'}, the best epoch, {best['epoch']} of"
    assert said in capsys.readouterr().err
    out = tmp_path / "exported"
    export = ["export", str(folder), "--best", "--out", str(out), "--format", "onnx"]
    assert main(export) == 0
    assert f"the best epoch, {best['epoch']} of {early['epoch']}" in (
        capsys.readouterr().out
    )
    card = (out / "MODEL_CARD.md").read_text()
    assert (
        f"- weights: best.pt, the best epoch, {best['epoch']} of {early['epoch']}"
        in (card)
    )


def test_best_needs_a_run_folder_with_a_best_epoch(tmp_path, capsys):
    loose = tmp_path / "model.pt"
    loose.write_bytes(b"")
    image = tmp_path / "x.png"
    assert main(["predict", "--checkpoint", str(loose), "--best", str(image)]) == 2
    assert "--best: " in capsys.readouterr().err
    (tmp_path / "plain").mkdir()
    assert main(["export", str(tmp_path / "plain"), "--out", str(tmp_path / "o")]) == 2
    assert "is a folder but not a run folder" in capsys.readouterr().err


# Trains with the ledger as the command line does, and SIGKILLs itself right
# after epoch KILL_AFTER was recorded (its checkpoint saved).
_KILLED = textwrap.dedent(
    """
    import os, signal, sys
    from workbench.cli import main
    from workbench.core.runs import recorder

    kill_after = int(sys.argv[1])
    on_event = recorder.RunRecorder.on_event

    def on_event_then_die(self, event, run):
        said = on_event(self, event, run)
        if type(event).__name__ == "EpochMetrics" and run.epoch == kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
        return said

    recorder.RunRecorder.on_event = on_event_then_die
    main(["train", *sys.argv[2:]])
    """
)


def test_a_killed_and_resumed_run_stops_where_and_keeps_what_the_straight_one_did(
    tmp_path, monkeypatch, capsys
):
    straight_root, killed_root = tmp_path / "straight", tmp_path / "killed"
    monkeypatch.setenv("PTCORE_RUNS_DIR", str(straight_root))
    assert main(["train", *TRAIN]) == 0
    straight, info = _only_run(straight_root)
    best_at = info["best_epoch"]["epoch"]
    # Killed after the epoch that follows the best: one stale epoch is behind
    # it, so a resume that forgot it would train one epoch too many.
    env = {**os.environ, "PTCORE_RUNS_DIR": str(killed_root)}
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED, str(best_at + 1), *TRAIN], env=env
    )
    assert killed.returncode == -9
    folder, before = _only_run(killed_root)
    assert before["status"] == "running"
    assert before["epoch"] == best_at + 1
    assert "early_stop" not in before
    monkeypatch.setenv("PTCORE_RUNS_DIR", str(killed_root))
    assert main(["train", "--quiet", "--resume", str(folder / "checkpoint.pt")]) == 0
    _, after = _only_run(killed_root)
    assert after["early_stop"] == info["early_stop"]
    assert after["best_epoch"] == info["best_epoch"]
    assert _weights_hash(folder / "best.pt") == _weights_hash(straight / "best.pt")
    assert _weights_hash(folder / "checkpoint.pt") == _weights_hash(
        straight / "checkpoint.pt"
    )
    # A run that stopped early trains on only when told to.
    capsys.readouterr()
    again = ["train", "--quiet", "--resume", str(folder / "checkpoint.pt")]
    assert main(again) == 2
    assert "the run stopped early: validation accuracy did not improve" in (
        capsys.readouterr().err
    )
    assert main([*again, "--early-stop", "3"]) == 0
    assert _only_run(killed_root)[1]["epoch"] > after["epoch"]
