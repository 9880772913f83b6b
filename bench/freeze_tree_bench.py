"""How long the freeze tree takes to show a model: ``FreezePanel.set_model``.

Builds each model once (not timed), then times ``--repeats`` calls of
``set_model`` on an offscreen panel and prints the median in milliseconds.
Target (issue 14): ``resnet50`` (161 parameter tensors) under 100 ms.

Run: ``.venv/bin/python bench/freeze_tree_bench.py`` (a few seconds).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torchvision
from PySide6.QtWidgets import QApplication
from torch import nn

from workbench.core.models.builtins import build_model
from workbench.ui.panels.freeze import FreezePanel


def _models() -> dict[str, nn.Module]:
    return {
        "small-cnn": build_model("small-cnn", 10, seed=0),
        "resnet50": torchvision.models.resnet50(weights=None),
    }


def main(argv: list[str] | None = None) -> int:
    """Print the median ``set_model`` time per model."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    app = QApplication.instance() or QApplication([])
    panel = FreezePanel()
    panel.resize(420, 700)
    panel.show()
    for name, model in _models().items():
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            panel.set_model(model)
            app.processEvents()  # the layout and paint the user waits for
            times.append((time.perf_counter() - start) * 1000)
        rows = len(panel.parameter_items())
        sys.stdout.write(
            f"{name:10s} {rows:4d} parameter rows  set_model median "
            f"{statistics.median(times):6.1f} ms  (min {min(times):.1f}, "
            f"max {max(times):.1f}, n={args.repeats})\n"
        )
    panel.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
