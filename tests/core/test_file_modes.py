"""Files the user saves get the mode any other new file gets (the umask's).

Atomic writes go through a private temporary file (``mkstemp``: 0600); the
file that lands used to keep that, unlike every other file the user saves.
"""

from __future__ import annotations

import os
import stat

import pytest

from workbench.cli.commands import main
from workbench.core.atomic_files import write_atomically
from workbench.core.config import TrainConfig, save_config


@pytest.fixture
def umask():
    """Set the umask for the test; the old one after."""
    previous = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(previous)


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_script_the_user_saves_is_readable_like_their_other_files(tmp_path, umask):
    config = tmp_path / "run.json"
    save_config(TrainConfig(model="mlp"), config)
    assert main(["script", str(config), "--out", str(tmp_path / "run.py")]) == 0
    assert mode(tmp_path / "run.py") == 0o644
    assert mode(tmp_path / "run.py") == mode(config)


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_a_new_file_follows_the_umask(tmp_path, umask, mask):
    umask(mask)
    path = write_atomically(tmp_path / "new.pt", lambda handle: handle.write(b"x"))
    assert mode(path) == 0o666 & ~mask


def test_a_replaced_file_keeps_its_own_mode(tmp_path, umask):
    path = tmp_path / "checkpoint.pt"
    path.write_bytes(b"old")
    path.chmod(0o600)  # the user made it private: a save keeps it so
    write_atomically(path, lambda handle: handle.write(b"new"))
    assert (path.read_bytes(), mode(path)) == (b"new", 0o600)
