"""Regenerate ``assets/draw.png``: the Draw tab after teaching the model.

Trains the default small CNN on the bundled digits (offline), adds 40 "my digits"
written mirrored (handwriting it has never seen) through the panel, fine-tunes
on them with the Fine-tune button, then draws a 7 with mouse strokes and grabs
the window: the reading, the model's-eye preview with saliency, the thumbnails
and the before/after card.

Run: ``.venv/bin/python scripts/make_draw_screenshot.py [--out assets/draw.png]``
(offscreen; no display needed; drawings go to a temporary folder).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["PTCORE_MY_DIGITS_DIR"] = tempfile.mkdtemp(prefix="my-digits-")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from workbench.core.config import TrainConfig  # noqa: E402
from workbench.ui.window import state as window_state  # noqa: E402

SIZE = (1500, 920)
SEVEN = [(90, 70), (150, 66), (205, 70), (180, 120), (155, 175), (140, 225)]


def mirrored_digits(per_class: int) -> list[tuple[np.ndarray, int]]:
    """UCI digits written mirrored, on a 280x280 canvas."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    out = []
    for label in range(10):
        for i in np.flatnonzero(bunch.target == label)[-per_class:]:
            canvas = np.zeros((280, 280), np.float32)
            image = (bunch.images[i] / 16.0)[:, ::-1]
            canvas[20:260, 20:260] = np.kron(image, np.ones((30, 30)))
            out.append((canvas, label))
    return out


def wait(app: QApplication, done) -> None:
    while not done():
        app.processEvents()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "assets" / "draw.png"))
    args = ap.parse_args()
    window_state.use_settings_file(Path(tempfile.mkdtemp()) / "settings.ini")
    app = QApplication.instance() or QApplication([])
    from workbench.ui.main_window import MainWindow

    window = MainWindow()
    window.resize(*SIZE)
    window.apply_config(TrainConfig(dataset="digits"))
    window.show()
    wait(app, window.data_panel.is_loaded)
    finished: list[bool] = []
    window.controller.run_finished.connect(lambda _ended: finished.append(True))
    window.start()
    wait(app, lambda: finished)

    window.tabs.setCurrentWidget(window.draw_page)
    panel = window.draw_panel
    for image, label in mirrored_digits(per_class=4):
        panel.open_in_canvas(image)
        panel.label_combo.setCurrentIndex(label)
        panel.add_sample()
    reported: list[bool] = []
    window.controller.fine_tune_scored.connect(lambda *_scores: reported.append(True))
    panel.fine_tune_button.click()
    wait(app, lambda: reported)

    canvas = panel.canvas
    side = min(canvas.width(), canvas.height())
    ox, oy = (canvas.width() - side) // 2, (canvas.height() - side) // 2
    points = [QPoint(ox + x * side // 280, oy + y * side // 280) for x, y in SEVEN]
    QTest.mousePress(canvas, Qt.LeftButton, Qt.NoModifier, points[0])
    for point in points[1:]:
        QTest.mouseMove(canvas, point)
    QTest.mouseRelease(canvas, Qt.LeftButton, Qt.NoModifier, points[-1])
    for _ in range(20):
        app.processEvents()
    window.grab().save(args.out)
    sys.stdout.write(f"saved {args.out}: reads {panel.prediction_label.text()!r}\n")
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
