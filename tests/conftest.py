"""Fixtures shared by the core and UI tests: small, learnable, offline data."""

from __future__ import annotations

import gc
import os

import pytest
import torch

from tests import small_disk as small_disk_module

# Set before anything imports Qt; tests never need a real screen.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def make_arrays(n_train: int = 256, n_test: int = 128, seed: int = 0):
    """Learnable ImageArrays built from the tiny IDX test data's generator."""
    from tests.idx_files import mnist_like_arrays
    from workbench.core.data.registry import ImageArrays

    train_x, train_y = mnist_like_arrays(n_train, seed)
    test_x, test_y = mnist_like_arrays(n_test, seed + 1)
    return ImageArrays(
        torch.from_numpy(train_x),
        torch.from_numpy(train_y).long(),
        torch.from_numpy(test_x),
        torch.from_numpy(test_y).long(),
    )


@pytest.fixture(scope="session", autouse=True)
def prefetched(request, tmp_path_factory):
    """Plans of the selected modules, started when the session starts."""
    from tests import prefetch

    prefetcher = prefetch.Prefetcher(tmp_path_factory.mktemp)
    prefetch.ACTIVE = prefetcher
    prefetcher.start_selected(request.session.items)
    yield prefetcher
    prefetch.ACTIVE = None
    prefetcher.close()


def pytest_collection_modifyitems(session, config, items):
    """Modules with plans go last: their commands get the most time to finish."""
    from tests import prefetch

    items.sort(
        key=lambda item: prefetch.has_plans(getattr(item.module, "__name__", ""))
    )


def pytest_collection_finish(session):
    """Freeze what collection made (torch, Qt, every test module): it lives to
    the end, and the collector's full passes then scan only what tests make."""
    gc.collect()
    gc.freeze()


def pytest_runtest_logfinish(nodeid, location):
    """Between tests, hand finished waves on and start what waits."""
    from tests import prefetch

    if prefetch.ACTIVE is not None:
        prefetch.ACTIVE.pump()


@pytest.fixture(scope="session")
def warm_python():
    """Commands run as forks of a Python that has imported torch already."""
    from tests.warm_python import WarmPythons

    pythons = WarmPythons()
    yield pythons
    pythons.close()


@pytest.fixture
def small_disk(tmp_path):
    """A real 2 MB file system the test can fill (tests/small_disk.py)."""
    disk = small_disk_module.mount(tmp_path / "disk", "2m")
    yield disk
    small_disk_module.unmount(disk)


@pytest.fixture(scope="session")
def tiny_arrays():
    """Synthetic image arrays (256 train, 128 test), built once per session."""
    return make_arrays()


@pytest.fixture(autouse=True)
def my_digits_dir(tmp_path_factory, monkeypatch):
    """Drawings saved by a test go to a fresh folder, never the user's own."""
    folder = tmp_path_factory.mktemp("my-digits")
    monkeypatch.setenv("PTCORE_MY_DIGITS_DIR", str(folder))
    return folder


@pytest.fixture(autouse=True)
def fixes_root(tmp_path_factory, monkeypatch):
    """Fix overlays go to a fresh folder, never the user's own."""
    folder = tmp_path_factory.mktemp("fixes")
    monkeypatch.setenv("PTCORE_FIXES_DIR", str(folder))
    return folder


@pytest.fixture(autouse=True)
def runs_root(tmp_path_factory, monkeypatch):
    """Run folders (autosaves) go to a fresh folder, never the user's own."""
    folder = tmp_path_factory.mktemp("runs")
    monkeypatch.setenv("PTCORE_RUNS_DIR", str(folder))
    return folder


# A skip reason starting with this is listed at the end of every test session:
# a test that never ran for want of its data must not pass unnoticed.
MISSING_DATA = "missing test data"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Name every test skipped for missing data, whatever the -r options."""
    missing = []
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        if reason.startswith(MISSING_DATA):
            missing.append((report.nodeid, reason))
    if not missing:
        return
    terminalreporter.write_sep("=", "NOT RUN: test data missing", yellow=True)
    for nodeid, reason in missing:
        terminalreporter.write_line(f"SKIPPED {nodeid} - {reason}", yellow=True)
