"""The written script is plain PyTorch that repeats ``train`` bit for bit on the CPU.

Each configuration trains twice: the workbench's ``train`` command, and the
script ``write_script`` made for the same config, run by ``python -I`` in a new
process (``-I`` ignores PYTHONPATH: the script cannot import workbench). The
scripts run in the background from the session's start (``tests/prefetch.py``);
each test trains in pytest's process and compares.
Per-step losses must be equal (not close) for the whole run, or 200 steps, and
so must the final validation accuracy.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
import torchvision

from tests import prefetch
from tests.idx_files import write_mnist_raw
from tests.script_ruff import assert_ruff_accepts
from tests.warm_python import SIDE_BY_SIDE
from workbench import cli
from workbench.core.config import TrainConfig, save_config
from workbench.core.script.writer import ScriptError, script_problem, write_script

_CPU = {"device": "cpu"}

# Every built-in model; Adam, AdamW and SGD; one-cycle and constant; a frozen
# block; the fast path and the DataLoader path; bf16; digits and MNIST (and
# Fashion-MNIST) from a torchvision root; a torchvision architecture, fresh and
# pretrained with its backbone frozen (the feature cache trains its head).
CONFIGS: dict[str, dict[str, Any]] = {
    "small-cnn-adam-onecycle-fast": {"dataset": "digits", "epochs": 3},
    "cnn-dropout-sgd-constant": {
        "dataset": "digits",
        "model": "cnn",
        "optimizer": "sgd",
        "lr": 0.05,
        "schedule": "constant",
        "batch_size": 64,
        "max_steps": 24,
    },
    "lazy-cnn-adamw-dataloader": {
        "dataset": "digits",
        "model": "lazy-cnn",
        "optimizer": "adamw",
        "loader": "dataloader",
        "batch_size": 128,
        "epochs": 2,
    },
    "mlp-sgd-onecycle-dataloader": {
        "dataset": "digits",
        "model": "mlp",
        "optimizer": "sgd",
        "lr": 0.1,
        "loader": "dataloader",
        "batch_size": 32,
        "max_steps": 200,
    },
    "small-cnn-frozen-block": {
        "dataset": "digits",
        "frozen": ["block1", "block2.*"],
        "epochs": 3,
    },
    # Two epochs (12 steps): bf16 steps are slow on CPUs without bf16 instructions.
    "small-cnn-bf16": {"dataset": "digits", "precision": "bf16", "epochs": 2},
    "mnist-root-fast": {"dataset": "mnist", "batch_size": 64, "epochs": 3},
    "mnist-root-dataloader-cnn": {
        "dataset": "mnist",
        "model": "cnn",
        "loader": "dataloader",
        "batch_size": 64,
        "epochs": 2,
    },
    "fashion-root-mlp-max-steps": {
        "dataset": "fashion-mnist",
        "model": "mlp",
        "batch_size": 32,
        "max_steps": 30,
    },
    "resnet18-pretrained-frozen-backbone": {
        "dataset": "digits",
        "model": "resnet18",
        "weights": "IMAGENET1K_V1",
        "frozen": ["conv1", "bn1", "layer1", "layer2", "layer3", "layer4"],
        "batch_size": 64,
        "max_steps": 12,
    },
    "torchvision-resnet18": {
        "dataset": "digits",
        "model": "resnet18",
        "batch_size": 64,
        "max_steps": 8,
    },
    # Class weights: balanced from the training labels (the arrays' and
    # torchvision's targets), and a file's values.
    "small-cnn-balanced-class-weights": {
        "dataset": "digits",
        "class_weights": "balanced",
        "epochs": 2,
    },
    "mnist-root-dataloader-balanced-mlp": {
        "dataset": "mnist",
        "model": "mlp",
        "loader": "dataloader",
        "class_weights": "balanced",
        "batch_size": 64,
        "max_steps": 20,
    },
    "mlp-class-weights-from-a-file": {
        "dataset": "digits",
        "model": "mlp",
        "class_weights": [1.0, 2.0, 0.5, 8.0, 1.0, 1.0, 3.0, 1.0, 0.25, 1.0],
        "batch_size": 64,
        "max_steps": 20,
    },
}


def _published_weights(torch_home: Path) -> None:
    """resnet18's ImageNet weights file as torchvision names it, made here.

    Both the workbench and the script find it in the hub cache: no network.
    """
    weights = torchvision.models.ResNet18_Weights.IMAGENET1K_V1
    folder = torch_home / "hub" / "checkpoints"
    folder.mkdir(parents=True, exist_ok=True)
    with torch.random.fork_rng():  # the session's random state stays as it was
        torch.manual_seed(1)
        model = torchvision.models.get_model("resnet18", weights=None)
    torch.save(model.state_dict(), folder / Path(weights.url).name)


# 1,437 digits = 3 batches of 479: one batch size, so one compile each side.
COMPILED = {"dataset": "digits", "model": "mlp", "compile": True}
COMPILED |= {"batch_size": 479, "epochs": 2}


def _script_command(folder: Path, overrides: dict[str, Any]) -> prefetch.Command:
    """Write the config, its data and its script into ``folder``; run the script."""
    values = {**_CPU, **overrides}
    env = {**os.environ, "TORCH_HOME": str(folder / "torch-home")}
    if values.get("weights", "none") != "none":
        _published_weights(folder / "torch-home")
    if values["dataset"] != "digits":
        root = folder / "data"
        write_mnist_raw(root, values["dataset"], n_train=640, n_test=200)
        values["data_dir"] = str(root)
        values["download"] = False
    cfg = TrainConfig(**values)
    save_config(cfg, folder / "run.json")
    text = write_script(cfg, source=str(folder / "run.json"))
    (folder / "run.py").write_text(text, encoding="utf-8")
    # -I: a new interpreter that ignores PYTHONPATH, so no workbench import.
    args = [sys.executable, "-I", str(folder / "run.py")]
    args += ["--metrics-json", str(folder / "script.json")]
    args += ["--out", str(folder / "weights.pt")]
    # Its OpenMP helpers sleep between ops: scripts side by side (same results).
    env |= SIDE_BY_SIDE
    return prefetch.Command(args, env, processes=2, cwd=folder)


@prefetch.plan("scripted", per="name")
def scripts_plan(tmp: Path, name: str):
    """The configuration's script, run in its own folder."""
    done = yield {name: _script_command(tmp, {**CONFIGS, "compiled": COMPILED}[name])}
    return tmp, done[name]


