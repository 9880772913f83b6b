"""Regenerate ``assets/evaluation.png``: the Evaluation tab after a short run.

Trains the default small CNN on the bundled digits (offline, a few seconds),
opens the Evaluation tab and selects the largest off-diagonal cell of the last
epoch's confusion matrix, so the gallery shows the images the model gets wrong.

Run: ``.venv/bin/python scripts/make_evaluation_screenshot.py [--out PATH]``
(offscreen; run folders go to a temporary directory).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["PTCORE_RUNS_DIR"] = tempfile.mkdtemp(prefix="runs-")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from workbench.core.config import TrainConfig  # noqa: E402
from workbench.ui.window import state as window_state  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "assets" / "evaluation.png"))
    args = ap.parse_args()
    window_state.use_settings_file(Path(tempfile.mkdtemp()) / "settings.ini")
    app = QApplication.instance() or QApplication([])
    from workbench.ui.main_window import MainWindow

    window = MainWindow()
    window.resize(1500, 920)
    window.apply_config(TrainConfig(dataset="digits", epochs=6))
    window.show()
    while not window.data_panel.is_loaded():
        app.processEvents()
    finished: list[bool] = []
    window.controller.run_finished.connect(lambda _ended: finished.append(True))
    window.start()
    while not finished:
        app.processEvents()
    tabs = window.tabs
    titles = [tabs.tabText(i) for i in range(tabs.count())]
    tabs.setCurrentIndex(titles.index("Evaluation"))
    panel = window.evaluation_panel
    errors = panel.shown_matrix().copy()
    np.fill_diagonal(errors, 0)
    true, predicted = np.unravel_index(errors.argmax(), errors.shape)
    panel.select_cell(int(true), int(predicted))
    for _ in range(30):
        app.processEvents()
    window.grab().save(args.out)
    sys.stdout.write(f"saved {args.out}: cell {true} -> {predicted}\n")
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
