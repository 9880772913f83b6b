from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch
from PIL import Image

from tests.idx_files import write_mnist_raw
from workbench.cli.commands import main
from workbench.core.checkpoints.io import load_checkpoint
from workbench.core.data.sources import load_arrays


def _train(tmp_path, *flags):
    return main(["train", "--quiet", *flags])


def test_train_saves_checkpoint_and_metrics_json(tmp_path, capsys):
    ckpt, metrics = tmp_path / "run.pt", tmp_path / "metrics.json"
    code = _train(
        tmp_path,
        "--model",
        "mlp",
        "--epochs",
        "2",
        "--lr",
        "0.003",
        "--log-every",
        "5",
        "--save",
        str(ckpt),
        "--metrics-json",
        str(metrics),
        "--seed",
        "1",
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "epoch 2:" in out
    (summary,) = [line for line in out.splitlines() if line.startswith("done: ")]
    assert summary.startswith("done: step 12/12, val accuracy ")
    doc = json.loads(metrics.read_text())
    assert set(doc) == {"config", "epochs", "steps", "final"}
    assert doc["config"]["model"] == "mlp"
    assert doc["config"]["seed"] == 1
    assert [e["epoch"] for e in doc["epochs"]] == [1, 2]
    assert set(doc["epochs"][0]) >= {
        "epoch",
        "train_loss",
        "val_loss",
        "val_accuracy",
        "images_per_s",
        "seconds",
    }
    assert [s["step"] for s in doc["steps"]] == [5, 10, 12]
    assert set(doc["final"]) >= {
        "val_accuracy",
        "images_per_s",
        "seconds",
        "compile_seconds",
    }
    assert doc["final"]["val_accuracy"] > 0.8  # digits, an MLP, 2 epochs
    assert load_checkpoint(ckpt)["global_step"] == 12


def test_resume_stops_where_an_uninterrupted_run_would(tmp_path, capsys):
    ckpt = tmp_path / "run.pt"
    common = ["--model", "mlp", "--epochs", "3", "--log-every", "1", "--seed", "2"]
    assert _train(tmp_path, *common, "--max-steps", "7", "--save", str(ckpt)) == 0
    assert load_checkpoint(ckpt)["global_step"] == 7
    assert (
        _train(
            tmp_path, "--resume", str(ckpt), "--max-steps", "10", "--save", str(ckpt)
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "resuming" in out
    assert "at step 7" in out
    assert load_checkpoint(ckpt)["global_step"] == 10


def test_train_on_a_torchvision_root(tmp_path, capsys):
    write_mnist_raw(tmp_path / "data", "mnist")
    code = _train(
        tmp_path,
        "--dataset",
        "mnist",
        "--data-dir",
        str(tmp_path / "data"),
        "--model",
        "mlp",
        "--epochs",
        "1",
        "--no-download",
    )
    assert code == 0
    assert "training mlp on mnist" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--batch-size", "0"], "batch_size: 0 must be a whole number >= 1"),
        (["--lr", "-1"], "lr: -1.0 must be a finite number > 0"),
        (["--config", "missing.toml"], "config file not found"),
        (["--resume", "missing.pt"], "no checkpoint at missing.pt"),
        (["--freeze", "encoder.*"], "freeze pattern 'encoder.*' matches no parameter"),
        (["--device", "cuda:7"], "device"),
        (["--dataset", "mnist", "--data-dir", "empty", "--no-download"], "missing"),
        (["--workers", "2"], "workers: the fast in-memory loader"),
        (["--dataset", "my-digits"], "my-digits has no drawings yet"),
        (["--replay", "5"], "replay: mixes base_dataset images"),
        (["--resume", "a.pt", "--init-from", "b.pt"], "give one of them"),
    ],
)
def test_bad_input_is_one_clear_message(tmp_path, monkeypatch, capsys, flags, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    code = _train(tmp_path, *flags)
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("ptcore-workbench train: error: ")
    assert message in err
    assert "Traceback" not in err


def test_unknown_choice_is_rejected_by_the_parser(capsys):
    with pytest.raises(SystemExit) as info:
        main(["train", "--precision", "fp8"])
    assert info.value.code == 2
    assert "invalid choice: 'fp8'" in capsys.readouterr().err


def test_an_unknown_model_is_one_line_naming_the_kinds_of_model(capsys):
    # --model is free text (any torchvision classifier or file.py:Name), so an
    # unknown name is refused by the config's check, not by argparse's choices.
    assert main(["train", "--model", "resnet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ptcore-workbench train: error: model: 'resnet' is neither")
    assert err.count("\n") == 1
    assert "Traceback" not in err


@pytest.mark.slow
def test_predict_prints_class_and_top_probabilities(tmp_path, capsys):
    ckpt = tmp_path / "digits.pt"
    assert _train(tmp_path, "--model", "small-cnn", "--save", str(ckpt)) == 0
    arrays = load_arrays("digits")
    paths = []
    for index in range(6):
        image = arrays.test_images[index].numpy()
        path = tmp_path / f"d{index}.png"
        # Dark ink on white paper, larger than 28x28, like a scan.
        big = Image.fromarray(255 - image).resize((112, 112), Image.Resampling.BILINEAR)
        big.save(path)
        paths.append(path)
    capsys.readouterr()
    assert main(["predict", "--checkpoint", str(ckpt), *map(str, paths)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 6
    predicted = [int(line.split(": ")[1].split()[0]) for line in lines]
    truth = arrays.test_labels[:6].tolist()
    assert sum(p == t for p, t in zip(predicted, truth, strict=True)) >= 5
    assert all(line.count("%") == 3 for line in lines)


def test_predict_reports_unreadable_images(tmp_path, capsys, trained_mlp_checkpoint):
    ckpt = trained_mlp_checkpoint
    (tmp_path / "blank.png").write_bytes(b"")
    Image.fromarray(np.zeros((28, 28), np.uint8)).save(tmp_path / "black.png")
    code = main(
        [
            "predict",
            "--checkpoint",
            str(ckpt),
            str(tmp_path / "blank.png"),
            str(tmp_path / "black.png"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert err.splitlines() == [
        f"{tmp_path / 'blank.png'}: the file is empty (0 bytes)",
        f"{tmp_path / 'black.png'}: the image holds no ink: draw or load a digit first",
    ]


@pytest.mark.slow
def test_console_entry_point_runs_headless_without_traceback(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_text("not a checkpoint")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "workbench",
            "predict",
            "--checkpoint",
            str(bad),
            "x.png",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "is a text file, not a checkpoint" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_train_on_my_digits_from_trained_weights(tmp_path, capsys):
    from tests.core.test_my_digits import drawing
    from workbench.core.data.my_digits import MyDigits

    store = MyDigits()
    for label in range(10):
        for _ in range(5):
            store.add(drawing(label), label)
    base = tmp_path / "base.pt"
    assert _train(tmp_path, "--model", "mlp", "--epochs", "5", "--save", str(base)) == 0
    tuned = tmp_path / "tuned.pt"
    code = _train(
        tmp_path,
        "--dataset",
        "my-digits",
        "--base-dataset",
        "digits",
        "--replay",
        "100",
        "--init-from",
        str(base),
        "--freeze",
        "hidden.*",
        "--epochs",
        "10",
        "--batch-size",
        "32",
        "--save",
        str(tuned),
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"starting from the weights in {base}" in out
    assert "training mlp on my-digits (140 images)" in out  # 40 drawings + 100
    saved = load_checkpoint(tuned)
    assert saved["config"]["dataset"] == "my-digits"
    assert saved["config"]["base_dataset"] == "digits"
    # The frozen layers are the base checkpoint's, bit for bit.
    before = load_checkpoint(base)["model_state"]
    for name, tensor in saved["model_state"].items():
        if name.startswith("hidden."):
            assert torch.equal(tensor, before[name]), name
    epochs = saved["history"]["epochs"]
    assert epochs[-1]["val_accuracy"] >= epochs[0]["val_accuracy"] + 0.3, out


def test_inspect_prints_contents_and_the_fit_against_a_model(
    capsys, trained_mlp_checkpoint
):
    ckpt = trained_mlp_checkpoint  # mlp, digits, one epoch
    capsys.readouterr()
    assert main(["inspect", str(ckpt), "--against-model", "mlp", "--classes", "2"]) == 0
    out = capsys.readouterr().out
    assert "format: ptcore-workbench checkpoint, version 3" in out
    assert "config: dataset=digits" in out
    assert "global step 6" in out
    assert "head.weight" in out
    assert "10x128" in out
    assert "against mlp with 2 classes: partial fit: 4 of 6 tensors match" in out
    assert "shape mismatch: head.weight: file (10, 128) vs model (2, 128)" in out
    assert main(["inspect", str(ckpt), "--against-model", "mlp"]) == 0
    assert "fits exactly: all 6 tensors match" in capsys.readouterr().out


def test_init_partial_loads_what_fits_and_says_so(tmp_path, capsys):
    from workbench.core.models.builtins import build_model

    letters = build_model("small-cnn", 26, seed=3)
    path = tmp_path / "letters.pt"
    torch.save(letters.state_dict(), path)
    common = ["--init-from", str(path), "--model", "small-cnn", "--max-steps", "1"]
    assert _train(tmp_path, *common) == 2
    err = capsys.readouterr().err
    assert "partial fit" in err
    assert "add --init-partial" in err
    saved = tmp_path / "out.pt"
    code = _train(
        tmp_path, *common, "--init-partial", "--freeze", "block*", "--save", str(saved)
    )
    assert code == 0
    out = capsys.readouterr().out
    assert (
        "partly: kept 24 tensors from the file, reinitialised head.bias, head.weight"
        in out
    )
    state = load_checkpoint(saved)["model_state"]
    for name, tensor in letters.state_dict().items():
        if name.startswith("block") and "num_batches" not in name:
            assert torch.equal(state[name], tensor), name


def test_init_from_another_architecture_says_which_it_was_saved_from(
    tmp_path, capsys, trained_mlp_checkpoint
):
    ckpt = trained_mlp_checkpoint
    capsys.readouterr()
    code = _train(tmp_path, "--init-from", str(ckpt), "--model", "small-cnn")
    assert code == 2
    assert "it was saved from mlp: drop --model" in capsys.readouterr().err


@pytest.mark.slow
def test_a_killed_command_line_run_leaves_a_resumable_folder(tmp_path, runs_root):
    import os
    import signal
    import time

    from workbench.core.runs.folder import interrupted_runs

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workbench",
            "train",
            "--quiet",
            "--model",
            "mlp",
            "--epochs",
            "500",
            "--batch-size",
            "32",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        checkpoint = None
        while time.monotonic() < deadline and checkpoint is None:
            found = list(runs_root.glob("*/checkpoint.pt"))
            checkpoint = found[0] if found else None
            time.sleep(0.1)
        assert checkpoint is not None, "no autosave within two minutes"
        time.sleep(0.3)  # a later epoch may be saving right now: kill anyway
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    (folder,) = interrupted_runs()
    assert folder.checkpoint_path == checkpoint
    payload = load_checkpoint(checkpoint)  # whole, whatever the kill interrupted
    assert payload["epoch"] >= 1
    assert folder.info()["status"] == "running"
    code = main(
        [
            "train",
            "--quiet",
            "--resume",
            str(checkpoint),
            "--max-steps",
            str(payload["global_step"] + 3),
        ]
    )
    assert code == 0
    assert folder.info()["status"] == "finished"
    assert load_checkpoint(checkpoint)["global_step"] == payload["global_step"] + 3
