"""Pretrained weights: torch's hub cache, a checked download, and a safe load.

No test reaches the internet: the weights file is made here from a freshly
built 1,000-class resnet18, put in a temporary ``$TORCH_HOME``, or served by an
HTTP server on 127.0.0.1 that ``PTCORE_WEIGHTS_MIRROR`` points the download at.
"""

from __future__ import annotations

import functools
import http.server
import os
import pathlib
import re
import shutil
import socket
import threading

import pytest
import torch
import torchvision
from torch import nn

from workbench.core.data.registry import DownloadCancelled
from workbench.core.models import pretrained as weights_cache
from workbench.core.models.builtins import build_model
from workbench.core.models.pretrained import (
    WeightsError,
    cache_dir,
    load_pretrained_state,
)
from workbench.core.models.torchvision_models import build_torchvision

MEMBER = torchvision.models.ResNet18_Weights.IMAGENET1K_V1
FILE_NAME = os.path.basename(MEMBER.url)  # resnet18-f37072fd.pth
SHAPE = (3, 32, 32)


@pytest.fixture(scope="module")
def weights_file(tmp_path_factory) -> pathlib.Path:
    """resnet18's 1,000-class state_dict, saved as torchvision's file would be."""
    torch.manual_seed(0)
    model = torchvision.models.get_model("resnet18", weights=None)
    path = tmp_path_factory.mktemp("published") / FILE_NAME
    torch.save(model.state_dict(), path)
    return path


@pytest.fixture(autouse=True)
def torch_home(tmp_path, monkeypatch) -> pathlib.Path:
    """A fresh ``$TORCH_HOME``; downloads go nowhere unless a test serves them."""
    home = tmp_path / "torch-home"
    monkeypatch.setenv("TORCH_HOME", str(home))
    # torch.hub.get_dir() prefers a directory set_dir() stored over $TORCH_HOME.
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    monkeypatch.setenv(weights_cache.MIRROR_ENV, f"http://127.0.0.1:{_closed_port()}")
    return home


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _in_cache(weights_file: pathlib.Path) -> pathlib.Path:
    target = cache_dir() / FILE_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(weights_file, target)
    return target


def _leftovers() -> list[str]:
    folder = cache_dir()
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_the_cache_is_torch_homes_hub_checkpoints(torch_home):
    assert torch.hub.get_dir() == str(torch_home / "hub")
    assert cache_dir() == torch_home / "hub" / "checkpoints"


# ------------------------------------------------------------------ the cache


def test_a_cached_file_is_loaded_and_the_head_replaced(weights_file):
    _in_cache(weights_file)
    published = torch.load(weights_file, weights_only=True)
    fitted = build_torchvision(
        "resnet18",
        5,
        SHAPE,
        "IMAGENET1K_V1",
        load_state=functools.partial(load_pretrained_state, download=False),
    )
    assert fitted.replaced == "fc"
    assert fitted.head == "fc"
    model = fitted.model
    assert isinstance(model.fc, nn.Linear)
    assert (model.fc.in_features, model.fc.out_features) == (512, 5)
    state = model.state_dict()
    backbone = [k for k in published if not k.startswith("fc.")]
    assert len(backbone) > 100
    for key in backbone:
        assert torch.equal(state[key], published[key]), key
    assert not torch.equal(state["fc.weight"][:5], published["fc.weight"][:5, :])


def test_build_model_uses_the_cache_with_no_network(weights_file):
    _in_cache(weights_file)
    published = torch.load(weights_file, weights_only=True)
    model = build_model(
        "resnet18", 5, seed=0, input_shape=SHAPE, weights="IMAGENET1K_V1"
    )
    assert torch.equal(model.conv1.weight, published["conv1.weight"])
    assert torch.equal(
        model.layer4[1].bn2.running_var, published["layer4.1.bn2.running_var"]
    )
    assert model.fc.out_features == 5
    assert model.head_module == "fc"
    again = build_model("resnet18", 5, seed=0, input_shape=SHAPE, weights="default")
    assert torch.equal(again.fc.weight, model.fc.weight)  # the seeded new head
    model.eval()
    with torch.no_grad():
        assert model(torch.randn(2, *SHAPE)).shape == (2, 5)


class _Payload:
    """Unpickling this would create ``marker``: a file that runs code."""

    def __init__(self, marker: pathlib.Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (pathlib.Path.touch, (self.marker,))


def test_a_file_holding_code_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "code-ran"
    target = cache_dir() / FILE_NAME
    target.parent.mkdir(parents=True)
    torch.save({"conv1.weight": torch.zeros(1), "x": _Payload(marker)}, target)
    with pytest.raises(WeightsError) as info:
        load_pretrained_state(MEMBER, download=False)
    assert not marker.exists()
    assert str(target) in str(info.value)
    assert "not a weights file torch can read safely" in str(info.value)
    with pytest.raises(WeightsError):
        build_model("resnet18", 5, input_shape=SHAPE, weights="IMAGENET1K_V1")
    assert not marker.exists()
    # The file really does run code when unpickled without weights_only.
    torch.load(target, weights_only=False)
    assert marker.exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a torch file at all", "not a weights file torch can read safely"),
        ([1, 2, 3], "does not hold a state_dict of tensors"),
        ({"conv1.weight": 3}, "does not hold a state_dict of tensors"),
    ],
    ids=["garbage", "list", "not-tensors"],
)
def test_a_file_that_is_not_a_state_dict_is_refused(content, message):
    target = cache_dir() / FILE_NAME
    target.parent.mkdir(parents=True)
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        torch.save(content, target)
    with pytest.raises(WeightsError) as info:
        load_pretrained_state(MEMBER, download=False)
    assert message in str(info.value)
    assert str(target) in str(info.value)


