"""The written script reads an image folder exactly as the workbench does.

Each case writes a tiny folder of images, trains it with the workbench's
``train`` command, and runs the script ``write_script`` made for the same
config in a fresh ``python -I`` (no PYTHONPATH: the script cannot import
workbench). The per-step losses must be equal, not close: the same files,
classes, split, decoding, resizing, channels, statistics and batch order.
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
import torch
import torchvision

from tests.image_folders import make_folder, shape_image
from tests.model_files import NET
from tests.script_ruff import assert_ruff_accepts
from tests.warm_python import SIDE_BY_SIDE
from workbench import cli
from workbench.core.config import TrainConfig, save_config
from workbench.core.script.parts import assignment
from workbench.core.script.writer import ScriptError, script_problem, write_script

_BACKBONE = ["conv1", "bn1", "layer1", "layer2", "layer3", "layer4"]

# folder kind -> configs trained on it. A few images a class, a few steps each.
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    # Gray images, no split: the seeded stratified split, the images' own
    # one-channel statistics, upper-case suffixes, a skipped file, a crop.
    "gray-auto-split-small-cnn": (
        "gray",
        {"image_size": 16, "batch_size": 8, "epochs": 2, "val_fraction": 0.25},
    ),
    # The main real case: photos in train/ and val/, pretrained resnet18 with
    # its backbone frozen (the weights' statistics, the new head's seeded init).
    "colour-split-resnet18-pretrained": (
        "colour",
        {
            "model": "resnet18",
            "weights": "IMAGENET1K_V1",
            "frozen": _BACKBONE,
            "image_size": 32,
            "batch_size": 8,
            "epochs": 2,
        },
    ),
    # Gray images repeated to three channels for a fresh torchvision model,
    # every augmentation drawn with the folder's own statistics.
    "gray-resnet18-fresh": (
        "gray",
        {
            "model": "resnet18",
            "image_size": 24,
            "batch_size": 8,
            "max_steps": 3,
            "augment": ("crop", "flip", "rotate", "jitter"),
        },
    ),
    # The user's own model file (lazy layers), imported by path.
    "gray-model-file": (
        "gray",
        {"model": "{net}:Net", "image_size": 16, "batch_size": 8, "max_steps": 3},
    ),
}


def _gray_folder(root: Path) -> Path:
    """3 classes of gray images, some with upper-case suffixes, plus a wide
    image (centre-cropped), a broken file (skipped) and a note (ignored)."""
    make_folder(root, ["cat", "ant", "bee"], per_class=7, size=20, mode="L")
    for path in sorted(root.glob("ant/00[0-3].*")):
        path.rename(path.with_suffix(path.suffix.upper()))
    rng = np.random.default_rng(5)
    shape_image(2, rng, 30, "L").resize((30, 18)).save(root / "bee" / "wide.PNG")
    (root / "cat" / "broken.png").write_bytes(b"not an image at all")
    (root / "cat" / "notes.txt").write_text("not an image", encoding="utf-8")
    return root


def _colour_folder(root: Path) -> Path:
    make_folder(root, ["dogs", "cats"], per_class=10, size=40, split=True)
    return root


def _published_weights(torch_home: Path) -> None:
    """resnet18's ImageNet weights file as torchvision names it, made here."""
    weights = torchvision.models.ResNet18_Weights.IMAGENET1K_V1
    folder = torch_home / "hub" / "checkpoints"
    folder.mkdir(parents=True, exist_ok=True)
    with torch.random.fork_rng():
        torch.manual_seed(1)
        model = torchvision.models.get_model("resnet18", weights=None)
    torch.save(model.state_dict(), folder / Path(weights.url).name)


def _config(tmp_path: Path, case: str) -> TrainConfig:
    kind, overrides = CASES[case]
    make = _gray_folder if kind == "gray" else _colour_folder
    root = make(tmp_path / "images")
    if overrides.get("model") == "{net}:Net":
        (tmp_path / "net.py").write_text(NET, encoding="utf-8")
        overrides = {**overrides, "model": f"{tmp_path / 'net.py'}:Net"}
    return TrainConfig(dataset="folder", data_dir=str(root), device="cpu", **overrides)


def _run_script(cfg: TrainConfig, folder: Path) -> tuple[dict[str, Any], str, str]:
    text = write_script(cfg, source="run.json")
    (folder / "run.py").write_text(text, encoding="utf-8")
    args = [sys.executable, "-I", str(folder / "run.py")]
    args += ["--metrics-json", str(folder / "script.json")]
    args += ["--out", str(folder / "weights.pt")]
    env = {**os.environ, **SIDE_BY_SIDE}
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=folder)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((folder / "script.json").read_text()), done.stdout, text


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
def test_the_folder_script_repeats_train_bit_for_bit(
    case: str, tmp_path: Path, data_dir, offline_weights
) -> None:
    cfg = _config(tmp_path, case)
    if cfg.weights != "none":
        _published_weights(tmp_path / "torch-home")  # found by both, offline
    trained = _train(cfg, tmp_path)
    scripted, printed, text = _run_script(cfg, tmp_path)
    assert len(trained["steps"]) >= 3
    assert scripted["steps"] == trained["steps"]  # equal floats, not close ones
    assert scripted["final"]["val_accuracy"] == trained["final"]["val_accuracy"]
    for ours, theirs in zip(scripted["epochs"], trained["epochs"], strict=True):
        for key in ("epoch", "global_step", "train_loss", "val_loss", "confusion"):
            assert ours[key] == theirs[key], key
    assert scripted["config"] == trained["config"]
    if CASES[case][0] == "gray":
        # The broken file is named and skipped; the sorted classes are printed.
        assert "broken.png" in printed
        assert "3 classes (ant, bee, cat), 1 channel(s)" in printed
    if case == "gray-model-file":  # imported by path, and said so at the top
        assert assignment("MODEL_FILE", str(tmp_path / "net.py")) in text
        assert "running it is your choice" in text.split('"""')[1]


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


def test_a_folder_script_imports_nothing_of_the_workbench(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "colour-split-resnet18-pretrained")
    text = write_script(cfg)
    imported = _imported(text)
    assert "workbench" not in imported
    assert imported <= {
        *("__future__", "argparse", "contextlib", "io", "json", "math", "pathlib"),
        *("random", "time", "collections", "typing", "numpy", "torch"),
        *("torchvision", "PIL"),
    }
    assert assignment("DATA_DIR", cfg.data_dir) in text
    # What the script cannot promise for a folder past the memory budget.
    assert "memory budget" in text.split('"""')[1]


def test_a_folder_on_the_dataloader_path_is_one_clear_refusal(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "gray-auto-split-small-cnn").replace(loader="dataloader")
    problem = script_problem(cfg)
    assert problem is not None
    assert "loader dataloader" in problem
    with pytest.raises(ScriptError, match="cannot write a script"):
        write_script(cfg)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_the_folder_script_is_tidy_code_ruff_accepts(case: str, tmp_path: Path) -> None:
    script = tmp_path / "run.py"
    script.write_text(write_script(_config(tmp_path, case)), encoding="utf-8")
    assert_ruff_accepts(script)
