"""Rare classes: the loss's class weights and the balanced sampler.

Balanced weights are scikit-learn's ``compute_class_weight('balanced')`` over
the training split; the step's loss (and the learning-rate finder's) is the
weighted cross-entropy; a weights file is read into the config, and a bad one
is one line, exit code 2 and no run folder; the balanced sampler draws every
class about equally often, and a resumed run draws exactly what the
uninterrupted one did.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
from sklearn.utils.class_weight import compute_class_weight
from torch.nn import functional as F

from tests.conftest import make_arrays
from tests.core.test_exact_resume import record_training_batches, train_until
from tests.image_folders import make_folder
from workbench.cli.commands import main
from workbench.core import events as E
from workbench.core.checkpoints.io import load_checkpoint, restore_run, save_checkpoint
from workbench.core.config import ConfigError, TrainConfig, load_config, save_config
from workbench.core.data.folder_check import check_folder
from workbench.core.data.registry import DataError, ImageArrays
from workbench.core.distributed import ddp
from workbench.core.runs.listing import list_runs
from workbench.core.script.writer import ScriptError, write_script
from workbench.core.train.class_weights import balanced_weights, read_weights_file
from workbench.core.train.engine import fit, prepare_run
from workbench.core.train.feature_cache import FeatureFeed
from workbench.core.tuning.lr_find import train_step

RARE = 3  # the class most of whose training images are cut
FP32 = {"model": "mlp", "precision": "fp32", "device": "cpu"}
WEIGHTS = (1.0, 2.0, 0.5, 8.0, 1.0, 1.0, 3.0, 1.0, 0.25, 1.0)


def lopsided(arrays: ImageArrays, keep: int = 3) -> ImageArrays:
    """``arrays`` with only ``keep`` training images of class :data:`RARE`."""
    labels = arrays.train_labels
    rare = torch.nonzero(labels == RARE).flatten()
    kept = torch.ones(len(labels), dtype=torch.bool)
    kept[rare[keep:]] = False
    return ImageArrays(
        arrays.train_images[kept],
        labels[kept],
        arrays.test_images,
        arrays.test_labels,
    )


@pytest.fixture(scope="module")
def rare_arrays() -> ImageArrays:
    return lopsided(make_arrays(256, 64))


# ------------------------------------------------------------- the weights


def test_balanced_weights_are_scikit_learns_over_the_training_split(rare_arrays):
    labels = rare_arrays.train_labels.numpy()
    expected = compute_class_weight("balanced", classes=np.arange(10), y=labels)
    counts = torch.bincount(torch.from_numpy(labels), minlength=10)
    assert balanced_weights(counts).numpy() == pytest.approx(expected, rel=1e-12)
    run = prepare_run(TrainConfig(class_weights="balanced", **FP32), arrays=rare_arrays)
    assert run.class_weights.dtype == torch.float32
    assert run.class_weights.numpy() == pytest.approx(expected, rel=1e-6)
    assert (
        run.class_weights[RARE] == run.class_weights.max()
    )  # the rare one weighs most
    assert prepare_run(TrainConfig(**FP32), arrays=rare_arrays).class_weights is None


def test_balanced_weights_count_an_image_folder_without_its_validation_images(
    tmp_path, data_dir
):
    root = tmp_path / "pets"
    make_folder(root, ["cat"], 20, size=12)
    make_folder(root, ["dog"], 5, size=12, seed=1)
    cfg = TrainConfig(
        dataset="folder", data_dir=str(root), class_weights="balanced", **FP32
    )
    run = prepare_run(cfg.replace(image_size=16, val_fraction=0.2))
    train = run.loaders.train.labels.numpy()
    assert len(train) == 20  # 16 cats and 4 dogs train; 5 images validate
    expected = compute_class_weight("balanced", classes=np.arange(2), y=train)
    assert run.class_weights.numpy() == pytest.approx(expected, rel=1e-6)
    assert expected.tolist() == pytest.approx([20 / 32, 20 / 8])


def test_balanced_needs_every_class_in_the_training_split():
    arrays = lopsided(make_arrays(256, 64), keep=0)
    for setting, words in (
        ({"class_weights": "balanced"}, "class weights balanced"),
        ({"balanced_sampler": True}, "the balanced sampler"),
    ):
        with pytest.raises(DataError, match=f"^{words} needs every class.* 3 has no"):
            prepare_run(TrainConfig(**FP32, **setting), arrays=arrays)


def test_a_training_step_uses_the_weighted_loss(tiny_arrays):
    cfg = TrainConfig(class_weights=WEIGHTS, batch_size=64, log_every=1, **FP32)
    run = prepare_run(cfg, arrays=tiny_arrays)
    before = copy.deepcopy(run.model)
    loader = run.loaders.train
    loader.set_epoch(0)
    x, y = next(loader.iter_from(0))
    logits = before(x).float()
    weighted = F.cross_entropy(logits, y, weight=torch.tensor(WEIGHTS)).item()
    assert abs(weighted - F.cross_entropy(logits, y).item()) > 1e-3  # it tells
    first = next(e for e in fit(run) if isinstance(e, E.StepMetrics))
    assert first.global_step == 1
    assert first.loss == pytest.approx(weighted, rel=1e-6)


def test_the_lr_finder_measures_the_runs_weighted_loss(tiny_arrays):
    cfg = TrainConfig(class_weights=WEIGHTS, batch_size=64, **FP32)
    run = prepare_run(cfg, arrays=tiny_arrays)
    x, y = next(run.loaders.train.iter_from(0))
    expected = F.cross_entropy(
        copy.deepcopy(run.model)(x).float(), y, weight=torch.tensor(WEIGHTS)
    )
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    assert train_step(run, run.model, scaler, x, y) == pytest.approx(expected.item())


def test_each_rank_weighs_its_chunk_by_its_share_of_the_batchs_weights(peer):
    """The weighted mean over ranks: this rank's weights sum to 3, the other's 5."""
    run = type("Run", (), {"ddp": object()})()
    peer["values"] = [5.0]
    scaled = ddp.backward_loss(run, torch.tensor(1.0), 15, torch.tensor(3.0))
    assert scaled.item() == pytest.approx(3 * 2 / 8)  # S_r * W / sum S
    # Logged: (1.0 * 3 + 2.0 * 5) / 8, the whole batch's weighted mean.
    peer["values"] = [2.0 * 5, 5.0]
    assert ddp.step_loss(torch.tensor(1.0), 15, torch.tensor(3.0)) == pytest.approx(
        13 / 8
    )


# ------------------------------------------------------------ weights files


@pytest.mark.parametrize(
    ("text", "suffix"),
    [
        ("[1, 2.5, 0.5]", ".json"),
        ("1,2.5,0.5\n", ".csv"),
        ("# weights of cat, dog, fox\n1\n2.5   # dog\n0.5\n", ".txt"),
        ("\ufeff1; 2.5\t0.5", ".txt"),
    ],
)
def test_a_weights_file_is_a_json_list_or_separated_numbers(tmp_path, text, suffix):
    path = tmp_path / f"w{suffix}"
    path.write_text(text, encoding="utf-8")
    assert read_weights_file(path) == (1.0, 2.5, 0.5)


def _weights_file(tmp_path, text: str | bytes):
    path = tmp_path / "weights.txt"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("1 2 3", "3 weights for the 10 classes of digits"),
        ("1 2 3 4 5 6 7 8 9 -1", "weight 9 is -1"),
        ("1 2 3 4 5 6 7 8 9 0", "weight 9 is 0"),
        ("1 2 3 4 5 6 7 8 9 nan", "finite"),
        ("1 2 3 4 5 6 7 8 9 inf", "finite"),
        ("1 2 3 4 5 6 7 8 9 heavy", "'heavy' is not a number"),
        ('[1, 2, "x", 4]', "'x' is not a number"),
        ('{"a": 1}', "'{\"a\":' is not a number"),
        ("[1, 2", "not a valid JSON list"),
        ("", "0 weight(s)"),
        (b"\xff\xfe1 2", "not UTF-8"),
    ],
)
def test_a_bad_weights_file_is_one_line_exit_2_and_no_run_folder(
    tmp_path, runs_root, capsys, content, words
):
    path = _weights_file(tmp_path, content)
    code = main(["train", "--quiet", "--model", "mlp", "--class-weights", str(path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1, err
    assert err[0].startswith("ptcore-workbench train: error: ")
    assert words in err[0]
    assert list(runs_root.iterdir()) == []


def test_a_missing_or_folder_weights_file_is_one_line(tmp_path, runs_root, capsys):
    for path, words in ((tmp_path / "nope.txt", "not found"), (tmp_path, "not a file")):
        code = main(["train", "--quiet", "--class-weights", str(path)])
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert code == 2
        assert f"class weights file {path}: {words}" in line
    assert list(runs_root.iterdir()) == []


def test_weights_that_do_not_fit_a_folders_classes_make_no_run_folder(
    tmp_path, runs_root, capsys, data_dir
):
    root = make_folder(tmp_path / "pets", ["cat", "dog", "fox"], 4, size=12)
    path = _weights_file(tmp_path, "1 2")
    flags = ["--dataset", "folder", "--data-dir", str(root), "--image-size", "16"]
    code = main(["train", "--quiet", *flags, "--class-weights", str(path)])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert line.endswith(f"2 weights for the 3 classes of {root}: give one per class")
    assert list(runs_root.iterdir()) == []


def test_a_config_keeps_the_weights_and_reproduce_repeats_them(
    tmp_path, runs_root, capsys
):
    path = _weights_file(tmp_path, " ".join(str(w) for w in WEIGHTS))
    flags = ["--model", "mlp", "--epochs", "1", "--log-every", "1"]
    assert main(["train", "--quiet", *flags, "--class-weights", str(path)]) == 0
    path.unlink()  # the run's folder needs no file to repeat it
    (summary,) = list_runs()
    recorded = json.loads((summary.folder.path / "run.json").read_text())["config"]
    assert recorded["class_weights"] == list(WEIGHTS)
    capsys.readouterr()
    assert main(["runs", "reproduce", summary.id]) == 0
    assert "reproduced: all 6 logged losses are identical" in capsys.readouterr().out
    cfg = TrainConfig(class_weights=WEIGHTS, balanced_sampler=True)
    for suffix in (".json", ".toml"):
        save_config(cfg, tmp_path / f"c{suffix}")
        assert load_config(tmp_path / f"c{suffix}") == cfg


def test_a_config_refuses_weights_it_cannot_use():
    for value, words in (
        ("heavy", "is not none, balanced or a list of one weight per class"),
        ((1.0, 2.0), "2 weights for the 10 classes of digits"),
        ((1.0,) * 9 + (float("nan"),), "weight 9 is nan"),
        ((1.0,) * 9 + (True,), "weight 9 (True) is no number"),
    ):
        with pytest.raises(ConfigError, match=f"^class_weights: .*{re.escape(words)}"):
            TrainConfig(class_weights=value)


# ------------------------------------------------------- the balanced sampler


def test_the_balanced_sampler_draws_every_class_about_equally(rare_arrays):
    cfg = TrainConfig(balanced_sampler=True, batch_size=32, seed=4, **FP32)
    for loader in ("fast", "dataloader"):
        run = prepare_run(cfg.replace(loader=loader), arrays=rare_arrays)
        train = run.loaders.train
        labels = train.labels if loader == "fast" else rare_arrays.train_labels
        orders = [train.epoch_order(epoch) for epoch in range(6)]
        assert all(len(order) == train.num_samples for order in orders)
        assert not torch.equal(orders[0], orders[1])  # a new draw each epoch
        shares = torch.bincount(labels[torch.cat(orders)], minlength=10) / sum(
            len(order) for order in orders
        )
        assert shares.tolist() == pytest.approx([0.1] * 10, abs=0.035)
        natural = torch.bincount(labels, minlength=10)[RARE] / len(labels)
        assert natural < 0.02  # 3 of 234: the sampler lifts it to about 10%
    other = prepare_run(cfg.replace(seed=5), arrays=rare_arrays).loaders.train
    assert not torch.equal(other.epoch_order(0), orders[0])  # seeded by the run


@pytest.fixture(scope="module")
def indexed_rare_arrays() -> ImageArrays:
    """Lopsided arrays whose training image i holds i in its top-left pixel."""
    arrays = lopsided(make_arrays(256, 64))
    images = arrays.train_images.clone()
    images[:, 0, 0] = torch.arange(len(images), dtype=torch.uint8)
    return ImageArrays(
        images, arrays.train_labels, arrays.test_images, arrays.test_labels
    )


@pytest.mark.slow
@pytest.mark.parametrize("loader", ["fast", "dataloader"])
def test_a_balanced_run_resumed_from_its_checkpoint_draws_the_same(
    tmp_path, indexed_rare_arrays, loader
):
    cfg = TrainConfig(
        balanced_sampler=True,
        class_weights=WEIGHTS,
        epochs=3,
        batch_size=32,
        log_every=1,
        loader=loader,
        seed=3,
        **FP32,
    )
    straight = prepare_run(cfg, arrays=indexed_rare_arrays)
    straight_batches = record_training_batches(straight)
    straight_losses = [e.loss for e in fit(straight) if isinstance(e, E.StepMetrics)]
    steps = straight.steps_per_epoch
    epoch = torch.cat(straight_batches[steps : 2 * steps])
    assert len(epoch.unique()) < len(epoch)  # drawn with replacement

    stop_at = steps + 3  # in the second epoch
    first = prepare_run(cfg, arrays=indexed_rare_arrays)
    before = train_until(first, stop_at)
    path = save_checkpoint(tmp_path / "half.pt", first)
    torch.manual_seed(999)  # as another process would
    resumed = restore_run(load_checkpoint(path), arrays=indexed_rare_arrays)
    resumed_batches = record_training_batches(resumed)
    after = [e.loss for e in fit(resumed) if isinstance(e, E.StepMetrics)]
    assert before + after == straight_losses
    for got, expected in zip(resumed_batches, straight_batches[stop_at:], strict=True):
        assert torch.equal(got, expected)


def test_a_stored_draw_must_fit_the_training_split(rare_arrays):
    cfg = TrainConfig(balanced_sampler=True, **FP32)
    train = prepare_run(cfg, arrays=rare_arrays).loaders.train
    n = train.num_samples
    train.pin_order(0, torch.zeros(n, dtype=torch.int32))  # repeats are a draw
    for bad in (torch.zeros(n - 1), torch.full((n,), n)):
        with pytest.raises(ValueError, match=f"not a draw from {n} samples"):
            train.pin_order(0, bad)


def test_the_feature_cache_stays_off_with_the_balanced_sampler(rare_arrays):
    cfg = TrainConfig(balanced_sampler=True, frozen=("hidden.*",), **FP32)
    feed = FeatureFeed.start(prepare_run(cfg, arrays=rare_arrays))
    assert not feed.active
    assert feed.status == "feature cache: off: the balanced sampler is on"


# --------------------------------------------------- check-data and scripts


def test_check_data_says_how_to_train_on_imbalanced_classes(tmp_path, capsys):
    root = tmp_path / "d"
    make_folder(root, ["many"], 10, size=12)
    make_folder(root, ["few"], 1, size=12, seed=1)
    assert main(["check-data", str(root)]) == 0
    out = capsys.readouterr().out
    assert (
        "warning: strong class imbalance: many has 10 images, few 1; train with "
        "--class-weights balanced or --balanced-sampler" in out.splitlines()
    )
    (finding,) = [f for f in check_folder(root).findings if f.advice]
    assert finding.line("window").endswith(
        "; train with Class weights: Balanced or Balanced sampler (Loader panel)"
    )


def test_a_script_weighs_its_loss_and_refuses_the_sampler():
    text = write_script(TrainConfig(class_weights=WEIGHTS, device="cpu"))
    assert "CLASS_WEIGHTS = [1.0, 2.0, 0.5, 8.0" in text
    assert "F.cross_entropy(logits.float(), y, weight=class_weights)" in text
    balanced = write_script(TrainConfig(class_weights="balanced", device="cpu"))
    assert "torch.bincount(labels, minlength=NUM_CLASSES)" in balanced
    plain = write_script(TrainConfig(device="cpu"))
    assert "CLASS_WEIGHTS" not in plain
    assert "weight=class_weights" not in plain
    assert "F.cross_entropy(logits.float(), y)\n" in plain
    with pytest.raises(ScriptError, match="the balanced sampler: a script draws"):
        write_script(TrainConfig(balanced_sampler=True, device="cpu"))


@pytest.mark.slow
def test_two_processes_train_the_weighted_mean_that_one_does(tmp_path):
    """digits at batch 64: epoch 1 ends with 29 samples, split 15 + 14, whose
    summed weights differ; each rank's chunk must weigh its share of them."""
    path = _weights_file(tmp_path, " ".join(str(w) for w in WEIGHTS))
    run = [sys.executable, "-m", "workbench", "train", "--quiet", "--model", "mlp"]
    run += ["--batch-size", "64", "--max-steps", "30", "--device", "cpu"]
    run += ["--precision", "fp32", "--class-weights", str(path), "--balanced-sampler"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    losses = []
    for name, more in (("one", []), ("two", ["--nproc", "2"])):
        metrics = tmp_path / f"{name}.json"
        env["PTCORE_RUNS_DIR"] = str(tmp_path / f"{name}-runs")
        command = [*run, *more, "--metrics-json", str(metrics)]
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        losses.append([s["loss"] for s in json.loads(metrics.read_text())["steps"]])
    one, two = losses
    assert len(one) == len(two) == 30
    # Equal up to the order of float sums, as the unweighted runs are.
    assert max(abs(a - b) / abs(a) for a, b in zip(one, two, strict=True)) < 1e-4
