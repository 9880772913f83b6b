"""CIFAR-10 from a tiny archive in the real binary format, served on 127.0.0.1.

The archive has the official member names and record layout (one label byte,
then the red, green and blue 32x32 planes, row-major), only fewer records.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import socket
import tarfile
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.core import test_download
from workbench.core.config import TrainConfig
from workbench.core.data import cifar
from workbench.core.data.build import build_loaders
from workbench.core.data.download import MIRROR_ENV, download_dataset
from workbench.core.data.registry import (
    DATASET_INFO,
    DataError,
    DataMissing,
    DownloadCancelled,
    DownloadProgress,
)
from workbench.core.data.sources import load_arrays

# The local HTTP server of the MNIST download tests, serving what a test puts in.
mirror = test_download.mirror

# 8 noisy records a file: the archive spans several 64 KiB download chunks.
RECORDS_PER_FILE = 8


def _crafted_image() -> np.ndarray:
    """Red holds the row, green the column, blue 200 + row: each plane tells."""
    rows, cols = np.indices((32, 32))
    return np.stack([rows, cols, 200 + rows]).astype(np.uint8)


def _batches(seed: int = 0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Images (n, 3, 32, 32) and labels (n,) of each batch file; the crafted
    image is the first record of ``data_batch_1.bin``, with label 7."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in cifar.BATCH_FILES:
        images = rng.integers(0, 256, (RECORDS_PER_FILE, 3, 32, 32), dtype=np.uint8)
        labels = rng.integers(0, 10, RECORDS_PER_FILE).astype(np.int64)
        out[name] = (images, labels)
    out["data_batch_1.bin"][0][0] = _crafted_image()
    out["data_batch_1.bin"][1][0] = 7
    return out


def _bin_file(images: np.ndarray, labels: np.ndarray) -> bytes:
    """The official record layout, written byte by byte from its description."""
    out = bytearray()
    for image, label in zip(images, labels, strict=True):
        out.append(int(label))
        for channel in image:  # R, then G, then B
            for row in channel:  # 32 rows of 32 bytes
                out.extend(int(v) for v in row)
    return bytes(out)


BATCHES = _batches()
BIN_FILES = {name: _bin_file(*arrays) for name, arrays in BATCHES.items()}


def _archive(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        members = {**files, "batches.meta.txt": b"airplane\nautomobile\n"}
        for name, body in members.items():
            info = tarfile.TarInfo(f"{cifar.FOLDER}/{name}")
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return buffer.getvalue()


ARCHIVE = _archive(BIN_FILES)


def _expected(names: tuple[str, ...]) -> tuple[torch.Tensor, torch.Tensor]:
    images = np.concatenate([BATCHES[n][0] for n in names])
    labels = np.concatenate([BATCHES[n][1] for n in names])
    return torch.from_numpy(images), torch.from_numpy(labels)


@pytest.fixture
def tiny_md5(monkeypatch) -> None:
    """Make the download code expect the tiny archive's MD5 instead of the real one."""
    monkeypatch.setattr(cifar, "ARCHIVE_MD5", hashlib.md5(ARCHIVE).hexdigest())


def _serve(mirror, body: bytes = ARCHIVE, prefix: str = "/") -> None:
    mirror.files[prefix + cifar.ARCHIVE_NAME] = body


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


def _write_batches(root: Path, files: dict[str, bytes] = BIN_FILES) -> Path:
    folder = root / cifar.FOLDER
    folder.mkdir(parents=True)
    for name, body in files.items():
        (folder / name).write_bytes(body)
    return folder


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("*") if p.name.startswith("."))


def test_download_reports_progress_and_loads_every_record_as_written(
    tmp_path, mirror, tiny_md5
):
    _serve(mirror)
    reports: list[DownloadProgress] = []
    arrays = load_arrays(
        "cifar10", tmp_path, progress=reports.append, mirrors=[mirror.url]
    )

    train_images, train_labels = _expected(cifar.TRAIN_FILES)
    test_images, test_labels = _expected(cifar.TEST_FILES)
    assert torch.equal(arrays.train_images, train_images)
    assert torch.equal(arrays.train_labels, train_labels)
    assert torch.equal(arrays.test_images, test_images)
    assert torch.equal(arrays.test_labels, test_labels)
    assert arrays.train_images.shape == (5 * RECORDS_PER_FILE, 3, 32, 32)
    assert arrays.train_labels.dtype == torch.int64
    assert arrays.image_shape == DATASET_INFO["cifar10"].image_shape

    assert mirror.requests == [f"/{cifar.ARCHIVE_NAME}"]
    assert {(r.dataset, r.file_name, r.file_index, r.file_count) for r in reports} == {
        ("cifar10", cifar.ARCHIVE_NAME, 1, 1)
    }
    done = [r.bytes_done for r in reports]
    assert done == sorted(done)
    assert done[0] == 0
    assert done[-1] == reports[0].bytes_total == len(ARCHIVE)
    assert len(done) > 2, "the archive should arrive in several chunks"
    assert (tmp_path / cifar.ARCHIVE_NAME).is_file()
    assert sorted(p.name for p in (tmp_path / cifar.FOLDER).iterdir()) == sorted(
        cifar.BATCH_FILES
    )
    assert _leftovers(tmp_path) == []

    # Everything is on disk now: a second load sends no request.
    load_arrays("cifar10", tmp_path, mirrors=[mirror.url])
    assert len(mirror.requests) == 1


