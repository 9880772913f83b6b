"""Regenerate ``assets/screenshot.png``: the window in the middle of a run.

Trains the default small CNN on the bundled digits (offline, a few seconds),
with its first conv block frozen so the freeze tree shows a partial mask, and
grabs the window while the run is still going: plots with data, the progress
bar with its ETA, Pause and Stop enabled. ``--size`` picks the window size and
``--tab draw`` shows the Draw tab instead of the curves.

Run: ``.venv/bin/python scripts/make_screenshot.py [--out assets/screenshot.png]``
(offscreen; no display needed). The window at two sizes::

    scripts/make_screenshot.py --size 1600x1000 --out assets/window-1600x1000.png
    scripts/make_screenshot.py --size 1024x700 --tab draw \\
        --out assets/window-1024x700-draw.png
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from workbench.core.config import TrainConfig  # noqa: E402
from workbench.core.events import StepMetrics  # noqa: E402
from workbench.core.models.builtins import build_model  # noqa: E402
from workbench.ui.window import state as window_state  # noqa: E402

log = logging.getLogger("make_screenshot")

SIZE = (1500, 920)
# Freeze the first conv block so the tree shows a partial mask.
_FIRST_BLOCK = next(name for name, _ in build_model("small-cnn").named_children())
CONFIG = TrainConfig(
    dataset="digits",
    model="small-cnn",
    batch_size=96,
    log_every=2,
    frozen=(_FIRST_BLOCK,),
)


def main() -> int:
    """Train until ~80% of the run, grab the window, stop, save the PNG."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "assets" / "screenshot.png"))
    ap.add_argument(
        "--at", type=float, default=0.8, help="grab at this share of the run"
    )
    ap.add_argument(
        "--size", default="x".join(map(str, SIZE)), help="window WIDTHxHEIGHT"
    )
    ap.add_argument(
        "--tab", choices=("curves", "draw"), default="curves", help="tab to show"
    )
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    window_state.use_settings_file(Path(tempfile.mkdtemp()) / "settings.ini")
    app = QApplication.instance() or QApplication([])
    from workbench.ui.main_window import MainWindow

    window = MainWindow()
    width, height = (int(n) for n in args.size.lower().split("x"))
    window.resize(width, height)
    if args.tab == "draw":
        window.tabs.setCurrentWidget(window.draw_page)
    window.apply_config(CONFIG)
    window.show()
    loop = QEventLoop()
    grabbed: list[bool] = []

    def wait_for_data() -> None:
        if not window.data_panel.is_loaded():
            QTimer.singleShot(50, wait_for_data)
            return
        window.start()

    def on_event(ev: object) -> None:
        if not isinstance(ev, StepMetrics):
            return
        step, total = ev.global_step, ev.total_steps
        if grabbed or step < args.at * total:
            return
        grabbed.append(True)
        # Let the plots draw what they have, then take the picture.
        for plot in window.curves.plots:
            plot.refresh()
        if args.tab == "draw":  # a test digit on the canvas, read by the live model
            arrays = window.data_panel.cache.get(CONFIG.dataset, None)
            if arrays is not None:
                window.draw_panel.open_in_canvas(arrays.test_images[7].numpy())
        QTimer.singleShot(200, grab)

    def grab() -> None:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        if not window.grab().save(str(out)):
            raise SystemExit(f"could not write {out}")
        log.info("wrote %s (%s)", out, window.status_label.text())
        window.stop()

    window.controller.event.connect(on_event)
    window.controller.run_finished.connect(loop.quit)
    QTimer.singleShot(0, wait_for_data)
    loop.exec()
    window.close()
    app.processEvents()
    return 0 if grabbed else 1


if __name__ == "__main__":
    sys.exit(main())
