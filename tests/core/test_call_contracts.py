"""Promises that are "this call happens", pinned by a spy or a scan in the test.

A checkpoint, a weights file or a decoded-image cache is read with
``torch.load(weights_only=True)``, so a file that would run code is refused; a
resumed run gets back exactly the random states its checkpoint stored. (The
order fsync, rename, fsync of a save is pinned by a spy in test_checkpoints.py.)
These replace breakages of ``bench/mutations.py`` that flipped one argument.
"""

from __future__ import annotations

import ast
import random
from pathlib import Path

import numpy as np
import torch

import workbench
from workbench.core.checkpoints import io as checkpoints
from workbench.core.config import TrainConfig
from workbench.core.models.builtins import build_model
from workbench.core.train.engine import fit, prepare_run

PACKAGE = Path(workbench.__file__).parent


def _torch_load_calls(tree: ast.AST) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "load"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "torch"
    ]


def _weights_only(call: ast.Call) -> object:
    for keyword in call.keywords:
        if keyword.arg == "weights_only" and isinstance(keyword.value, ast.Constant):
            return keyword.value.value
    return None


def test_every_torch_load_of_the_product_passes_weights_only_true():
    calls = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for call in _torch_load_calls(tree):
            calls[f"{path.relative_to(PACKAGE)}:{call.lineno}"] = _weights_only(call)
    # The checkpoint reader, the pretrained-weights reader, the folder cache.
    assert len(calls) >= 3, calls
    unsafe = {where: value for where, value in calls.items() if value is not True}
    assert not unsafe, f"torch.load without weights_only=True: {unsafe}"


def _spy_on_torch_load(monkeypatch) -> list[object]:
    seen: list[object] = []
    real = torch.load

    def spy(*args, **kwargs):
        seen.append(kwargs.get("weights_only"))
        return real(*args, **kwargs)

    monkeypatch.setattr(torch, "load", spy)
    return seen


def test_opening_a_checkpoint_calls_torch_load_with_weights_only(
    tmp_path, tiny_arrays, monkeypatch
):
    cfg = TrainConfig(model="mlp", epochs=1, max_steps=1)
    run = prepare_run(cfg, arrays=tiny_arrays)
    path = checkpoints.save_checkpoint(tmp_path / "run.pt", run)
    seen = _spy_on_torch_load(monkeypatch)
    checkpoints.load_checkpoint(path)
    assert seen == [True]


def test_reading_a_weights_file_calls_torch_load_with_weights_only(
    tmp_path, monkeypatch
):
    model = build_model("mlp")
    path = tmp_path / "weights.pt"
    torch.save(model.state_dict(), path)
    seen = _spy_on_torch_load(monkeypatch)
    state, payload = checkpoints.load_weights_file(path)
    assert seen == [True]
    assert payload is None
    assert state.keys() == model.state_dict().keys()


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def test_restoring_a_run_sets_every_random_state_its_checkpoint_stored(
    tmp_path, tiny_arrays
):
    cfg = TrainConfig(model="mlp", epochs=1, max_steps=3, batch_size=32)
    run = prepare_run(cfg, arrays=tiny_arrays)
    fit(run)
    # States that neither the run's seed nor a fresh start would give.
    _seed_everything(777)
    stored = checkpoints.load_checkpoint(
        checkpoints.save_checkpoint(tmp_path / "run.pt", run)
    )
    _seed_everything(12345)
    checkpoints.restore_run(stored, arrays=tiny_arrays)
    now = checkpoints.rng_states()
    assert torch.equal(now["torch"], stored["rng"]["torch"])
    assert now["numpy"]["keys"].equal(stored["rng"]["numpy"]["keys"])
    assert now["numpy"]["pos"] == stored["rng"]["numpy"]["pos"]
    version, internal, gauss = stored["rng"]["python"]
    assert random.getstate() == (version, tuple(internal), gauss)
