from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_importing_the_core_and_cli_loads_no_qt():
    code = (
        "import sys, pkgutil, importlib, workbench.core as core, workbench.cli as cli\n"
        "names = [m.name for p in (core, cli)\n"
        "         for m in pkgutil.walk_packages(p.__path__, p.__name__ + '.')]\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in "
        "('PySide6', 'pyqtgraph', 'shiboken6'))\n"
        "print(len(names), bad)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split(maxsplit=1)
    assert int(out[0]) >= 90  # every module of the core and the cli, subpackages too
    assert out[1].strip() == "[]"


@pytest.mark.slow
def test_training_the_bundled_digits_headless_never_imports_torchvision(tmp_path):
    """torchvision costs a process about 3 s to import: only its users pay it."""
    code = (
        "import sys\n"
        "from workbench.cli.commands import main\n"
        "code = main(['train', '--quiet', '--model', 'mlp', '--max-steps', '1'])\n"
        "print(code, 'torchvision' in sys.modules)\n"
    )
    env = {**os.environ, "PTCORE_RUNS_DIR": str(tmp_path / "runs")}
    env["PTCORE_DATA_DIR"] = str(tmp_path / "data")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    )
    assert out.stdout.splitlines()[-1].split() == ["0", "False"], out.stderr[-2000:]
