"""Every model of the catalog goes through save, resume, predict and export.

Each model trains one step on a tiny image folder (the built-ins: on the
bundled digits they are made for) at the smallest images it takes; its run
folder saves it; a resumed run trains one more step and saves again; the Draw
tab's reader, ``predict`` and ``export`` (TorchScript, verified) then read that
checkpoint. A model whose weights do not survive the trip (MNASNet's module
versions dropped on the way: issue 34, item 34) fails here by name.

Slow: 84 models. The checkpoints go to memory (``/dev/shm``) when they take a
small share of it, each test deletes its files when it ends, and each run
writes its checkpoint once (the run folder's, at the end: the epochs of three
batches never end on the steps taken).
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import torchvision
from torch import nn
from torchvision.models.vision_transformer import VisionTransformer

from tests.image_folders import make_folder
from workbench.cli.commands import main
from workbench.core.checkpoints.io import (
    config_of,
    info_of,
    load_checkpoint,
    load_model_state,
)
from workbench.core.config import IMAGE_SIZE_RANGE
from workbench.core.export.formats import EXPORTERS
from workbench.core.export.verify import load_runner
from workbench.core.models.builtins import build_model, build_unseeded
from workbench.core.models.catalog import BUILTIN_MODELS, torchvision_models
from workbench.core.models.preview import estimate_parameters
from workbench.core.predict import Predictor
from workbench.core.runs.folder import CHECKPOINT_FILE
from workbench.core.train.probes import weight_histograms

# The whole catalog holds 5.4 billion parameters: its round trip takes most of
# an hour on two cores, too long for every run of the suite. These models, one
# of most families (MNASNet, whose checkpoints once failed to open, among them;
# about 2 minutes in all), run in every suite; the rest are marked `catalog`:
# `pytest -m catalog` takes them through the same trip.
EVERY_RUN = {
    *BUILTIN_MODELS,
    "resnet18",
    "mnasnet0_5",
    "regnet_x_400mf",
    "squeezenet1_1",
    "mobilenet_v3_small",
    "shufflenet_v2_x0_5",
    "efficientnet_b0",
    "googlenet",
    "densenet121",
    "convnext_tiny",
    "swin_t",
    "vit_b_32",
}
CATALOG = tuple(
    pytest.param(m, marks=() if m in EVERY_RUN else pytest.mark.catalog)
    for m in (*BUILTIN_MODELS, *torchvision_models())
)
CLASSES = ["ant", "bee", "cat"]
# 10 images a class, 2 held out: 24 to train on, epochs of three batches of 8,
# so neither run's last step ends an epoch and each saves once. Batches of 8:
# at these sizes the last maps are 1x1, and a BatchNorm normalising two values
# a channel (batch 2) gives gradients of 1e21 (EfficientNet, RegNet, MNASNet):
# the next loss is NaN, which training refuses. The small rate keeps every step
# sane; SGD keeps one buffer per weight (Adam two): smaller checkpoints.
PER_CLASS = 10
TRAIN = [
    *("--batch-size", "8", "--lr", "1e-5", "--optimizer", "sgd"),
    *("--log-every", "1", "--workers", "0", "--seed", "0", "--quiet"),
    # The run folder saves at the end (and every second epoch: never here).
    *("--autosave-every", "2"),
]
# What the test keeps of a parameter at most at once: two checkpoints of the
# weight and SGD's buffer, the loaded payload and the export's copies.
BYTES_PER_PARAMETER = 40
SHARED_MEMORY = Path("/dev/shm")


def smallest_side(model: str) -> int:
    """The smallest images ``model`` trains on here (the workbench's least is 8).

    Built without pretrained weights, a ViT takes any multiple of its patch
    (``vit_b_16``: 16) and Swin pads its windows; MaxViT needs 224, and the
    others what their weights' ``min_size`` says.
    """
    least = IMAGE_SIZE_RANGE[0]
    if model.startswith("vit_"):
        return max(least, int(model.rsplit("_", 1)[1]))
    if model.startswith("swin"):
        return least
    weights = next(iter(torchvision.models.get_model_weights(model)))
    return max(least, *weights.meta["min_size"])


def _available_memory() -> int:
    with open("/proc/meminfo", encoding="ascii") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def _scratch_root(model: str) -> str | None:
    """``/dev/shm`` when the model's files take under a tenth of free memory.

    In memory, writing and fsyncing a checkpoint costs no disk; the largest
    models (``vit_h_14``: 5 GB a checkpoint) stay on the disk.
    """
    if not (SHARED_MEMORY.is_dir() and os.access(SHARED_MEMORY, os.W_OK)):
        return None
    parameters = estimate_parameters((model, len(CLASSES), (3, 224, 224))) or 0
    fits = parameters * BYTES_PER_PARAMETER < _available_memory() / 10
    return str(SHARED_MEMORY) if fits else None


@pytest.fixture
def workdir(model, tmp_path, monkeypatch, offline_weights):
    """A folder for the test's files, removed when it ends (also on failure)."""
    folder = Path(tempfile.mkdtemp(prefix="catalog-", dir=_scratch_root(model)))
    monkeypatch.setenv("PTCORE_RUNS_DIR", str(folder / "runs"))
    monkeypatch.setenv("PTCORE_DATA_DIR", str(folder / "data"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def picture(tmp_path_factory) -> Path:
    """One picture for ``predict`` and the Draw tab's reader."""
    folder = make_folder(tmp_path_factory.mktemp("picture"), ["x"], per_class=1)
    return next((folder / "x").iterdir())


def _data_flags(model: str, workdir: Path) -> list[str]:
    if model in BUILTIN_MODELS:
        return ["--dataset", "digits"]
    side = smallest_side(model)
    folder = make_folder(workdir / "images", CLASSES, per_class=PER_CLASS, size=side)
    return ["--dataset", "folder", "--data-dir", str(folder), "--image-size", str(side)]


def _checkpoint(runs: Path) -> Path:
    """The run folders' one checkpoint (a resumed run rewrites its own)."""
    (path,) = runs.glob(f"*/{CHECKPOINT_FILE}")
    return path


@pytest.mark.slow
# Tracing warns where a model turns a tensor into a Python value (Swin's
# padding); torch hides these outside tests, and the export's verification
# (every validation image, batched and one by one, against the eager model) is
# the real check.
@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning")
@pytest.mark.parametrize("model", CATALOG)
def test_a_catalog_model_saves_resumes_predicts_and_exports(
    model, workdir, picture, capsys
):
    runs = workdir / "runs"
    flags = [*_data_flags(model, workdir), "--model", model, *TRAIN]
    assert main(["train", *flags, "--max-steps", "1"]) == 0
    first = _checkpoint(runs)
    resume = ["train", "--resume", str(first), "--max-steps", "2", "--quiet"]
    assert main(resume) == 0
    assert f"resuming {first} at step 1" in capsys.readouterr().out
    second = _checkpoint(runs)

    payload = load_checkpoint(second)
    assert payload["global_step"] == 2
    cfg, info = config_of(payload), info_of(payload)
    assert cfg.model == model
    # The Draw tab's reader (and Predict folder's): weights into its own model.
    reader = Predictor(cfg.model, cfg.dataset, info=info, weights=cfg.weights)
    reader.load_weights(payload["model_state"])
    assert 0 <= reader.read_file(picture).label < len(info.class_names)
    del payload, reader  # the largest weigh gigabytes

    assert main(["predict", "--checkpoint", str(second), str(picture)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{picture}: ")
    assert line.split(": ", 1)[1].split()[0] in info.class_names

    out = workdir / "export"
    export = ["export", str(second), "--format", "torchscript", "--out", str(out)]
    assert main(export) == 0
    assert f"exported {model} to {out}: 1/1 verified" in capsys.readouterr().out
    assert (out / "model.pt").is_file()


def test_a_regnets_reader_is_built_without_drawing_random_numbers():
    """RegNet computes its widths with tensors it reads back, which the meta
    device cannot: its reader (predict, export, the Draw tab) builds anyway."""
    trained = build_model("regnet_x_400mf", 3, seed=0, input_shape=(3, 8, 8)).eval()
    before = torch.random.get_rng_state()
    reader = build_unseeded("regnet_x_400mf", 3, (3, 8, 8)).eval()
    assert torch.equal(torch.random.get_rng_state(), before)
    load_model_state(reader, trained.state_dict())
    images = torch.rand(2, 3, 8, 8)
    with torch.no_grad():
        assert torch.equal(reader(images), trained(images))


@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning")
def test_a_vision_transformer_exports_to_torchscript(tmp_path):
    """Its attention takes another path with gradients than without, and
    trace's own check reruns the model: traced with gradients, the check fails."""
    model = VisionTransformer(
        image_size=16,
        patch_size=8,
        num_layers=1,
        num_heads=2,
        hidden_dim=8,
        mlp_dim=16,
        num_classes=3,
    ).eval()
    EXPORTERS["torchscript"](model, (3, 16, 16), tmp_path / "model.pt")
    traced = load_runner("torchscript", tmp_path / "model.pt")
    images = torch.rand(2, 3, 16, 16)
    with torch.no_grad():
        assert torch.allclose(traced(images), model(images), atol=1e-5)


def test_weights_a_few_ulps_apart_still_get_a_histogram():
    """Swin V2's logit scales, all log(10), one step later differ by an ulp or
    two: an epoch's weight histograms must not stop the run."""
    layer = nn.Module()
    layer.logit_scale = nn.Parameter(torch.full((3,), math.log(10)))
    with torch.no_grad():
        scale = layer.logit_scale
        scale[0] = torch.nextafter(scale[0], torch.tensor(3.0))
    run = SimpleNamespace(model=layer, global_step=1)
    histograms = weight_histograms(run, epoch=1)
    assert histograms.layers == ("(model)",)
    assert sum(histograms.counts[0]) == 3
    assert len(histograms.edges[0]) == 31