@pytest.fixture
def scripted(prefetched, name: str) -> tuple[Path, Any]:
    return prefetched.result(scripts_plan, name)


def _train_and_script(
    scripted: tuple[Path, Any], tmp_path: Path, monkeypatch
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(train's metrics, the script's metrics, the script's text)."""
    folder, done = scripted
    assert done.returncode == 0, done.stderr[-3000:]
    # The same pretrained weights file the script found.
    monkeypatch.setenv("TORCH_HOME", str(folder / "torch-home"))
    train_json = tmp_path / "train.json"
    config = str(folder / "run.json")
    code = cli.main(["train", "--config", config, "--metrics-json", str(train_json)])
    assert code == 0
    return (
        json.loads(train_json.read_text()),
        json.loads((folder / "script.json").read_text()),
        (folder / "run.py").read_text(encoding="utf-8"),
    )


@pytest.fixture(autouse=True)
def _own_torch_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretrained weights come from a fresh hub cache, never the user's."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch-home"))
    # torch.hub.get_dir() prefers a directory set_dir() stored over $TORCH_HOME.
    monkeypatch.setattr(torch.hub, "_hub_dir", None)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_script_repeats_train_bit_for_bit(
    scripted: tuple[Path, Any], tmp_path: Path, monkeypatch
) -> None:
    trained, scripted, _ = _train_and_script(scripted, tmp_path, monkeypatch)
    steps = trained["steps"][:200]
    assert len(steps) >= 8
    assert scripted["steps"][: len(steps)] == steps  # equal floats, not close ones
    assert len(scripted["steps"]) == len(trained["steps"])
    assert scripted["final"]["val_accuracy"] == trained["final"]["val_accuracy"]
    assert scripted["final"]["global_step"] == trained["final"]["global_step"]
    for ours, theirs in zip(scripted["epochs"], trained["epochs"], strict=True):
        for key in ("epoch", "global_step", "train_loss", "val_loss", "confusion"):
            assert ours[key] == theirs[key], key
    assert scripted["config"] == trained["config"]


# torch.compile's kernels are generated, not fixed: the header promises 1e-5.
COMPILE_TOLERANCE = 1e-5


@pytest.mark.slow
@pytest.mark.parametrize("name", ["compiled"])
def test_a_compiled_script_matches_train_within_the_stated_tolerance(
    scripted: tuple[Path, Any], tmp_path: Path, monkeypatch
) -> None:
    trained, scripted, text = _train_and_script(scripted, tmp_path, monkeypatch)
    assert "1e-5" in text.split('"""')[1]
    logged = {s["step"]: s["loss"] for s in scripted["steps"]}
    # The workbench leaves the steps that compiled out of its log.
    assert [s["step"] for s in trained["steps"]] == [2, 3, 4, 5, 6]
    for step in trained["steps"]:
        assert logged[step["step"]] == pytest.approx(
            step["loss"], rel=COMPILE_TOLERANCE, abs=0
        )
    assert scripted["final"]["val_accuracy"] == trained["final"]["val_accuracy"]


def test_the_script_is_plain_pytorch_without_workbench(tmp_path: Path) -> None:
    cfg = TrainConfig(dataset="digits", frozen=("block1",), **_CPU)
    text = write_script(cfg)
    tree = ast.parse(text)
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert "workbench" not in imported
    assert imported <= {
        "__future__",
        "argparse",
        "contextlib",
        "json",
        "math",
        "random",
        "time",
        "collections",
        "typing",
        "numpy",
        "torch",
        "torchvision",
        "sklearn",
        "PIL",
    }
    # The ideas the workbench shows are there in plain sight.
    for piece in (
        "optimizer.zero_grad(set_to_none=True)",
        "loss.backward()",
        "optimizer.step()",
        "model.eval()",
        "torch.inference_mode()",
        "param.requires_grad_(name not in FROZEN)",
        "torch.save(model.state_dict(), args.out)",
        'FROZEN = ["block1.0.weight", "block1.2.weight", "block1.2.bias"]',
    ):
        assert piece in text, piece


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        # A script reads an image folder into memory, as the fast loader does.
        ({"dataset": "folder", "data_dir": "photos", "loader": "dataloader"}, "loader"),
        # A script trains every epoch: it would not be the run that stopped early.
        ({"early_stop": 3}, "early stopping"),
        # A script draws each epoch as a permutation, not the sampler's draw.
        ({"balanced_sampler": True}, "the balanced sampler"),
        # A script trains on the whole training split, not on K-1 folds of it.
        ({"folds": 5, "fold": 2}, "fold 3 of 5"),
        (
            {"dataset": "folder", "data_dir": "photos", "balanced_sampler": True},
            "the balanced sampler",
        ),
    ],
)
def test_a_config_the_writer_does_not_know_is_one_clear_message(
    overrides: dict[str, Any], words: str
) -> None:
    cfg = TrainConfig(**{**_CPU, **overrides})
    problem = script_problem(cfg)
    assert problem is not None
    assert words in problem
    with pytest.raises(ScriptError, match="cannot write a script"):
        write_script(cfg)


