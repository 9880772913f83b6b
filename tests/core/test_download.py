"""download_dataset against a real HTTP server on 127.0.0.1: no internet needed."""

from __future__ import annotations

import hashlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import torch
from torchvision import datasets

from tests.idx_files import gzipped_raw_files, mnist_like_arrays
from workbench.core.data.download import MIRROR_ENV, download_dataset
from workbench.core.data.registry import DataError, DownloadCancelled, DownloadProgress
from workbench.core.data.sources import load_arrays

# 256 noisy training images gzip to more than one 64 KiB chunk.
N_TRAIN = 256
N_TEST = 32
ARCHIVES = gzipped_raw_files(N_TRAIN, N_TEST)


@dataclass
class Mirror:
    """What the test server serves, and what it was asked for."""

    url: str
    files: dict[str, bytes] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    # Claim more bytes than are sent, as a connection dropped mid-file would.
    short_by: int = 0


class _MirrorHandler(BaseHTTPRequestHandler):
    server: _MirrorServer

    def do_GET(self) -> None:
        mirror = self.server.mirror
        mirror.requests.append(self.path)
        body = mirror.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body) + mirror.short_by))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep test output clean


class _MirrorServer(ThreadingHTTPServer):
    daemon_threads = True
    mirror: Mirror

    def handle_error(self, request, client_address) -> None:
        pass  # a client that cancels mid-file breaks the pipe; that is expected


@pytest.fixture
def mirror(monkeypatch) -> Iterator[Mirror]:
    # A proxy from the environment must not intercept the local server.
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    server = _MirrorServer(("127.0.0.1", 0), _MirrorHandler)
    port = server.server_address[1]
    server.mirror = Mirror(url=f"http://127.0.0.1:{port}/")
    # A short poll interval keeps shutdown() quick.
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield server.mirror
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _serve_dataset(mirror: Mirror, monkeypatch, dataset_cls=datasets.MNIST, prefix="/"):
    """Serve the tiny archives and make torchvision expect exactly their MD5 sums."""
    resources = [
        (name, hashlib.md5(body).hexdigest()) for name, body in ARCHIVES.items()
    ]
    monkeypatch.setattr(dataset_cls, "resources", resources)
    mirror.files.update({prefix + name: body for name, body in ARCHIVES.items()})


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


def _leftovers(raw_dir: Path) -> list[str]:
    return sorted(p.name for p in raw_dir.glob("*.part")) if raw_dir.exists() else []


def test_download_unpacks_and_loads_with_growing_progress(
    tmp_path, mirror, monkeypatch
):
    _serve_dataset(mirror, monkeypatch)
    reports: list[DownloadProgress] = []
    arrays = load_arrays(
        "mnist", tmp_path, progress=reports.append, mirrors=[mirror.url]
    )

    images, labels = mnist_like_arrays(N_TRAIN, seed=0)
    assert torch.equal(arrays.train_images, torch.from_numpy(images))
    assert torch.equal(arrays.train_labels, torch.from_numpy(labels).long())
    raw_dir = tmp_path / "MNIST" / "raw"
    for name in ARCHIVES:
        assert (raw_dir / name).is_file()
        assert (raw_dir / name.removesuffix(".gz")).is_file()
    assert _leftovers(raw_dir) == []

    assert {r.file_index for r in reports} == {1, 2, 3, 4}
    assert {(r.dataset, r.file_count) for r in reports} == {("mnist", 4)}
    train_images = [r for r in reports if r.file_name == "train-images-idx3-ubyte.gz"]
    done = [r.bytes_done for r in train_images]
    assert done == sorted(done)
    assert done[0] == 0
    assert (
        done[-1]
        == train_images[0].bytes_total
        == len(ARCHIVES[train_images[0].file_name])
    )
    assert len(done) > 2, "the training images should arrive in several chunks"


def test_env_mirror_is_used_when_no_mirror_is_given(tmp_path, mirror, monkeypatch):
    _serve_dataset(mirror, monkeypatch)
    monkeypatch.setenv(MIRROR_ENV, mirror.url.rstrip("/"))
    arrays = load_arrays("mnist", tmp_path)
    assert arrays.test_images.shape == (N_TEST, 28, 28)
    assert mirror.requests[0] == "/train-images-idx3-ubyte.gz"


