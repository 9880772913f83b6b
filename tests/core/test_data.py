"""workbench.core.data: offline digits, IDX loading, both loaders, build_loaders."""

from __future__ import annotations

import hashlib
import warnings

import pytest
import torch
from torchvision import datasets

from tests.idx_files import (
    TORCHVISION_FOLDERS,
    gzipped_raw_files,
    mnist_like_arrays,
    write_mnist_raw,
)
from workbench.core.config import DATASETS, TrainConfig
from workbench.core.data.build import build_loaders
from workbench.core.data.loaders import (
    ArrayDataset,
    DataLoaderBatches,
    FastLoader,
    standard_transform,
)
from workbench.core.data.registry import (
    DATA_DIR_ENV,
    DATASET_INFO,
    DataError,
    DataMissing,
    ImageArrays,
    default_data_dir,
)
from workbench.core.data.sources import load_arrays

CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def digits() -> ImageArrays:
    return load_arrays("digits")


def _fast(images, labels, **overrides) -> FastLoader:
    options = {
        "batch_size": 16,
        "shuffle": True,
        "seed": 3,
        "device": CPU,
        "mean": 0.5,
        "std": 0.25,
    }
    options.update(overrides)
    return FastLoader(images, labels, **options)


def _numbered(n: int = 103) -> tuple[torch.Tensor, torch.Tensor]:
    """Images whose first pixel and label both name the sample."""
    images = torch.zeros((n, 28, 28), dtype=torch.uint8)
    images[:, 0, 0] = torch.arange(n, dtype=torch.uint8)
    return images, torch.arange(n)


def _labels_of(batches) -> list[int]:
    return [int(v) for _, y in batches for v in y]


# ------------------------------------------------------------------ dataset info


def test_dataset_info_covers_exactly_the_config_datasets():
    # A folder's classes and shape are only known once it is scanned.
    assert (*DATASET_INFO, "folder") == DATASETS
    for name, info in DATASET_INFO.items():
        assert info.name == name
        assert info.num_classes == len(info.class_names) == 10
        colour = name == "cifar10"
        assert info.image_shape == ((3, 32, 32) if colour else (1, 28, 28))
        assert len(info.mean) == len(info.std) == info.channels
        assert info.offline == (name in ("digits", "my-digits"))
    assert DATASET_INFO["mnist"].class_names == tuple("0123456789")
    # Written out so that naming them needs no torchvision import: torchvision's.
    fashion = DATASET_INFO["fashion-mnist"].class_names
    assert fashion == tuple(datasets.FashionMNIST.classes)
    assert DATASET_INFO["kmnist"].class_names == tuple(datasets.KMNIST.classes)


def test_unknown_dataset_is_a_data_error():
    with pytest.raises(DataError, match="unknown dataset 'cifar'"):
        load_arrays("cifar")


def test_default_data_dir_honours_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    default = default_data_dir()
    assert default.name == "data"
    assert "ptcore-workbench" in str(default)
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    assert default_data_dir() == tmp_path


# ------------------------------------------------------------------ digits


def test_digits_shapes_dtypes_and_fixed_split(digits):
    assert digits.train_images.shape == (1437, 28, 28)
    assert digits.test_images.shape == (360, 28, 28)
    assert digits.train_images.dtype == digits.test_images.dtype == torch.uint8
    assert digits.train_labels.dtype == digits.test_labels.dtype == torch.int64
    again = load_arrays("digits")
    assert torch.equal(again.train_labels, digits.train_labels)
    assert torch.equal(again.test_images, digits.test_images)


def test_digits_split_is_stratified(digits):
    train_counts = torch.bincount(digits.train_labels, minlength=10)
    test_counts = torch.bincount(digits.test_labels, minlength=10)
    total = train_counts + test_counts
    assert (test_counts - total * 0.2).abs().max() <= 1


def test_digits_look_like_mnist(digits):
    images = torch.cat([digits.train_images, digits.test_images])
    assert int(images.max()) == 255
    # 20x20 digit centred in a 4-pixel black margin, white ink on black.
    inner = images[:, 4:24, 4:24]
    assert int(images.sum()) == int(inner.sum())
    assert images.float().mean() < 64


def test_digits_mean_std_constants_match_their_measurement(digits):
    pixels = digits.train_images.double() / 255
    info = DATASET_INFO["digits"]
    assert info.mean[0] == pytest.approx(pixels.mean().item(), abs=5e-5)
    assert info.std[0] == pytest.approx(pixels.std(unbiased=False).item(), abs=5e-5)


