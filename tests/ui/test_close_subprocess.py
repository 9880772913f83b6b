"""Closing the window mid-run, in a real process: exit code 0, no QThread abort."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.slow]

SCRIPT = textwrap.dedent(
    """
    import sys, time
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication
    from workbench.ui.window import state as window_state
    window_state.use_settings_file(sys.argv[1])
    app = QApplication([])
    from workbench.core.config import TrainConfig
    from workbench.core.events import StepMetrics
    from workbench.ui.main_window import MainWindow
    win = MainWindow()
    win.apply_config(TrainConfig(model="mlp", batch_size=64, epochs=100, log_every=1))
    win.show()
    closed = []
    def on_event(ev):
        if isinstance(ev, StepMetrics) and not closed:
            closed.append(time.monotonic())
            win.close()
    win.controller.event.connect(on_event)
    QTimer.singleShot(0, win.start)
    code = app.exec()
    print(f"closed-in {time.monotonic() - closed[0]:.2f}", flush=True)
    sys.exit(code)
    """
)


def test_close_during_a_run_exits_cleanly(tmp_path):
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PTCORE_DATA_DIR": str(tmp_path),
    }
    root = Path(__file__).resolve().parents[2]
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "s.ini")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Destroyed while thread" not in proc.stderr
    seconds = float(proc.stdout.split("closed-in")[1])
    assert seconds < 5, proc.stdout
    assert time.monotonic() - started < 120
