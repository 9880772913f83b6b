"""The core and the command line in a fresh interpreter: no Qt, no torchvision."""

from __future__ import annotations

import os
import sys

import pytest

from tests import prefetch

IMPORT_ALL = (
    "import sys, pkgutil, importlib, workbench.core as core, workbench.cli as cli\n"
    "names = [m.name for p in (core, cli)\n"
    "         for m in pkgutil.walk_packages(p.__path__, p.__name__ + '.')]\n"
    "for name in names:\n"
    "    importlib.import_module(name)\n"
    "bad = sorted(n for n in sys.modules if n.split('.')[0] in "
    "('PySide6', 'pyqtgraph', 'shiboken6'))\n"
    "print(len(names), bad)\n"
)
TRAIN_DIGITS = (
    "import sys\n"
    "from workbench.cli.commands import main\n"
    "code = main(['train', '--quiet', '--model', 'mlp', '--max-steps', '1'])\n"
    "print(code, 'torchvision' in sys.modules)\n"
)


@prefetch.plan("fresh_interpreters")
def fresh_interpreters_plan(tmp):
    """Each check in a new interpreter: what gets imported at all."""
    env = {**os.environ, "PTCORE_RUNS_DIR": str(tmp / "runs")}
    env["PTCORE_DATA_DIR"] = str(tmp / "data")
    done = yield {
        name: prefetch.Command([sys.executable, "-c", code], env)
        for name, code in (("import-all", IMPORT_ALL), ("train", TRAIN_DIGITS))
    }
    return done


@pytest.fixture(scope="module")
def fresh_interpreters(prefetched):
    return prefetched.result(fresh_interpreters_plan)


@pytest.mark.slow
def test_importing_the_core_and_cli_loads_no_qt(fresh_interpreters):
    done = fresh_interpreters["import-all"]
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout.split(maxsplit=1)
    assert int(out[0]) >= 90  # every module of the core and the cli, subpackages too
    assert out[1].strip() == "[]"


@pytest.mark.slow
def test_training_the_bundled_digits_headless_never_imports_torchvision(
    fresh_interpreters,
):
    """torchvision costs a process about 3 s to import: only its users pay it."""
    done = fresh_interpreters["train"]
    assert done.stdout.splitlines()[-1].split() == ["0", "False"], done.stderr[-2000:]