# ------------------------------------------------------------------ torchvision files


@pytest.mark.parametrize("name", ["mnist", "fashion-mnist", "kmnist"])
def test_tiny_idx_files_load_through_torchvision(tmp_path, name):
    write_mnist_raw(tmp_path, name, n_train=40, n_test=20, seed=7)
    arrays = load_arrays(name, tmp_path, download=False)
    images, labels = mnist_like_arrays(40, seed=7)
    assert torch.equal(arrays.train_images, torch.from_numpy(images))
    assert torch.equal(arrays.train_labels, torch.from_numpy(labels).long())
    assert arrays.test_images.shape == (20, 28, 28)
    assert arrays.train_labels.dtype == torch.int64


@pytest.mark.parametrize("suffix", ["", "MNIST", "MNIST/raw"])
def test_data_dir_may_name_the_root_class_folder_or_raw_folder(tmp_path, suffix):
    write_mnist_raw(tmp_path, "mnist", n_train=20, n_test=10)
    arrays = load_arrays("mnist", tmp_path / suffix, download=False)
    assert arrays.train_images.shape == (20, 28, 28)


def test_archives_alone_are_unpacked_without_network(tmp_path, monkeypatch):
    archives = gzipped_raw_files(n_train=20, n_test=10)
    resources = [
        (name, hashlib.md5(data).hexdigest()) for name, data in archives.items()
    ]
    monkeypatch.setattr(datasets.MNIST, "resources", resources)
    write_mnist_raw(tmp_path, "mnist", n_train=20, n_test=10, formats=("gz",))
    arrays = load_arrays("mnist", tmp_path, download=False)
    assert arrays.test_images.shape == (10, 28, 28)
    assert (tmp_path / "MNIST" / "raw" / "train-images-idx3-ubyte").is_file()


def test_archives_failing_their_checksum_are_named(tmp_path):
    write_mnist_raw(tmp_path, "mnist", n_train=20, n_test=10, formats=("gz",))
    with pytest.raises(
        DataError, match="did not pass torchvision's MD5 check"
    ) as caught:
        load_arrays("mnist", tmp_path, download=False)
    assert "train-images-idx3-ubyte.gz" in str(caught.value)


def test_missing_files_without_download_name_the_folder(tmp_path):
    with pytest.raises(DataMissing, match="missing") as caught:
        load_arrays("kmnist", tmp_path, download=False)
    assert str(tmp_path / "KMNIST" / "raw") in str(caught.value)
    assert "t10k-labels-idx1-ubyte" in str(caught.value)


def test_damaged_files_are_a_data_error(tmp_path):
    write_mnist_raw(tmp_path, "mnist", n_train=20, n_test=10)
    images = tmp_path / "MNIST" / "raw" / "train-images-idx3-ubyte"
    images.write_bytes(images.read_bytes()[:100])
    with pytest.raises(DataError, match="damaged"):
        load_arrays("mnist", tmp_path, download=False)


def test_image_arrays_reject_wrong_dtypes():
    images = torch.zeros((4, 28, 28), dtype=torch.uint8)
    with pytest.raises(DataError, match="labels"):
        ImageArrays(images, torch.zeros(4, dtype=torch.int32), images, torch.zeros(4))


# ------------------------------------------------------------------ FastLoader


def test_fast_loader_covers_every_sample_once_per_epoch():
    images, labels = _numbered(103)
    loader = _fast(images, labels)
    assert len(loader) == 7
    assert loader.num_samples == 103
    for epoch in range(3):
        loader.set_epoch(epoch)
        batches = list(loader)
        assert [len(y) for _, y in batches] == [16] * 6 + [7]
        assert sorted(_labels_of(batches)) == list(range(103))


def test_fast_loader_order_depends_on_seed_and_epoch_only():
    images, labels = _numbered()
    first, second = _fast(images, labels), _fast(images, labels)
    first.set_epoch(2)
    second.set_epoch(2)
    assert _labels_of(first) == _labels_of(second)
    second.set_epoch(3)
    assert _labels_of(first) != _labels_of(second)
    other_seed = _fast(images, labels, seed=4)
    other_seed.set_epoch(2)
    assert _labels_of(first) != _labels_of(other_seed)


