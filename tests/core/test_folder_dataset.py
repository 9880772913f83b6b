"""Training on a folder of the user's own images: split, decode, cache, record."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from tests.image_folders import make_folder
from workbench.core import events as E
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data import folder as folder_module
from workbench.core.data import folder_loading
from workbench.core.data.build import build_loaders
from workbench.core.data.describe import input_spec
from workbench.core.data.folder import load_folder, scan_folder, split_pairs
from workbench.core.data.registry import DataError
from workbench.core.models.builtins import build_model
from workbench.core.runs.data_record import DATA_FILE
from workbench.core.runs.reproduce import original_config
from workbench.core.session import Session
from workbench.core.train.engine import TrainControl

pytestmark = pytest.mark.usefixtures("data_dir")


def _cfg(root: Path, **changes) -> TrainConfig:
    values = {
        "dataset": "folder",
        "data_dir": str(root),
        "image_size": 16,
        "model": "small-cnn",
        "batch_size": 16,
        "epochs": 2,
        "log_every": 1,
    }
    return TrainConfig(**{**values, **changes})


def _train(session: Session, cfg: TrainConfig) -> list:
    plan = session.plan(cfg)
    session.begin(plan)
    events = list(session.train(plan, TrainControl()))
    session.finish(next((e for e in events if isinstance(e, E.TrainResult)), None))
    return events


# ------------------------------------------------------------------ the split


def test_a_folder_without_a_split_is_split_per_class_with_the_seed(tmp_path):
    make_folder(tmp_path / "d", 3, per_class=10)
    listing = scan_folder(tmp_path / "d")
    train, val = split_pairs(listing, 0.2, seed=0)
    assert [sum(1 for _, y in val if y == c) for c in range(3)] == [2, 2, 2]
    assert [sum(1 for _, y in train if y == c) for c in range(3)] == [8, 8, 8]
    assert not {p for p, _ in train} & {p for p, _ in val}
    again, _ = split_pairs(listing, 0.2, seed=0)
    other, _ = split_pairs(listing, 0.2, seed=1)
    assert again == train
    assert other != train


def test_a_folder_with_train_and_val_keeps_its_own_split(tmp_path):
    make_folder(tmp_path / "d", ["a", "b"], per_class=8, split=True)
    data = load_folder(tmp_path / "d", image_size=16)
    assert len(data.arrays.test_labels) == 4  # images 0 and 4 of each class
    assert len(data.arrays.train_labels) == 12


def test_class_names_come_from_the_folder_names(tmp_path):
    names = ["zebra crossing", "Äpfel", "ünïcode ñame"]
    make_folder(tmp_path / "d", names, per_class=4)
    data = load_folder(tmp_path / "d", image_size=16)
    assert data.info.class_names == tuple(sorted(names))
    assert data.info.num_classes == 3


# ------------------------------------------------------------------ decoding


def test_images_are_brought_to_one_size_by_resize_and_centre_crop(tmp_path):
    root = tmp_path / "d"
    for name in ("a", "b"):
        (root / name).mkdir(parents=True)
    # 40 wide, 20 high: a left third black, middle white, right third black.
    wide = np.zeros((20, 40), np.uint8)
    wide[:, 10:30] = 255
    Image.fromarray(wide).save(root / "a" / "wide.png")
    Image.fromarray(wide.T.copy()).save(root / "b" / "tall.png")
    Image.fromarray(wide).save(root / "a" / "w2.png")
    Image.fromarray(wide.T.copy()).save(root / "b" / "t2.png")
    data = load_folder(root, image_size=10)
    images = torch.cat([data.arrays.train_images, data.arrays.test_images])
    assert images.shape[1:] == (1, 10, 10)
    # Resized to 10 high (20 wide), then the centre 10 columns: white (the
    # edges a little blended by antialiasing). Squashed, a third would be black.
    assert images.min() > 200


def test_gray_folders_train_on_one_channel_and_colour_on_three(tmp_path):
    gray = load_folder(make_folder(tmp_path / "g", 2, 4, mode="L"), image_size=16)
    colour = load_folder(make_folder(tmp_path / "c", 2, 4), image_size=16)
    assert gray.info.image_shape == (1, 16, 16)
    assert colour.info.image_shape == (3, 16, 16)
    assert len(colour.info.mean) == 3
    assert input_spec("folder", str(tmp_path / "g"), 16).image_shape == (1, 16, 16)
    assert input_spec("folder", str(tmp_path / "c"), 16).image_shape == (3, 16, 16)


def test_a_gray_image_in_a_colour_folder_gets_three_equal_channels(tmp_path):
    root = make_folder(tmp_path / "d", ["a", "b"], 3)
    Image.fromarray(np.full((20, 20), 77, np.uint8)).save(root / "a" / "gray.png")
    data = load_folder(root, image_size=8, val_fraction=0.5)
    images = torch.cat([data.arrays.train_images, data.arrays.test_images])
    flat = images[(images == 77).flatten(1).all(1)]
    assert len(flat) == 1
    assert flat.shape[1] == 3


def test_awkward_images_are_read(tmp_path):
    root = make_folder(tmp_path / "d", ["a", "b"], 3)
    deep = (np.arange(400, dtype=np.uint16).reshape(20, 20) * 160).astype(np.uint16)
    Image.fromarray(deep).save(root / "a" / "sixteen-bit.png")
    Image.new("CMYK", (20, 20), (0, 255, 255, 0)).save(root / "a" / "cmyk.jpg")
    Image.new("P", (20, 20), 3).save(root / "b" / "palette.png")
    Image.new("RGBA", (20, 20), (10, 200, 10, 128)).save(root / "b" / "alpha.png")
    Image.new("RGB", (20, 20), (0, 0, 250)).save(root / "b" / "blue.webp")
    Image.new("L", (20, 20), 128).save(root / "b" / "gray.bmp")
    data = load_folder(root, image_size=8)
    assert data.skipped == ()
    assert len(data.arrays.train_labels) + len(data.arrays.test_labels) == 12
    from workbench.core.data.folder_images import read_square

    sixteen = read_square(root / "a" / "sixteen-bit.png", 20).pixels
    # 16-bit values scaled to 8 bits (not clipped at 255, which is all white).
    assert sixteen.min() == 0
    assert 200 < sixteen.max() <= 255
    assert sixteen.mean() < 200
    cmyk = read_square(root / "a" / "cmyk.jpg", 8).pixels
    assert cmyk.shape == (8, 8, 3)
    assert cmyk[..., 0].mean() > 200
    assert cmyk[..., 1].mean() < 60


def test_an_image_of_ten_thousand_pixels_a_side_is_read(tmp_path):
    root = make_folder(tmp_path / "d", ["a", "b"], 3)
    Image.new("L", (10_000, 10_000), 200).save(root / "a" / "huge.jpg", quality=50)
    data = load_folder(root, image_size=16)
    assert data.skipped == ()
    assert len(data.arrays.train_labels) + len(data.arrays.test_labels) == 7


def test_unreadable_files_are_skipped_and_named(tmp_path):
    root = make_folder(tmp_path / "d", ["a", "b"], 6)
    (root / "a" / "zero.jpg").write_bytes(b"")
    whole = (root / "b" / "001.png").read_bytes()
    (root / "b" / "truncated.png").write_bytes(whole[: len(whole) // 2])
    (root / "b" / "notes.txt").write_text("not an image")
    data = load_folder(root, image_size=16)
    assert len(data.skipped) == 2
    assert any(s.startswith("a/zero.jpg: the file is empty") for s in data.skipped)
    assert any(s.startswith("b/truncated.png") for s in data.skipped)
    assert len(data.arrays.train_labels) + len(data.arrays.test_labels) == 12
    assert scan_folder(root).ignored == (root / "b" / "notes.txt",)


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda root: None, "no such folder"),
        (lambda root: root.mkdir(), "has no class folders"),
        (
            lambda root: (root / "only").mkdir(parents=True),
            "a classifier needs at least two",
        ),
    ],
    ids=["missing", "no-classes", "one-class"],
)
def test_folders_that_cannot_train_say_why(tmp_path, make, expected):
    root = tmp_path / "d"
    make(root)
    with pytest.raises(DataError, match=expected):
        load_folder(root, image_size=16)
    with pytest.raises(DataError, match=expected):
        build_loaders(_cfg(root), "cpu")


def test_a_class_without_readable_images_is_named(tmp_path):
    root = make_folder(tmp_path / "d", ["a", "b"], 4)
    (root / "empty class").mkdir()
    with pytest.raises(DataError, match="empty class"):
        load_folder(root, image_size=16)


def test_the_folder_dataset_needs_its_folder():
    with pytest.raises(ConfigError, match="data_dir"):
        TrainConfig(dataset="folder")
    with pytest.raises(ConfigError, match="image_size"):
        TrainConfig(dataset="mnist", image_size=64)


# ------------------------------------------------------------------ the cache


def test_the_second_load_reads_the_decoded_cache_without_decoding(
    tmp_path, monkeypatch
):
    root = make_folder(tmp_path / "d", 3, 6)
    first = load_folder(root, image_size=16)
    assert not first.from_cache

    def no_decoding(*_args, **_kwargs):
        raise AssertionError("decoded again")

    monkeypatch.setattr(folder_module, "read_many", no_decoding)
    second = load_folder(root, image_size=16)
    assert second.from_cache
    assert torch.equal(second.arrays.train_images, first.arrays.train_images)
    assert torch.equal(second.arrays.test_labels, first.arrays.test_labels)
    assert second.info == first.info
    # Another size, or changed files, are another cache entry: decoded afresh.
    with pytest.raises(AssertionError, match="decoded again"):
        load_folder(root, image_size=12)
    Image.new("RGB", (20, 20)).save(root / "class00" / "new.png")
    with pytest.raises(AssertionError, match="decoded again"):
        load_folder(root, image_size=16)


def test_a_damaged_cache_is_decoded_again(tmp_path, data_dir):
    root = make_folder(tmp_path / "d", 2, 4)
    first = load_folder(root, image_size=16)
    for cache in (data_dir / "folder-cache").glob("*.pt"):
        cache.write_bytes(b"garbage")
    again = load_folder(root, image_size=16)
    assert not again.from_cache
    assert torch.equal(again.arrays.train_images, first.arrays.train_images)


def test_beyond_the_memory_budget_a_dataloader_reads_the_files(tmp_path, monkeypatch):
    root = make_folder(tmp_path / "d", 2, 8)
    (root / "class00" / "zero.jpg").write_bytes(b"")
    fast = build_loaders(_cfg(root), "cpu")
    assert fast.path.startswith("In memory: 16 images decoded once")
    monkeypatch.setenv(folder_module.MEMORY_BUDGET_ENV, "0.01")  # 10 kB
    # Worker processes take seconds to start; what they read is the same.
    assert folder_loading.fallback_workers() >= 1
    monkeypatch.setattr(folder_loading, "fallback_workers", lambda: 0)
    streamed = build_loaders(_cfg(root), "cpu")
    assert streamed.path.startswith("From disk through a DataLoader (0 workers)")
    assert "over the 0 MB memory budget" in streamed.path
    assert streamed.skipped == fast.skipped
    assert len(fast.skipped) == 1
    assert any("Skipped 1 file" in n for n in streamed.notices)
    x, _y = next(iter(streamed.train))
    assert x.shape == (13, 3, 16, 16)
    assert x.dtype == torch.float32
    # Same files, same split, same statistics within the sample's precision.
    assert streamed.train.num_samples == fast.train.num_samples
    assert streamed.val.num_samples == fast.val.num_samples
    assert streamed.fingerprint == fast.fingerprint


# ------------------------------------------------------------------ models


@pytest.mark.parametrize("model", ["small-cnn", "cnn", "lazy-cnn", "mlp"])
@pytest.mark.parametrize(
    ("classes", "shape"), [(2, (1, 28, 28)), (10, (3, 32, 32)), (37, (3, 64, 48))]
)
def test_the_models_adapt_to_channels_size_and_classes(model, classes, shape):
    net = build_model(model, classes, seed=0, input_shape=shape)
    net.eval()
    assert net(torch.zeros(2, *shape)).shape == (2, classes)


def test_at_mnist_shape_the_models_are_the_classic_networks():
    # The defaults must not change what MNIST runs and their checkpoints hold.
    assert build_model("cnn").fc1.in_features == 9216
    assert build_model("small-cnn").head.in_features == 64 * 3 * 3
    assert build_model("mlp").hidden[1].in_features == 784


def test_too_small_images_are_refused_with_the_model_named():
    with pytest.raises(ConfigError, match="small-cnn needs images of at least 8"):
        build_model("small-cnn", 2, input_shape=(3, 6, 6))


@pytest.mark.parametrize("classes", [2, 10, 37])
def test_runs_train_on_folders_of_2_10_and_37_classes(tmp_path, classes):
    root = make_folder(tmp_path / "d", classes, per_class=4, size=12)
    session = Session(origin="test")
    events = _train(session, _cfg(root, image_size=12, epochs=1))
    result = next(e for e in events if isinstance(e, E.TrainResult))
    assert result.global_step >= 1
    assert session.run.model.head.out_features == classes
    assert session.run.loaders.info.num_classes == classes


# ------------------------------------------------------------------ the record


def test_a_run_records_its_data_and_reproduce_names_a_change(tmp_path):
    root = make_folder(tmp_path / "d", 2, 6)
    (root / "class01" / "zero.jpg").write_bytes(b"")
    session = Session(origin="test")
    events = _train(session, _cfg(root, epochs=1))
    notices = [e.message for e in events if isinstance(e, E.Notice)]
    assert any(
        "Skipped 1 file that does not decode: class01/zero.jpg" in n for n in notices
    )
    folder = session.folder
    info = json.loads((folder.path / "run.json").read_text())
    stored = json.loads((folder.path / DATA_FILE).read_text())
    assert info["data_fingerprint"] == stored["digest"]
    assert "class00/000.jpg" in stored["files"]
    assert original_config(folder).data_dir == str(root)  # unchanged: allowed
    Image.new("RGB", (20, 20), (9, 9, 9)).save(root / "class00" / "000.jpg")
    (root / "class01" / "003.png").unlink()
    with pytest.raises(ConfigError) as refused:
        original_config(folder)
    message = str(refused.value)
    assert "changed since it trained" in message
    assert "1 file removed (class01/003.png)" in message
    assert "1 file changed (class00/000.jpg)" in message


def test_checkpoints_carry_the_class_names_and_input_shape(tmp_path):
    from workbench.core.checkpoints.io import info_of, save_checkpoint

    root = make_folder(tmp_path / "d", ["cat", "dog"], 6)
    session = Session(origin="test")
    _train(session, _cfg(root, epochs=1))
    path = save_checkpoint(tmp_path / "c.pt", session.run)
    payload = torch.load(path, weights_only=True)
    info = info_of(payload)
    assert info.class_names == ("cat", "dog")
    assert info.image_shape == (3, 16, 16)
    assert info == session.run.loaders.info


# ------------------------------------------------------------------ augmentation


@pytest.mark.parametrize("loader", ["fast", "dataloader"])
def test_augmentation_changes_training_batches_only(tmp_path, loader):
    root = make_folder(tmp_path / "d", 2, 8)
    plain = build_loaders(_cfg(root, loader=loader), "cpu")
    changed = build_loaders(_cfg(root, loader=loader, augment=("crop", "flip")), "cpu")
    x_plain, y_plain = next(iter(plain.train))
    x_aug, y_aug = next(iter(changed.train))
    assert torch.equal(y_plain, y_aug)  # the same samples in the same order
    assert x_aug.shape == x_plain.shape
    assert not torch.equal(x_aug, x_plain)
    assert torch.equal(next(iter(plain.val))[0], next(iter(changed.val))[0])


def test_builtin_datasets_augment_on_both_paths(tiny_arrays):
    cfg = TrainConfig(dataset="digits", batch_size=32, augment=("rotate",))
    for kind in ("fast", "dataloader"):
        loaders = build_loaders(cfg.replace(loader=kind), "cpu", arrays=tiny_arrays)
        plain = build_loaders(
            cfg.replace(loader=kind, augment=()), "cpu", arrays=tiny_arrays
        )
        assert not torch.equal(next(iter(loaders.train))[0], next(iter(plain.train))[0])


# ------------------------------------------------------------------ CIFAR-10


@pytest.mark.parametrize("size", [16, 32, 48])
def test_cifar10_trains_at_any_image_size(tmp_path, size):
    from tests.core.test_cifar import _write_batches

    _write_batches(tmp_path)
    cfg = TrainConfig(
        dataset="cifar10",
        data_dir=str(tmp_path),
        download=False,
        image_size=size if size != 32 else None,
        batch_size=16,
        epochs=1,
        model="cnn",
    )
    session = Session(origin="test")
    events = _train(session, cfg)
    assert any(isinstance(e, E.TrainResult) for e in events)
    info = session.run.loaders.info
    assert info.image_shape == (3, size, size)
    assert info.class_names[0] == "airplane"
    x, _ = next(iter(session.run.loaders.val))
    assert x.shape[1:] == (3, size, size)