def test_env_mirror_folder_placeholder_serves_each_dataset(
    tmp_path, mirror, monkeypatch
):
    _serve_dataset(mirror, monkeypatch, datasets.KMNIST, prefix="/KMNIST/raw/")
    monkeypatch.setenv(MIRROR_ENV, mirror.url + "{folder}/raw/")
    arrays = load_arrays("kmnist", tmp_path)
    assert arrays.train_images.shape == (N_TRAIN, 28, 28)
    assert all(path.startswith("/KMNIST/raw/") for path in mirror.requests)


def test_files_already_present_are_not_downloaded_again(tmp_path, mirror, monkeypatch):
    _serve_dataset(mirror, monkeypatch)
    download_dataset("mnist", tmp_path, mirrors=[mirror.url])
    assert len(mirror.requests) == 4
    raw_dir = tmp_path / "MNIST" / "raw"
    # Valid archives without their unpacked files are unpacked, not fetched again.
    (raw_dir / "t10k-images-idx3-ubyte").unlink()
    download_dataset("mnist", tmp_path, mirrors=[mirror.url])
    assert len(mirror.requests) == 4
    assert (raw_dir / "t10k-images-idx3-ubyte").is_file()


def test_cancel_mid_file_removes_the_partial_file(tmp_path, mirror, monkeypatch):
    _serve_dataset(mirror, monkeypatch)
    reports: list[DownloadProgress] = []

    def cancel() -> bool:
        return any(r.bytes_done > 0 for r in reports)

    with pytest.raises(DownloadCancelled, match="cancelled"):
        download_dataset(
            "mnist",
            tmp_path,
            progress=reports.append,
            cancel=cancel,
            mirrors=[mirror.url],
        )
    raw_dir = tmp_path / "MNIST" / "raw"
    assert 0 < reports[-1].bytes_done < reports[-1].bytes_total
    assert sorted(p.name for p in raw_dir.iterdir()) == []


def test_cancel_before_start_sends_no_request(tmp_path, mirror, monkeypatch):
    _serve_dataset(mirror, monkeypatch)
    with pytest.raises(DownloadCancelled):
        download_dataset("mnist", tmp_path, cancel=lambda: True, mirrors=[mirror.url])
    assert mirror.requests == []


def test_corrupted_download_is_a_data_error(tmp_path, mirror, monkeypatch):
    _serve_dataset(mirror, monkeypatch)
    body = bytearray(ARCHIVES["train-labels-idx1-ubyte.gz"])
    body[-1] ^= 0xFF
    mirror.files["/train-labels-idx1-ubyte.gz"] = bytes(body)
    with pytest.raises(DataError, match="corrupted") as caught:
        load_arrays("mnist", tmp_path, mirrors=[mirror.url])
    assert "train-labels-idx1-ubyte.gz" in str(caught.value)
    raw_dir = tmp_path / "MNIST" / "raw"
    assert not (raw_dir / "train-labels-idx1-ubyte.gz").exists()
    assert _leftovers(raw_dir) == []


def test_no_network_suggests_the_offline_dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    with pytest.raises(DataError, match="no network connection") as caught:
        load_arrays("fashion-mnist", tmp_path, mirrors=[_closed_port_url()])
    message = str(caught.value)
    assert "Could not download Fashion-MNIST" in message
    assert "--dataset digits" in message
    assert "FashionMNIST/raw/" in message
    assert _leftovers(tmp_path / "FashionMNIST" / "raw") == []


def test_next_mirror_is_tried_when_one_fails(tmp_path, mirror, monkeypatch):
    _serve_dataset(mirror, monkeypatch)
    arrays = load_arrays("mnist", tmp_path, mirrors=[_closed_port_url(), mirror.url])
    assert arrays.train_images.shape == (N_TRAIN, 28, 28)


def test_missing_file_on_the_server_names_the_http_status(
    tmp_path, mirror, monkeypatch
):
    _serve_dataset(mirror, monkeypatch)
    del mirror.files["/t10k-images-idx3-ubyte.gz"]
    with pytest.raises(DataError, match="HTTP 404") as caught:
        download_dataset("mnist", tmp_path, mirrors=[mirror.url])
    assert "t10k-images-idx3-ubyte.gz" in str(caught.value)


def test_connection_dropped_mid_file_is_a_network_error(tmp_path, mirror, monkeypatch):
    _serve_dataset(mirror, monkeypatch)
    mirror.short_by = 100
    with pytest.raises(
        DataError, match=r"network connection broke off \(connection closed after"
    ):
        download_dataset("mnist", tmp_path, mirrors=[mirror.url])
    assert _leftovers(tmp_path / "MNIST" / "raw") == []
