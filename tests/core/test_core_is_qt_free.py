from __future__ import annotations

import subprocess
import sys


def test_importing_the_core_and_cli_loads_no_qt():
    code = (
        "import sys, pkgutil, importlib, workbench.core as core, workbench.cli.main\n"
        "for m in pkgutil.iter_modules(core.__path__):\n"
        "    importlib.import_module('workbench.core.' + m.name)\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in "
        "('PySide6', 'pyqtgraph', 'shiboken6'))\n"
        "print(len([m for m in pkgutil.iter_modules(core.__path__)]), bad)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split(maxsplit=1)
    assert int(out[0]) >= 8  # every core module was imported
    assert out[1].strip() == "[]"
