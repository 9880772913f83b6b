"""Fixtures the core tests share: artefacts trained once, own folders, a model file."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.model_files import NET
from tests.postgres_server import start_server
from workbench.core.distributed import env as distributed


@pytest.fixture(scope="session")
def trained_mlp_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An mlp trained one epoch on the bundled digits by ``train`` (6 steps).

    For the tests that only need *a* trained checkpoint to inspect, predict
    with or start from: they read it and never write to it.
    """
    from workbench.cli.commands import main

    folder = tmp_path_factory.mktemp("trained-mlp")
    path = folder / "mlp.pt"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PTCORE_RUNS_DIR", str(folder / "runs"))
        flags = ["train", "--quiet", "--model", "mlp", "--epochs", "1"]
        assert main([*flags, "--save", str(path)]) == 0
    return path


@pytest.fixture
def data_dir(tmp_path_factory, monkeypatch):
    """Decoded-image caches go to a fresh folder, never the user's own."""
    folder = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("PTCORE_DATA_DIR", str(folder))
    return folder


@pytest.fixture
def offline_weights(tmp_path, monkeypatch):
    """No test may reach the network or the user's own hub cache."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch-home"))
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    monkeypatch.setenv("PTCORE_WEIGHTS_MIRROR", "http://127.0.0.1:9/")


@pytest.fixture
def net_file(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(NET, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server on 127.0.0.1 for this session (tests/postgres_server.py)."""
    server, stop = start_server()
    yield server
    stop()


@pytest.fixture
def postgres_url(postgres_server):
    """A fresh database of that server, as a ``postgresql://`` URL."""
    return postgres_server.database()


@pytest.fixture
def peer(monkeypatch):
    """Two ranks: the other one's share, added to this rank's by every sum."""
    share = {}
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setattr(distributed, "active", lambda: True)

    def all_reduce_sum(values):
        return values + torch.tensor(share["values"], dtype=values.dtype)

    monkeypatch.setattr(distributed, "all_reduce_sum", all_reduce_sum)
    return share