def test_fast_loader_iter_from_is_the_tail_of_the_epoch():
    images, labels = _numbered()
    loader = _fast(images, labels)
    loader.set_epoch(5)
    full = list(loader)
    for start in (0, 1, 6, 7):
        tail = list(loader.iter_from(start))
        assert len(tail) == len(full) - start
        for (x, y), (fx, fy) in zip(tail, full[start:], strict=True):
            assert torch.equal(x, fx)
            assert torch.equal(y, fy)
    with pytest.raises(ValueError, match="start_batch"):
        loader.iter_from(8)


def test_fast_loader_normalises_and_keeps_natural_order_without_shuffle():
    images, labels = _numbered(40)
    loader = _fast(images, labels, shuffle=False, mean=0.1307, std=0.3081)
    x, y = next(iter(loader))
    assert x.shape == (16, 1, 28, 28)
    assert x.dtype == torch.float32
    assert y.tolist() == list(range(16))
    expected = (images[:16].float().unsqueeze(1) / 255 - 0.1307) / 0.3081
    torch.testing.assert_close(x, expected)


def test_fast_loader_host_storage_gives_the_same_batches():
    images, labels = _numbered()
    on_device = _fast(images, labels, data_on_device=True)
    on_host = _fast(images, labels, data_on_device=False)
    assert on_host.data_device == CPU
    for (x, y), (hx, hy) in zip(on_device, on_host, strict=True):
        assert torch.equal(x, hx)
        assert torch.equal(y, hy)


# ------------------------------------------------------------------ DataLoaderBatches


def _standard_batches(arrays: ImageArrays, info, **overrides) -> DataLoaderBatches:
    dataset = ArrayDataset(
        arrays.train_images.numpy(),
        arrays.train_labels.numpy(),
        standard_transform(info.mean, info.std),
    )
    options = {"batch_size": 100, "shuffle": True, "seed": 1, "device": CPU}
    options.update(overrides)
    return DataLoaderBatches(dataset, **options)


def test_dataloader_batches_match_the_fast_loader(digits):
    info = DATASET_INFO["digits"]
    standard = _standard_batches(digits, info)
    fast = FastLoader(
        digits.train_images,
        digits.train_labels,
        batch_size=100,
        shuffle=True,
        seed=1,
        device=CPU,
        mean=info.mean,
        std=info.std,
    )
    assert len(standard) == len(fast) == 15
    assert standard.num_samples == fast.num_samples == 1437
    for epoch in (0, 1):
        standard.set_epoch(epoch)
        fast.set_epoch(epoch)
        pairs = zip(standard.iter_from(3), fast.iter_from(3), strict=True)
        for (x, y), (fx, fy) in pairs:
            assert torch.equal(y, fy)
            torch.testing.assert_close(x, fx, atol=1e-6, rtol=0)


class _CountingDataset(torch.utils.data.Dataset):
    def __init__(self, n: int) -> None:
        self.n = n
        self.loaded: list[int] = []

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int):
        self.loaded.append(index)
        return torch.zeros(1), index


def test_dataloader_iter_from_skips_batches_without_loading_them():
    dataset = _CountingDataset(50)
    batches = DataLoaderBatches(dataset, batch_size=8, shuffle=True, seed=0, device=CPU)
    batches.set_epoch(1)
    full = _labels_of(batches)
    dataset.loaded.clear()
    tail = _labels_of(batches.iter_from(4))
    assert tail == full[32:]
    assert sorted(dataset.loaded) == sorted(full[32:])
    assert list(batches.iter_from(len(batches))) == []


def test_dataloader_batches_leave_the_global_rng_alone(digits):
    standard = _standard_batches(digits, DATASET_INFO["digits"])
    torch.manual_seed(0)
    state = torch.get_rng_state()
    for _ in standard:
        pass
    assert torch.equal(torch.get_rng_state(), state)


@pytest.mark.slow
def test_spawned_worker_delivers_the_same_batches(digits):
    info = DATASET_INFO["digits"]
    in_process = _standard_batches(digits, info, batch_size=512)
    with_worker = _standard_batches(digits, info, batch_size=512, num_workers=1)
    assert with_worker.loader.multiprocessing_context.get_start_method() == "spawn"
    assert with_worker.loader.persistent_workers
    for epoch in (0, 1):  # the second epoch reuses the persistent worker
        in_process.set_epoch(epoch)
        with_worker.set_epoch(epoch)
        for (x, y), (wx, wy) in zip(in_process, with_worker, strict=True):
            assert torch.equal(y, wy)
            assert torch.equal(x, wx)