# ------------------------------------------------------------------ downloads


class _Server:
    """http.server in a thread, serving one folder on 127.0.0.1."""

    def __init__(self, folder: pathlib.Path) -> None:
        handler = functools.partial(_QuietHandler, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def served(tmp_path, monkeypatch):
    """(folder, server): what is put in ``folder`` is downloaded from there."""
    folder = tmp_path / "server"
    folder.mkdir()
    server = _Server(folder)
    monkeypatch.setenv(weights_cache.MIRROR_ENV, server.url)
    yield folder, server
    server.stop()


@pytest.fixture
def no_hash_check(monkeypatch):
    """The generated file cannot have the SHA-256 torchvision's file name holds.

    torchvision names a file by a prefix of the published file's SHA-256
    (resnet18-f37072fd.pth); a freshly generated state_dict has another hash.
    A pattern that never matches turns the check off for the success paths;
    test_a_damaged_download_is_refused_and_nothing_kept keeps it on.
    """
    monkeypatch.setattr(weights_cache, "_HASH_PREFIX", re.compile(r"(?!)"))


def test_a_download_reports_progress_lands_in_the_cache_and_is_reused(
    weights_file, served, no_hash_check
):
    folder, server = served
    shutil.copyfile(weights_file, folder / FILE_NAME)
    size = weights_file.stat().st_size
    events = []
    model = build_model(
        "resnet18",
        5,
        seed=0,
        input_shape=SHAPE,
        weights="IMAGENET1K_V1",
        progress=events.append,
    )
    assert len(events) > 3
    done = [e.bytes_done for e in events]
    assert done == sorted(done)
    assert done[0] < size
    assert done[-1] == size
    assert {e.bytes_total for e in events} == {size}
    assert {e.file_name for e in events} == {FILE_NAME}
    assert events[0].dataset == "ResNet18_Weights.IMAGENET1K_V1"
    assert _leftovers() == [FILE_NAME]
    assert (cache_dir() / FILE_NAME).read_bytes() == weights_file.read_bytes()
    published = torch.load(weights_file, weights_only=True)
    assert torch.equal(model.conv1.weight, published["conv1.weight"])

    server.stop()
    (folder / FILE_NAME).unlink()
    later = []
    again = build_model(
        "resnet18",
        5,
        seed=0,
        input_shape=SHAPE,
        weights="IMAGENET1K_V1",
        progress=later.append,
    )
    assert later == []  # from the cache: nothing downloaded
    assert torch.equal(again.conv1.weight, published["conv1.weight"])


def test_a_damaged_download_is_refused_and_nothing_kept(weights_file, served):
    # The generated file's SHA-256 does not start with the f37072fd its name holds.
    folder, _ = served
    shutil.copyfile(weights_file, folder / FILE_NAME)
    with pytest.raises(WeightsError) as info:
        build_model("resnet18", 5, input_shape=SHAPE, weights="IMAGENET1K_V1")
    text = str(info.value)
    assert f"The download of {FILE_NAME} from " in text
    assert "is damaged (its SHA-256 does not start with f37072fd)" in text
    assert "nothing was kept" in text
    assert _leftovers() == []


def test_cancel_mid_download_keeps_no_partial_file(weights_file, served, no_hash_check):
    folder, _ = served
    shutil.copyfile(weights_file, folder / FILE_NAME)
    events = []
    with pytest.raises(DownloadCancelled, match="cancelled"):
        build_model(
            "resnet18",
            5,
            input_shape=SHAPE,
            weights="IMAGENET1K_V1",
            progress=events.append,
            cancel=lambda: len(events) >= 3,
        )
    assert len(events) == 3
    assert events[-1].bytes_done < weights_file.stat().st_size
    assert _leftovers() == []


def test_offline_names_the_file_the_url_and_the_folder(torch_home):
    mirror = os.environ[weights_cache.MIRROR_ENV]
    with pytest.raises(WeightsError) as info:
        build_model("resnet18", 5, input_shape=SHAPE, weights="IMAGENET1K_V1")
    text = str(info.value)
    assert "ResNet18_Weights.IMAGENET1K_V1 are not on this computer" in text
    assert f"Put {FILE_NAME} (from {MEMBER.url}) in {cache_dir()}" in text
    assert f"for {mirror}/{FILE_NAME}" in text
    assert "choose weights none" in text
    assert _leftovers() == []


def test_downloads_off_names_the_file_without_trying():
    with pytest.raises(WeightsError) as info:
        load_pretrained_state(MEMBER, download=False)
    assert "(downloads are off)" in str(info.value)
    assert FILE_NAME in str(info.value)
    assert not cache_dir().exists() or _leftovers() == []


def test_a_missing_file_on_the_server_is_a_clear_http_message(served):
    _, server = served
    with pytest.raises(WeightsError) as info:
        build_model("resnet18", 5, input_shape=SHAPE, weights="IMAGENET1K_V1")
    text = str(info.value)
    assert f"HTTP 404 File not found from {server.url}{FILE_NAME}" in text
    assert f"Put {FILE_NAME} (from {MEMBER.url}) in {cache_dir()}" in text
    assert _leftovers() == []


@pytest.mark.slow
def test_a_pretrained_run_says_which_head_it_replaced(weights_file, capsys):
    from workbench.cli.commands import main

    _in_cache(weights_file)
    flags = ["--model", "resnet18", "--weights", "IMAGENET1K_V1", "--max-steps", "1"]
    assert main(["train", "--quiet", *flags]) == 0
    out = capsys.readouterr().out
    assert (
        "note: Pretrained ResNet18_Weights.IMAGENET1K_V1: the classifier head fc "
        "(1,000 ImageNet classes) was replaced by a fresh layer for 10 classes." in out
    )
