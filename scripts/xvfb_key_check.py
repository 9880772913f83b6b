"""Real key presses and mouse strokes in a real X window (Xvfb + xdotool).

Offscreen, Qt delivers no key press to a window that is not active, so the
tests drive actions with ``trigger()``. This script checks what those tests
cannot: that the Draw tab's keys work from the real keyboard, after Ctrl+2,
wherever the focus is, and are dead while another tab is shown; that the
Model panel's Find box takes a click, typing and Return; that the Training
panel's Early stop takes a typed patience, Best epoch by a chosen metric and
Folds a typed K (1: Off);
that Ctrl+6 shows the Code tab and its Copy button takes a real click; and
that Ctrl+E
(Export model…) stays inert without a run. Run it as::

    xvfb-run -a .venv/bin/python scripts/xvfb_key_check.py [--shots DIR]

(Debian: ``apt install xvfb xdotool`` and the xcb libraries the README lists.)
It prints one line per check and exits 1 if any fails. With no window
manager, ``xdotool windowfocus`` (not ``windowactivate``) gives the focus.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from PySide6.QtCore import QPoint, QTimer
from PySide6.QtWidgets import QApplication

from workbench.ui.window import state as window_state

STEP_MS = 400  # between actions: X events reach Qt, Qt repaints


def xdotool(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shots", help="save a screenshot after each check here")
    args = ap.parse_args()
    if not os.environ.get("DISPLAY") or shutil.which("xdotool") is None:
        print("needs an X display (xvfb-run) and xdotool", file=sys.stderr)
        return 2
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    window_state.use_settings_file(Path(tempfile.mkdtemp()) / "settings.ini")
    app = QApplication([])
    from workbench.ui.main_window import MainWindow

    window = MainWindow()
    window.resize(1500, 920)
    window.show()
    panel = window.draw_panel
    wid = str(int(window.winId()))
    results: list[tuple[str, bool]] = []
    shots = Path(args.shots) if args.shots else None

    def check(name: str, ok: bool) -> None:
        results.append((name, ok))
        print(f"{'ok  ' if ok else 'FAIL'} {name}", flush=True)
        if shots is not None:
            shots.mkdir(parents=True, exist_ok=True)
            window.grab().save(str(shots / f"{len(results):02d}.png"))

    def stroke_on_canvas() -> None:
        canvas = panel.canvas
        top_left = canvas.mapToGlobal(QPoint(0, 0))
        w, h = canvas.width(), canvas.height()
        points = [(0.5, 0.15), (0.5, 0.5), (0.5, 0.85)]
        x, y = (
            top_left.x() + int(w * points[0][0]),
            top_left.y() + int(h * points[0][1]),
        )
        xdotool("mousemove", str(x), str(y), "mousedown", "1")
        for fx, fy in points[1:]:
            xdotool(
                "mousemove",
                str(top_left.x() + int(w * fx)),
                str(top_left.y() + int(h * fy)),
            )
        xdotool("mouseup", "1")

    def steps() -> Iterator[Callable[[], None] | None]:
        xdotool("windowfocus", "--sync", wid)
        yield None
        window.training_panel.lr_spin.setFocus()  # focus far from the canvas
        yield None
        xdotool("key", "ctrl+2")
        yield None
        check(
            "Ctrl+2 shows the Draw tab", window.tabs.currentWidget() is window.draw_page
        )
        check("the canvas takes the focus", panel.canvas.hasFocus())
        xdotool("key", "7")
        yield None
        check(
            "key 7 sets the label", panel.add_button.text() == "Add to my digits as 7"
        )
        stroke_on_canvas()
        yield None
        check("a mouse stroke is read", panel.reading is not None)
        xdotool("key", "Escape")
        yield None
        check("Esc clears the canvas", panel.canvas.is_empty())
        xdotool("key", "ctrl+1")
        yield None
        xdotool("key", "3")
        yield None
        check(
            "digits are dead while another tab is shown",
            panel.add_button.text() == "Add to my digits as 7",
        )
        # The Training panel's early stopping: typed patience, a chosen metric.
        training = window.training_panel
        spin = training.patience_spin
        centre = spin.mapToGlobal(QPoint(spin.width() // 3, spin.height() // 2))
        xdotool("mousemove", str(centre.x()), str(centre.y()), "click", "1")
        yield None
        xdotool("key", "ctrl+a")
        xdotool("type", "--delay", "40", "3")
        xdotool("key", "Tab")
        yield None
        check(
            "typed patience 3 sets early stopping",
            window.current_config().early_stop == 3,
        )
        combo = training.best_combo
        centre = combo.mapToGlobal(QPoint(combo.width() // 2, combo.height() // 2))
        xdotool("mousemove", str(centre.x()), str(centre.y()), "click", "1")
        yield None
        xdotool("key", "Down")
        xdotool("key", "Return")
        yield None
        check(
            "the Best epoch by list picks validation loss",
            window.current_config().best_metric == "val_loss",
        )
        # Off again: a script is refused for a run that stops early.
        centre = spin.mapToGlobal(QPoint(spin.width() // 3, spin.height() // 2))
        xdotool("mousemove", str(centre.x()), str(centre.y()), "click", "1")
        xdotool("key", "ctrl+a")
        xdotool("type", "--delay", "40", "0")
        xdotool("key", "Tab")
        yield None
        check("patience 0 turns it off", window.current_config().early_stop is None)
        # Folds: a typed K sets cross-validation, 1 turns it off (shown "Off").
        folds = training.folds_spin
        centre = folds.mapToGlobal(QPoint(folds.width() // 3, folds.height() // 2))
        xdotool("mousemove", str(centre.x()), str(centre.y()), "click", "1")
        yield None
        xdotool("key", "ctrl+a")
        xdotool("type", "--delay", "40", "5")
        xdotool("key", "Tab")
        yield None
        check("typed Folds 5 sets 5 folds", window.current_config().folds == 5)
        xdotool("mousemove", str(centre.x()), str(centre.y()), "click", "1")
        xdotool("key", "ctrl+a")
        xdotool("type", "--delay", "40", "1")
        xdotool("key", "Tab")
        yield None
        check(
            "Folds 1 turns cross-validation off",
            window.current_config().folds == 1 and folds.text() == "Off",
        )
        # The Model panel: a click in Find, a typed name, Return picks the match.
        models = window.model_panel
        find = models.search_edit
        centre = find.mapToGlobal(QPoint(find.width() // 2, find.height() // 2))
        xdotool("mousemove", str(centre.x()), str(centre.y()), "click", "1")
        yield None
        xdotool("type", "--delay", "40", "mobilenet_v3_s")
        yield None
        xdotool("key", "Return")
        yield None
        check(
            "Find + Return picks mobilenet_v3_small",
            models.model() == "mobilenet_v3_small",
        )
        check("its weights can be chosen", models.weights_combo.isEnabled())
        xdotool("key", "ctrl+e")
        yield None
        check(
            "Ctrl+E does nothing without a run (Export model… disabled)",
            not window.commands.export.isEnabled()
            and window.exporter.last_result is None,
        )
        # The Code tab: Ctrl+6 shows it, the script follows the chosen model,
        # and a real click on Copy puts it on the clipboard.
        xdotool("key", "ctrl+6")
        for _ in range(4):  # the script is written in the background
            yield None
        code = window.code_view
        text = code.editor.toPlainText()
        check("Ctrl+6 shows the Code tab", code.isVisible())
        check(
            "the script builds the chosen model",
            '"mobilenet_v3_small"' in text and "optimizer.zero_grad" in text,
        )
        copy = code.copy_button
        centre = copy.mapToGlobal(QPoint(copy.width() // 2, copy.height() // 2))
        xdotool("mousemove", str(centre.x()), str(centre.y()), "click", "1")
        yield None
        check("Copy puts the script on the clipboard", app.clipboard().text() == text)
        # Run ▸ Sweep… by its shortcut; a real click ticks a field to vary.
        xdotool("windowfocus", "--sync", wid)
        xdotool("key", "ctrl+shift+l")
        yield None
        sweep = window.sweep_dialog
        check("Ctrl+Shift+L opens the sweep dialog", bool(sweep and sweep.isVisible()))
        if sweep is not None:
            box = sweep.fields["batch_size"][0]
            centre = box.mapToGlobal(QPoint(8, box.height() // 2))
            xdotool("mousemove", str(centre.x()), str(centre.y()), "click", "1")
            yield None
            check("a click ticks batch_size to vary", box.isChecked())
            flags = sweep.space_flags()
            check(
                "the ticked fields become the sweep's flags",
                flags[0] == "--sweep-lr" and "--sweep-batch-size" in flags,
            )
            sweep.close()
        # Run ▸ Profile the next 20 steps by its shortcut, with no run going.
        xdotool("windowfocus", "--sync", wid)
        xdotool("key", "ctrl+shift+p")
        yield None
        check(
            "Ctrl+Shift+P asks for a running run to profile",
            "start one" in window.status_label.text(),
        )
        app.quit()

    walk = steps()

    def advance() -> None:
        try:
            next(walk)
        except StopIteration:
            return
        QTimer.singleShot(STEP_MS, advance)

    QTimer.singleShot(1500, advance)  # the window is mapped and painted first
    QTimer.singleShot(60_000, app.quit)  # never hang
    app.exec()
    window.close()
    failed = [name for name, ok in results if not ok]
    print(f"{len(results) - len(failed)} of {len(results)} checks passed")
    return 1 if failed or not results else 0


if __name__ == "__main__":
    raise SystemExit(main())
