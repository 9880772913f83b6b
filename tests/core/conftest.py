"""Fixtures shared by the core tests: artefacts trained once per session."""

from __future__ import annotations

from pathlib import Path

import pytest


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