# ------------------------------------------------------------------ build_loaders


@pytest.mark.parametrize("loader", ["fast", "dataloader"])
def test_build_loaders_sizes_and_kinds(digits, loader):
    cfg = TrainConfig(dataset="digits", loader=loader, batch_size=64, seed=2)
    loaders = build_loaders(cfg, CPU, arrays=digits)
    kind = FastLoader if loader == "fast" else DataLoaderBatches
    assert isinstance(loaders.train, kind)
    assert isinstance(loaders.val, kind)
    assert loaders.info is DATASET_INFO["digits"]
    assert loaders.notices == ()
    assert len(loaders.train) == 23  # ceil(1437 / 64)
    assert loaders.val.batch_size == 1024
    assert loaders.val.num_samples == 360
    x, y = next(iter(loaders.val))
    assert x.shape == (360, 1, 28, 28)
    assert torch.equal(y, digits.test_labels)


@pytest.mark.parametrize("loader", ["fast", "dataloader"])
def test_pin_memory_on_cpu_gives_one_notice_and_no_warning(digits, loader):
    cfg = TrainConfig(dataset="digits", loader=loader, pin_memory=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaders = build_loaders(cfg, CPU, arrays=digits)
        for split in (loaders.train, loaders.val):
            for _ in split:
                pass
    assert len(loaders.notices) == 1
    assert loaders.notices[0].startswith("pin_memory switched off")
    assert "cpu" in loaders.notices[0]


def test_dataloader_path_uses_the_torchvision_dataset(tmp_path):
    write_mnist_raw(tmp_path, "fashion-mnist", n_train=30, n_test=10)
    cfg = TrainConfig(
        dataset="fashion-mnist", data_dir=str(tmp_path), loader="dataloader"
    )
    loaders = build_loaders(cfg, CPU)
    assert isinstance(loaders.train.dataset, datasets.FashionMNIST)
    x, y = next(iter(loaders.val))
    images, labels = mnist_like_arrays(10, seed=1)
    info = DATASET_INFO["fashion-mnist"]
    expected = (
        torch.from_numpy(images).float().unsqueeze(1) / 255 - info.mean[0]
    ) / info.std[0]
    torch.testing.assert_close(x, expected)
    assert y.tolist() == labels.tolist()


def test_build_loaders_reads_files_for_the_fast_path(tmp_path):
    write_mnist_raw(tmp_path, "kmnist", n_train=30, n_test=10)
    cfg = TrainConfig(dataset="kmnist", data_dir=str(tmp_path / "KMNIST"))
    loaders = build_loaders(cfg, CPU)
    assert loaders.train.num_samples == 30
    assert TORCHVISION_FOLDERS["kmnist"] == "KMNIST"


def test_default_config_trains_on_digits_in_six_batches(digits):
    loaders = build_loaders(TrainConfig(), CPU, arrays=digits)
    assert sum(1 for _ in loaders.train) == 6  # 1,437 images at batch 256
    x, _ = next(iter(loaders.val))
    assert torch.isfinite(x).all()


def test_digits_are_cached_after_the_first_load_and_a_damaged_cache_is_remade(
    tmp_path, monkeypatch
):
    from workbench.core.data import sources

    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    cache = tmp_path / sources.DIGITS_CACHE_NAME
    fresh = load_arrays("digits")
    assert cache.is_file()

    def no_sklearn():
        raise AssertionError("the cached digits should have been used")

    with monkeypatch.context() as patch:
        patch.setattr(sources, "_digits_from_sklearn", no_sklearn)
        cached = load_arrays("digits")
    for split in ("train_images", "train_labels", "test_images", "test_labels"):
        assert torch.equal(getattr(cached, split), getattr(fresh, split)), split
    assert (cached.train_images.shape, cached.test_images.shape) == (
        (1437, 28, 28),
        (360, 28, 28),
    )

    cache.write_bytes(b"PK\x03\x04 not really a zip")
    remade = load_arrays("digits")
    assert torch.equal(remade.test_images, fresh.test_images)
    with monkeypatch.context() as patch:
        patch.setattr(sources, "_digits_from_sklearn", no_sklearn)
        assert torch.equal(load_arrays("digits").train_labels, fresh.train_labels)
