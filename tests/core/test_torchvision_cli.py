"""A torchvision model end to end: the command line, checkpoints, exact resume.

resnet18 trains a few steps on the offline digits (gray, repeated to three
channels); nothing reaches the network (``$TORCH_HOME`` is a fresh folder and
the weights mirror a closed port).
"""

from __future__ import annotations

import os
import socket

import pytest
import torch
import torchvision
from PIL import Image

from tests.conftest import make_arrays
from tests.core.test_exact_resume import _scramble_rngs, step_losses, train_until
from workbench.cli.commands import main
from workbench.core.checkpoints.io import load_checkpoint, restore_run, save_checkpoint
from workbench.core.config import TrainConfig
from workbench.core.data.sources import load_arrays
from workbench.core.models.pretrained import MIRROR_ENV, cache_dir
from workbench.core.train.engine import fit, prepare_run

COMMON = ["--model", "resnet18", "--seed", "1", "--batch-size", "16", "--quiet"]


@pytest.fixture(autouse=True)
def offline(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch-home"))
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv(MIRROR_ENV, f"http://127.0.0.1:{port}")


@pytest.fixture(scope="module")
def resnet_checkpoint(tmp_path_factory):
    """A resnet18 trained 3 steps on digits from the command line."""
    ckpt = tmp_path_factory.mktemp("resnet") / "ck.pt"
    assert main(["train", *COMMON, "--max-steps", "3", "--save", str(ckpt)]) == 0
    return ckpt


@pytest.mark.slow
def test_train_saves_a_resnet18_checkpoint_of_three_channel_digits(resnet_checkpoint):
    payload = load_checkpoint(resnet_checkpoint)
    assert payload["global_step"] == 3
    assert payload["config"]["model"] == "resnet18"
    assert payload["config"]["weights"] == "none"
    assert tuple(payload["dataset_info"]["image_shape"]) == (3, 28, 28)
    state = payload["model_state"]
    assert tuple(state["conv1.weight"].shape) == (64, 3, 7, 7)
    assert tuple(state["fc.weight"].shape) == (10, 512)


@pytest.mark.slow
def test_predict_and_inspect_read_the_resnet18_checkpoint(
    resnet_checkpoint, tmp_path, capsys
):
    arrays = load_arrays("digits")
    paths = []
    for index in range(3):
        path = tmp_path / f"d{index}.png"
        Image.fromarray(255 - arrays.test_images[index].numpy()).save(path)
        paths.append(str(path))
    capsys.readouterr()
    assert main(["predict", "--checkpoint", str(resnet_checkpoint), *paths]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3
    assert all(line.count("%") == 3 for line in lines)

    assert main(["inspect", str(resnet_checkpoint)]) == 0
    out = capsys.readouterr().out
    assert "model=resnet18" in out
    assert "global step 3" in out
    assert "fc.weight" in out
    assert "10x512" in out


@pytest.mark.slow
def test_resume_continues_a_resnet18_run(resnet_checkpoint, tmp_path, capsys):
    out_ckpt = tmp_path / "resumed.pt"
    args = ["train", "--quiet", "--resume", str(resnet_checkpoint), "--max-steps", "5"]
    assert main([*args, "--save", str(out_ckpt)]) == 0
    out = capsys.readouterr().out
    assert "resuming" in out
    assert "at step 3" in out
    payload = load_checkpoint(out_ckpt)
    assert payload["global_step"] == 5
    assert payload["config"]["model"] == "resnet18"


@pytest.mark.slow
def test_init_from_a_resnet18_checkpoint(resnet_checkpoint, tmp_path, capsys):
    saved = tmp_path / "out.pt"
    args = ["train", *COMMON, "--init-from", str(resnet_checkpoint)]
    assert main([*args, "--max-steps", "1", "--save", str(saved)]) == 0
    assert (
        f"starting from the weights in {resnet_checkpoint}" in capsys.readouterr().out
    )
    assert load_checkpoint(saved)["global_step"] == 1


@pytest.mark.slow
def test_resnet18_resumes_exactly(tmp_path):
    """As test_exact_resume's dropout model: the losses of both halves are the
    uninterrupted run's, and so are the final weights."""
    tiny_arrays = make_arrays(64, 32)
    cfg = TrainConfig(model="resnet18", epochs=1, batch_size=16, log_every=1, seed=2)
    straight_run = prepare_run(cfg, arrays=tiny_arrays)
    straight = step_losses(fit(straight_run))
    assert len(straight) == 4

    first = prepare_run(cfg, arrays=tiny_arrays)
    before = train_until(first, 2)
    save_checkpoint(tmp_path / "half.pt", first)
    _scramble_rngs()
    resumed = restore_run(load_checkpoint(tmp_path / "half.pt"), arrays=tiny_arrays)
    after = step_losses(fit(resumed))
    assert before + after == straight
    expected = straight_run.model.state_dict()
    for name, tensor in resumed.model.state_dict().items():
        assert torch.equal(tensor, expected[name]), name


def test_summary_of_resnet18_takes_three_channels_by_default(capsys):
    assert main(["summary", "--model", "resnet18", "--image-size", "32"]) == 0
    out = capsys.readouterr().out
    assert "input: 3x32x32 per sample" in out
    assert "fc " in out


def test_models_lists_the_families(capsys):
    assert main(["models"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "Built-in: small-cnn, cnn, lazy-cnn, mlp"
    by_family = dict(line.split(": ", 1) for line in lines)
    assert "resnet18" in by_family["ResNet"].split(", ")
    assert "mobilenet_v3_small" in by_family["MobileNet"].split(", ")
    assert "vit_b_16" in by_family["Vision Transformer"].split(", ")
    assert lines[-1].startswith("Your own: --model path/to/file.py:Name")


def test_pretrained_weights_offline_are_one_line_naming_file_and_folder(capsys):
    args = ["train", *COMMON, "--weights", "IMAGENET1K_V1", "--max-steps", "1"]
    assert main(args) == 2
    err = capsys.readouterr().err
    name = os.path.basename(torchvision.models.ResNet18_Weights.IMAGENET1K_V1.url)
    assert err.startswith("ptcore-workbench train: error: ")
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert f"Put {name} (from https://download.pytorch.org/models/{name})" in err
    assert f"in {cache_dir()} and try again" in err


@pytest.mark.slow
def test_the_start_line_says_whether_the_feature_cache_is_on(capsys):
    frozen = ["--freeze", "conv1.*", "bn1.*", "layer*"]  # all but fc
    assert main(["train", *COMMON, "--max-steps", "2", *frozen]) == 0
    start = capsys.readouterr().out.splitlines()
    (line,) = [s for s in start if s.startswith("training resnet18")]
    assert "feature cache: on (1,437 features of size 512" in line
    assert main(["train", *COMMON, "--max-steps", "2", "--feature-cache", "off"]) == 0
    start = capsys.readouterr().out.splitlines()
    (line,) = [s for s in start if s.startswith("training resnet18")]
    assert line.endswith("feature cache: off: turned off")