def test_channels_are_red_green_blue_planes_in_row_major_order(tmp_path):
    _write_batches(tmp_path)
    arrays = load_arrays("cifar10", tmp_path, download=False)
    image = arrays.train_images[0]
    rows = torch.arange(32).view(32, 1).expand(32, 32).to(torch.uint8)
    assert torch.equal(image[0], rows)  # red: the row index
    assert torch.equal(image[1], rows.T)  # green: the column index
    assert torch.equal(image[2], rows + 200)  # blue: 200 + row
    assert arrays.train_labels[0] == 7
    # The record's bytes straight after the label are red row 0, then red row 1.
    record = BIN_FILES["data_batch_1.bin"][: cifar.RECORD_BYTES]
    assert record[0] == 7
    assert list(record[1:33]) == [0] * 32
    assert list(record[33:65]) == [1] * 32
    assert list(record[1025:1057]) == list(range(32))


def test_cancel_mid_download_removes_the_partial_file(tmp_path, mirror, tiny_md5):
    _serve(mirror)
    reports: list[DownloadProgress] = []

    def cancel() -> bool:
        return any(r.bytes_done > 0 for r in reports)

    with pytest.raises(DownloadCancelled, match="cancelled"):
        download_dataset(
            "cifar10",
            tmp_path,
            progress=reports.append,
            cancel=cancel,
            mirrors=[mirror.url],
        )
    assert 0 < reports[-1].bytes_done < reports[-1].bytes_total
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_corrupted_archive_is_rejected_and_not_kept(tmp_path, mirror, tiny_md5):
    body = bytearray(ARCHIVE)
    body[len(body) // 2] ^= 0xFF
    _serve(mirror, bytes(body))
    with pytest.raises(DataError, match="corrupted") as caught:
        load_arrays("cifar10", tmp_path, mirrors=[mirror.url])
    message = str(caught.value)
    assert cifar.ARCHIVE_NAME in message
    assert "MD5" in message
    assert f"{cifar.FOLDER}/" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_no_network_names_the_folder_to_copy_by_hand(tmp_path, monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    with pytest.raises(DataError, match="no network connection") as caught:
        load_arrays("cifar10", tmp_path, mirrors=[_closed_port_url()])
    message = str(caught.value)
    assert "Could not download CIFAR-10" in message
    assert f"holds {cifar.FOLDER}/" in message


def test_env_mirror_folder_placeholder_serves_cifar(
    tmp_path, mirror, monkeypatch, tiny_md5
):
    _serve(mirror, prefix="/CIFAR10/")
    monkeypatch.setenv(MIRROR_ENV, mirror.url + "{folder}/")
    arrays = load_arrays("cifar10", tmp_path)
    assert arrays.test_images.shape == (RECORDS_PER_FILE, 3, 32, 32)
    assert mirror.requests == [f"/CIFAR10/{cifar.ARCHIVE_NAME}"]


def test_an_archive_on_disk_unpacks_without_network(tmp_path, tiny_md5):
    (tmp_path / cifar.ARCHIVE_NAME).write_bytes(ARCHIVE)
    arrays = load_arrays("cifar10", tmp_path, mirrors=[_closed_port_url()])
    assert torch.equal(arrays.test_images, _expected(cifar.TEST_FILES)[0])
    # The batches folder itself names the same data.
    again = load_arrays("cifar10", tmp_path / cifar.FOLDER, download=False)
    assert torch.equal(again.train_images, arrays.train_images)
    assert _leftovers(tmp_path) == []


def test_missing_files_without_download_say_where_they_were_looked_for(tmp_path):
    with pytest.raises(DataMissing) as caught:
        load_arrays("cifar10", tmp_path, download=False)
    message = str(caught.value)
    assert str(tmp_path / cifar.FOLDER) in message
    assert "data_batch_1.bin" in message
    assert "Allow downloading" in message

    files = dict(BIN_FILES)
    del files["data_batch_4.bin"]
    _write_batches(tmp_path, files)
    with pytest.raises(DataMissing, match=r"data_batch_4\.bin") as caught:
        load_arrays("cifar10", tmp_path, download=False)
    assert "data_batch_1.bin" not in str(caught.value)


def test_a_damaged_archive_on_disk_is_named(tmp_path, tiny_md5):
    (tmp_path / cifar.ARCHIVE_NAME).write_bytes(ARCHIVE[:-10])
    with pytest.raises(DataMissing, match="did not pass the MD5 check"):
        load_arrays("cifar10", tmp_path, download=False)


def test_an_archive_without_a_batch_file_is_named(tmp_path, monkeypatch):
    files = dict(BIN_FILES)
    del files["test_batch.bin"]
    body = _archive(files)
    monkeypatch.setattr(cifar, "ARCHIVE_MD5", hashlib.md5(body).hexdigest())
    (tmp_path / cifar.ARCHIVE_NAME).write_bytes(body)
    with pytest.raises(DataError, match=r"lacks test_batch\.bin"):
        load_arrays("cifar10", tmp_path, download=False)


def test_an_archive_member_that_is_a_link_is_not_followed(tmp_path, monkeypatch):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, body in BIN_FILES.items():
            info = tarfile.TarInfo(f"{cifar.FOLDER}/{name}")
            if name == "data_batch_2.bin":
                info.type = tarfile.SYMTYPE
                info.linkname = "/etc/passwd"
            else:
                info.size = len(body)
            tar.addfile(info, None if info.issym() else io.BytesIO(body))
    body = buffer.getvalue()
    monkeypatch.setattr(cifar, "ARCHIVE_MD5", hashlib.md5(body).hexdigest())
    (tmp_path / cifar.ARCHIVE_NAME).write_bytes(body)
    with pytest.raises(DataError, match=r"lacks data_batch_2\.bin"):
        load_arrays("cifar10", tmp_path, download=False)
    assert not (tmp_path / cifar.FOLDER / "data_batch_2.bin").exists()


@pytest.mark.parametrize(
    "damage",
    [lambda body: body[:-1], lambda body: body + b"\0", lambda body: b""],
    ids=["one-byte-short", "one-byte-extra", "empty"],
)
def test_a_truncated_batch_file_is_a_data_error_naming_it(tmp_path, damage):
    folder = _write_batches(tmp_path)
    path = folder / "data_batch_3.bin"
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(DataError, match="is damaged") as caught:
        load_arrays("cifar10", tmp_path, download=False)
    assert str(path) in str(caught.value)


def test_a_label_outside_the_ten_classes_is_a_data_error(tmp_path):
    folder = _write_batches(tmp_path)
    body = bytearray(BIN_FILES["test_batch.bin"])
    body[cifar.RECORD_BYTES] = 10  # the second record's label
    (folder / "test_batch.bin").write_bytes(bytes(body))
    with pytest.raises(DataError, match=r"test_batch\.bin is not CIFAR-10 data"):
        load_arrays("cifar10", tmp_path, download=False)


def test_loading_never_unpickles(tmp_path, monkeypatch, tiny_md5):
    def refuse(*args, **kwargs):
        raise AssertionError("CIFAR-10 must load without pickle")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    (tmp_path / cifar.ARCHIVE_NAME).write_bytes(ARCHIVE)
    arrays = load_arrays("cifar10", tmp_path, download=False)
    assert len(arrays.train_labels) == 5 * RECORDS_PER_FILE


@pytest.mark.parametrize("loader", ["fast", "dataloader"])
def test_both_loader_kinds_deliver_normalised_colour_batches(tmp_path, loader):
    _write_batches(tmp_path)
    cfg = TrainConfig(
        dataset="cifar10", data_dir=str(tmp_path), download=False, loader=loader
    )
    cfg = cfg.replace(batch_size=4, seed=3)
    loaders = build_loaders(cfg, "cpu")
    x, y = next(iter(loaders.train))
    assert x.shape == (4, 3, 32, 32)
    assert x.dtype == torch.float32
    assert y.dtype == torch.int64
    assert loaders.info.name == "cifar10"
    assert loaders.val_images is not None
    assert tuple(loaders.val_images.shape) == (RECORDS_PER_FILE, 3, 32, 32)

    # Every batch is (pixel / 255 - mean) / std of the stored pixels, per channel.
    info = DATASET_INFO["cifar10"]
    train_images, train_labels = _expected(cifar.TRAIN_FILES)
    order = loaders.train.epoch_order()[:4]
    expected = info.normalise(train_images[order].float() / 255)
    torch.testing.assert_close(x, expected)
    assert torch.equal(y, train_labels[order])
