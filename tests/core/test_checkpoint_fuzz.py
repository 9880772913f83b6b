"""Damaged checkpoints give a clear message or load, through every entry point.

Issue 17: none crashes, hangs, traces back or runs code. The variants come
from ``tests/fuzz_checkpoints.py`` (seeded); the window's Open is
``Session.open``, the command line's ``--resume`` the same plus a step.
"""

from __future__ import annotations

import argparse
import os
import subprocess
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.fuzz_checkpoints import variants
from tests.warm_python import SIDE_BY_SIDE, WarmPythons
from workbench.cli.commands import main
from workbench.cli.train import _load_initial_weights
from workbench.core.checkpoints.io import config_of, load_weights_file, save_checkpoint
from workbench.core.config import TrainConfig
from workbench.core.data.cache import ArraysCache
from workbench.core.errors import USER_ERRORS
from workbench.core.session import Session
from workbench.core.train.engine import fit, prepare_run

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    cfg = TrainConfig(model="mlp", epochs=1, max_steps=3, batch_size=64, log_every=1)
    run = prepare_run(cfg)
    fit(run)
    return save_checkpoint(tmp_path_factory.mktemp("fuzz") / "good.pt", run)


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    path = tmp_path_factory.mktemp("img") / "blank.png"
    pixels = np.zeros((28, 28), np.uint8)
    pixels[6:22, 12:16] = 255  # a stroke: predict runs the model
    Image.fromarray(pixels).save(path)
    return path


def _open(path: Path, arrays: ArraysCache) -> None:
    """The window's Open (RunController.open) and --resume: restore, then plan.

    The optimizer and scheduler are checked as they load, so no step is needed
    (the command-line test below trains one).
    """
    session = Session(origin="test", arrays=arrays)
    opened = session.open(path)  # evaluates, as the window does
    session.adopt(opened)
    run = opened.run
    session.plan(run.config.replace(max_steps=run.global_step + 1))


def _init_from(path: Path) -> None:
    """``train --init-from`` up to its first step: read, offer, accept."""
    state, payload = load_weights_file(path)
    model = config_of(payload).model if payload is not None else "mlp"
    args = argparse.Namespace(init_from=path, init_partial=True, model=None)
    cfg = TrainConfig(model=model)
    _load_initial_weights(Session(origin="test"), cfg, args, state, payload)


def _escape(call) -> str | None:
    """None when ``call`` succeeds or raises a user error with words."""
    try:
        code = call()
    except USER_ERRORS as exc:
        return None if str(exc).strip() else f"empty {type(exc).__name__}"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    if code not in (None, 0, 1, 2):
        return f"exit code {code}"
    return None


def test_every_damaged_checkpoint_loads_or_says_why(original, image, tmp_path, capsys):
    arrays = ArraysCache()
    entry_points = {
        "open": lambda p: _open(p, arrays),
        "init-from": _init_from,
        "inspect": lambda p: main(["inspect", str(p), "--against-model", "mlp"]),
        "predict": lambda p: main(["predict", "--checkpoint", str(p), str(image)]),
    }
    kinds: Counter[str] = Counter()
    escapes = []
    for variant in variants(original):
        kinds[variant.kind] += 1
        path = tmp_path / "damaged.pt"
        variant.write(path)
        for entry, call in entry_points.items():
            problem = _escape(lambda call=call, path=path: call(path))
            if problem:
                escapes.append(f"{variant.name} via {entry}: {problem}")
        capsys.readouterr()
    assert sum(kinds.values()) >= 200, kinds
    assert set(kinds) == {
        "bytes flipped",
        "truncated",
        "zip entry removed",
        "wrong shape",
        "wrong dtype",
        "key missing",
        "wrong type",
    }
    assert not escapes, f"{len(escapes)} escapes:\n" + "\n".join(escapes)


# A few variants through the real command line: one line on stderr, exit 2.
_CLI_CASES = (
    ("global_step=", ["train", "--resume", "{p}", "--max-steps", "9"]),
    ("shape:optimizer.", ["train", "--resume", "{p}", "--max-steps", "9"]),
    ("truncate@", ["inspect", "{p}"]),
    ("config=", ["predict", "--checkpoint", "{p}", "{img}"]),
    ("no-member:", ["train", "--init-from", "{p}", "--max-steps", "1"]),
    ("model_state.hidden.1.weight=", ["train", "--init-from", "{p}"]),
    ("good", ["train", "--resume", "{p}", "--max-steps", "2"]),
)


def _run_cli(
    warm_python: WarmPythons, argv: list[str]
) -> subprocess.CompletedProcess[str]:
    """``python -m workbench ARGV`` in a new process (forked with torch imported)."""
    # Two at a time below: OpenMP helpers sleep between ops (SIDE_BY_SIDE).
    env = {**os.environ, **SIDE_BY_SIDE, "PYTHONPATH": str(ROOT)}
    command = ["-m", "workbench", *argv, "--quiet"]
    if argv[0] != "train":
        command.remove("--quiet")
    # A hang fails the test through the timeout.
    return warm_python.run(command, timeout=120, env=env)


def test_damaged_checkpoints_on_the_command_line_are_one_line(
    original, image, tmp_path, warm_python
):
    cases = []
    for prefix, argv in _CLI_CASES:
        path = tmp_path / f"{len(cases)}.pt"
        if prefix == "good":
            path.write_bytes(original.read_bytes())
        else:
            chosen = next(v for v in variants(original) if v.name.startswith(prefix))
            chosen.write(path)
        cases.append([a.format(p=path, img=image) for a in argv])
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda argv: _run_cli(warm_python, argv), cases))
    for argv, proc in zip(cases, results, strict=True):
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2, (argv, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert len(lines) == 1, (argv, proc.stderr)
        assert lines[0].startswith(f"ptcore-workbench {argv[0]}: error: "), lines
    assert "nothing left to train: the run is at step 3" in results[-1].stderr


def test_a_good_checkpoint_resumes_on_the_command_line(original, tmp_path, warm_python):
    path = tmp_path / "good.pt"
    path.write_bytes(original.read_bytes())
    proc = _run_cli(warm_python, ["train", "--resume", str(path), "--max-steps", "4"])
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "done: step 4/4" in proc.stdout
