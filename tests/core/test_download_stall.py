"""A server that trickles bytes is given up on, and Cancel is heard as they come.

The server on 127.0.0.1 promises a large file, then sends 100 bytes every
50 ms (a read never times out). The stall window is shortened to a second.
"""

from __future__ import annotations

import http.server
import threading
import time

import pytest
import torch
import torchvision

from workbench.core.data import download
from workbench.core.data.registry import DownloadCancelled
from workbench.core.models import pretrained
from workbench.core.models.pretrained import WeightsError, load_pretrained_state

MEMBER = torchvision.models.ResNet18_Weights.IMAGENET1K_V1
TRICKLE_FOR_S = 8.0  # then the server hangs up: a test never waits for ever


class _Trickle(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(40 * 1024 * 1024))
        self.end_headers()
        ends = time.monotonic() + TRICKLE_FOR_S
        try:
            while time.monotonic() < ends:
                self.wfile.write(b"\0" * 100)
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:
            pass  # the client gave up, as it should

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def trickle(tmp_path, monkeypatch):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch-home"))
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    monkeypatch.setenv(
        pretrained.MIRROR_ENV, f"http://127.0.0.1:{server.server_address[1]}"
    )
    monkeypatch.setattr(download, "STALL_WINDOW_S", 1.0)
    yield
    server.shutdown()
    server.server_close()


def test_a_trickling_weights_server_is_given_up_as_stalled(trickle):
    started = time.monotonic()
    with pytest.raises(
        WeightsError,
        match=r"cannot be downloaded \(stalled: [\d,]+ bytes in the last 1 s",
    ):
        load_pretrained_state(MEMBER)
    assert time.monotonic() - started < TRICKLE_FOR_S  # not when the server hung up
    assert not any(pretrained.cache_dir().glob("*"))  # nothing half kept


def test_cancel_is_heard_while_bytes_trickle_in(trickle, monkeypatch):
    monkeypatch.setattr(download, "STALL_WINDOW_S", 60.0)  # only Cancel ends it
    seen = []
    with pytest.raises(DownloadCancelled):
        load_pretrained_state(
            MEMBER,
            progress=lambda p: seen.append(p.bytes_done),
            cancel=lambda: len(seen) > 3,  # the user pressed Stop after a few
        )
    assert max(seen) < 1000  # heard within a few hundred bytes, not a 64 KB chunk
