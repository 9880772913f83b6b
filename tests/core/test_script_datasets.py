"""The written script repeats train on CIFAR-10, my digits, and with augmentation.

Each case trains with the workbench's ``train`` command and runs the script
``write_script`` made for the same config in a fresh ``python -I`` (no
PYTHONPATH: the script cannot import workbench). The per-step losses must be
equal, not close: the same files read the same way (CIFAR-10's binary records,
the drawings' JSON index and PNGs, the base dataset replayed), and the same
seeded augmentation drawn in plain torch.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.core.test_cifar import _write_batches
from tests.core.test_my_digits import drawing
from tests.idx_files import write_mnist_raw
from tests.script_ruff import assert_ruff_accepts
from tests.warm_python import SIDE_BY_SIDE
from workbench import cli
from workbench.core.config import TrainConfig, save_config
from workbench.core.data.my_digits import MyDigits
from workbench.core.script.parts import assignment
from workbench.core.script.writer import script_problem, write_script

_ALL = ("crop", "flip", "rotate", "jitter")

# A few images, a few steps each: the data and the augmentation are the point.
CASES: dict[str, dict[str, Any]] = {
    # Every augmentation on gray digits, a model with dropout (the global
    # stream), the fast path: the batch generators drawn in plain torch.
    "digits-augment-fast": {
        "dataset": "digits",
        "model": "cnn",
        "augment": _ALL,
        "batch_size": 64,
        "max_steps": 8,
    },
    # CIFAR-10's binary records brought to 16x16, colour jitter (saturation).
    "cifar-16px-crop-jitter-fast": {
        "dataset": "cifar10",
        "image_size": 16,
        "augment": ("crop", "jitter"),
        "batch_size": 8,
        "epochs": 2,
    },
    # CIFAR-10 per sample through a DataLoader, with torchvision's flip.
    "cifar-dataloader-flip": {
        "dataset": "cifar10",
        "model": "cnn",
        "loader": "dataloader",
        "augment": ("flip",),
        "batch_size": 8,
        "epochs": 1,
    },
    # My digits prepared like MNIST, 40 MNIST images replayed into training.
    "my-digits-mnist-replay-fast": {
        "dataset": "my-digits",
        "replay": 40,
        "batch_size": 8,
        "epochs": 2,
    },
    # Like the UCI digits (fields saved in the other recipe are made again),
    # per sample through a DataLoader, rotated and jittered by torchvision.
    "my-digits-digits-dataloader-augment": {
        "dataset": "my-digits",
        "base_dataset": "digits",
        "model": "cnn",
        "loader": "dataloader",
        "augment": ("rotate", "jitter"),
        "batch_size": 8,
        "epochs": 2,
    },
}


def _drawings() -> None:
    """50 drawings, 5 of each digit (one held out each), of several sizes,
    saved in both recipes: a field in the run's recipe is read as stored,
    one in the other is made again from the strokes."""
    mine = MyDigits()
    for i in range(50):
        strokes = drawing(i % 10)[:: 2 + i % 3, :: 3 + i % 4]
        mine.add(strokes, i % 10, style="digits" if i % 3 == 0 else "mnist")


def _config(tmp_path: Path, case: str, *, drawings: bool = True) -> TrainConfig:
    values: dict[str, Any] = {"device": "cpu", **CASES[case]}
    if values["dataset"] == "cifar10":
        _write_batches(tmp_path / "cifar")
        values |= {"data_dir": str(tmp_path / "cifar"), "download": False}
    if values["dataset"] == "my-digits":
        if drawings:  # what the run reads (writing the script reads none)
            _drawings()
        if values.get("base_dataset", "mnist") == "mnist":
            write_mnist_raw(tmp_path / "mnist", "mnist", n_train=100, n_test=20)
            values |= {"data_dir": str(tmp_path / "mnist"), "download": False}
    return TrainConfig(**values)


def _run_script(cfg: TrainConfig, folder: Path) -> tuple[dict[str, Any], str]:
    text = write_script(cfg, source="run.json")
    (folder / "run.py").write_text(text, encoding="utf-8")
    args = [sys.executable, "-I", str(folder / "run.py")]
    args += ["--metrics-json", str(folder / "script.json")]
    args += ["--out", str(folder / "weights.pt")]
    env = {**os.environ, **SIDE_BY_SIDE}
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=folder)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((folder / "script.json").read_text()), text


def _train(cfg: TrainConfig, folder: Path) -> dict[str, Any]:
    save_config(cfg, folder / "run.json")
    out = folder / "train.json"
    code = cli.main(
        ["train", "--config", str(folder / "run.json"), "--metrics-json", str(out)]
    )
    assert code == 0
    return json.loads(out.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_the_script_repeats_train_bit_for_bit(case: str, tmp_path: Path) -> None:
    cfg = _config(tmp_path, case)
    assert script_problem(cfg) is None
    trained = _train(cfg, tmp_path)
    scripted, text = _run_script(cfg, tmp_path)
    assert len(trained["steps"]) >= 5
    assert scripted["steps"] == trained["steps"]  # equal floats, not close ones
    assert scripted["final"]["val_accuracy"] == trained["final"]["val_accuracy"]
    for ours, theirs in zip(scripted["epochs"], trained["epochs"], strict=True):
        for key in ("epoch", "global_step", "train_loss", "val_loss", "confusion"):
            assert ours[key] == theirs[key], key
    assert scripted["config"] == trained["config"]
    assert "Not repeated exactly" not in text.split('"""')[1]


def _imported(text: str) -> set[str]:
    tree = ast.parse(text)
    names = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    return names | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }


@pytest.mark.parametrize("case", list(CASES))
def test_the_script_is_tidy_plain_code_that_unpickles_nothing(
    case: str, tmp_path: Path
) -> None:
    text = write_script(_config(tmp_path, case, drawings=False))
    imported = _imported(text)
    assert "workbench" not in imported
    assert "pickle" not in imported
    # torchvision's CIFAR10 class reads the pickled python version: not used.
    assert "CIFAR10(" not in text
    assert "torch.load" not in text
    script = tmp_path / "run.py"
    script.write_text(text, encoding="utf-8")
    assert_ruff_accepts(script)


def test_the_drawings_folder_is_the_workbench_s_and_can_be_given(
    tmp_path: Path, my_digits_dir: Path
) -> None:
    text = write_script(TrainConfig(dataset="my-digits", device="cpu"))
    assert assignment("MY_DIGITS_DIR", str(my_digits_dir)) in text
    assert '"--my-digits-dir", default=MY_DIGITS_DIR' in text
    assert "load_data(\n        args.data_dir, args.my_digits_dir\n    )" in text


def test_a_torchvision_model_reads_cifar_at_its_size() -> None:
    cfg = TrainConfig(dataset="cifar10", model="resnet18", image_size=40, device="cpu")
    text = write_script(cfg)
    assert "IMAGE_SIZE = 40" in text
    assert "INPUT_SHAPE = (3, 40, 40)" in text
    assert np.isclose(float(text.split("MEAN = (")[1].split(",")[0]), 0.4914, 1e-3)