def test_compile_is_named_in_the_header_as_not_exact() -> None:
    text = write_script(TrainConfig(dataset="digits", compile=True, **_CPU))
    header = text.split('"""')[1]
    assert "torch.compile" in header
    assert "Not repeated exactly" in header
    assert "model.compile(mode=COMPILE_MODE)" in text
    plain = write_script(TrainConfig(dataset="digits", **_CPU))
    assert "Not repeated exactly" not in plain.split('"""')[1]


@pytest.mark.slow
@pytest.mark.parametrize(
    "overrides",
    [
        {"dataset": "digits", "frozen": ("block1",)},
        {"dataset": "mnist", "loader": "dataloader", "model": "resnet18"},
        {"dataset": "digits", "model": "inception_v3", "precision": "bf16"},
        {"dataset": "kmnist", "model": "lazy-cnn", "compile": True, "device": "auto"},
        {"dataset": "digits", "model": "inception_v3", "weights": "default"},
        {"dataset": "digits", "model": "squeezenet1_0", "weights": "default"},
        {
            "dataset": "mnist",
            "model": "mobilenet_v3_small",
            "weights": "default",
            "frozen": ("features",),
        },
    ],
)
def test_the_script_is_tidy_code_ruff_accepts(
    overrides: dict[str, Any], tmp_path: Path
) -> None:
    script = tmp_path / "run.py"
    script.write_text(write_script(TrainConfig(**overrides)), encoding="utf-8")
    assert_ruff_accepts(script)
