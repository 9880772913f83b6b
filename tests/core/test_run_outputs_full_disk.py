"""``--metrics-json`` and ``--save``: a wrong path or a full disk never costs the run.

The full disk is a real one (a 2 MB tmpfs): torch meets ENOSPC as it would.
"""

from __future__ import annotations

import json

import pytest
import torch

from workbench.cli.commands import main
from workbench.core.checkpoints.io import (
    CheckpointError,
    load_checkpoint,
    write_checkpoint,
)

TRAIN = ["train", "--quiet", "--model", "mlp", "--log-every", "5"]


def test_a_folder_is_refused_in_one_line_before_training(tmp_path, runs_root, capsys):
    code = main([*TRAIN, "--epochs", "1", "--metrics-json", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (
        f"ptcore-workbench train: error: --metrics-json {tmp_path} is a folder: "
        f"give a file name, such as {tmp_path / 'metrics.json'}\n"
    )
    assert not any(runs_root.iterdir())  # nothing trained, no run recorded


def test_a_full_disk_is_said_once_and_the_run_finishes_saved(
    tmp_path, small_disk, capsys
):
    small_disk.fill()
    metrics, checkpoint = small_disk.path / "metrics.json", tmp_path / "run.pt"
    flags = ["--epochs", "3", "--metrics-json", str(metrics), "--save", str(checkpoint)]
    code = main([*TRAIN, *flags])
    out, err = capsys.readouterr()
    assert out.count("warning: cannot write --metrics-json") == 1  # not per epoch
    assert "(No space left on device); the run goes on" in out
    assert "done: step 18/18" in out
    assert err == (
        f"ptcore-workbench train: error: cannot write --metrics-json {metrics}: "
        "No space left on device\n"
    )
    assert code == 1  # what a script waiting for the file must learn
    assert load_checkpoint(checkpoint)["global_step"] == 18
    assert sorted(p.name for p in small_disk.path.iterdir()) == [".filler"]


def test_room_again_by_the_end_writes_the_whole_document(
    tmp_path, small_disk, capsys, monkeypatch
):
    from workbench.cli import run_outputs as metrics_json

    small_disk.fill()
    during = metrics_json.MetricsJson.write_during_run

    def then_room(self, document):
        said = during(self, document)
        if len(document["epochs"]) == 2:
            small_disk.free()  # the user deleted something meanwhile
        return said

    monkeypatch.setattr(metrics_json.MetricsJson, "write_during_run", then_room)
    metrics = small_disk.path / "metrics.json"
    assert main([*TRAIN, "--epochs", "3", "--metrics-json", str(metrics)]) == 0
    document = json.loads(metrics.read_text())
    assert [e["epoch"] for e in document["epochs"]] == [1, 2, 3]
    assert document["final"]["global_step"] == 18


def test_save_onto_a_full_disk_is_said_once_and_the_run_finishes(
    small_disk, runs_root, capsys
):
    """torch raises RuntimeError on a full disk; the user reads one line."""
    checkpoint = small_disk.path / "run.pt"
    small_disk.fill(leave=65536)  # room for a little: torch's RuntimeError
    code = main([*TRAIN, "--epochs", "3", "--save", str(checkpoint)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert out.count("warning: cannot write --save") == 1
    assert f"cannot write --save {checkpoint} (No space left on device)" in out
    assert "done: step 18/18" in out
    (summary,) = [line for line in out.splitlines() if line.startswith("done: ")]
    assert "saved" not in summary
    assert err == (
        f"ptcore-workbench train: error: cannot write --save {checkpoint}: "
        "No space left on device\n"
    )
    assert code == 1
    assert sorted(p.name for p in small_disk.path.iterdir()) == [".filler"]
    (run,) = runs_root.iterdir()  # the run folder's own checkpoint is whole
    assert load_checkpoint(run / "checkpoint.pt")["global_step"] == 18


def test_a_checkpoint_on_a_full_disk_keeps_the_previous_file(small_disk):
    path = small_disk.path / "model.pt"
    write_checkpoint(path, {"w": torch.ones(4)})
    small_disk.fill(leave=65536)  # room for a little: torch's RuntimeError
    with pytest.raises(CheckpointError) as refused:
        write_checkpoint(path, {"w": torch.zeros(100_000)})
    assert str(refused.value) == (
        f"cannot save {path}: the disk is full (the previous file is intact)"
    )
    small_disk.free()
    assert torch.equal(torch.load(path, weights_only=True)["w"], torch.ones(4))
    assert sorted(p.name for p in small_disk.path.iterdir()) == ["model.pt"]
