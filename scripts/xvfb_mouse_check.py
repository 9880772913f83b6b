"""Real mouse wheel and real drag and drop in a real X window (Xvfb + xdotool).

Offscreen, the tests send Qt events by hand: a sent wheel skips the focus a
real one gives, and a drop is a ``QDropEvent``, not the X drag-and-drop
protocol (XDND) between two programs. This script checks with real X input
that the mouse wheel over an unfocused spin box or combo of the settings
column scrolls the column and leaves the field alone, and that a field
clicked first takes the wheel (issue 34 item 5); and that a folder, and
separately several image files, dragged from another program onto the Draw
tab fill its table with a row per image, named as opened (issue 34 item 33).
No file manager is needed: the script starts itself again as a tiny drag
source (``QDrag`` with file URLs) and drags from it with xdotool. Run it as::

    xvfb-run -a .venv/bin/python scripts/xvfb_mouse_check.py [--shots DIR]

It prints one line per check and exits 1 if any fails (2 without a display or
xdotool). ``--break wheel`` (no wheel guard), ``--break wheel-focus`` (the
guard without its focus rule) or ``--break drop`` (drops refused) disables
that feature in this process only, to show its checks fail.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from PIL import Image, ImageDraw
from PySide6.QtCore import QMimeData, QPoint, Qt, QTimer, QUrl
from PySide6.QtGui import QDrag, QMouseEvent
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QScrollArea,
    QWidget,
)

from workbench.ui.panels import predict_folder
from workbench.ui.widgets import wheel_guard
from workbench.ui.window import state as window_state

SETTLE_S = 0.4  # after an action: X events reach Qt, Qt repaints
DRAG_STEPS = 16  # pointer moves from the drag source to the drop target
BREAKS = ("wheel", "wheel-focus", "drop")


def xdotool(*args: object) -> None:
    subprocess.run(["xdotool", *map(str, args)], check=True)


def pump(seconds: float) -> None:
    """Let Qt handle events for ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.01)


def wait_until(condition: Callable[[], bool], timeout: float) -> bool:
    """Handle events until ``condition()`` holds (True) or ``timeout`` s pass."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        QApplication.processEvents()
        if condition():
            return True
        time.sleep(0.01)
    QApplication.processEvents()
    return condition()


def centre(widget: QWidget, fx: float = 0.5) -> QPoint:
    """The screen point ``fx`` of the way across ``widget``, half way down."""
    return widget.mapToGlobal(QPoint(int(widget.width() * fx), widget.height() // 2))


def point_at(widget: QWidget, fx: float = 0.5) -> None:
    where = centre(widget, fx)
    xdotool("mousemove", where.x(), where.y())


# ---------------------------------------------------------------- drag source


class DragSource(QLabel):
    """A window whose mouse press drags file URLs, as a file manager would."""

    def __init__(self, paths: list[str]) -> None:
        super().__init__(f"Drag {len(paths)} item(s) from here")
        self._paths = paths
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setStyleSheet("background: #fde68a; border: 2px solid #92400e;")

    def mousePressEvent(self, event: QMouseEvent) -> None:
        """Start the drag; say how it ended."""
        mime = QMimeData()
        mime.setUrls([QUrl.fromLocalFile(path) for path in self._paths])
        drag = QDrag(self)
        drag.setMimeData(mime)
        # On X11 exec() returns once the drop is sent; the target then asks
        # this process for the URLs, so it stays until the checker ends it.
        action = drag.exec(Qt.DropAction.CopyAction)
        print(f"drag ended: {action.name}", flush=True)


def drag_source(x: int, y: int, paths: list[str]) -> int:
    """Show a drag source at (x, y); print its centre once it is on screen."""
    app = QApplication([])
    source = DragSource(paths)
    source.setGeometry(x, y, 220, 120)
    source.show()

    def ready() -> None:
        where = centre(source)
        print(f"ready {where.x()} {where.y()}", flush=True)

    QTimer.singleShot(800, ready)
    QTimer.singleShot(60_000, app.quit)  # never hang
    return app.exec()


# ---------------------------------------------------------------- test images


def digit_picture(path: Path, strokes: list[tuple[float, ...]]) -> Path:
    """Dark strokes on white paper, like a photographed digit (0-1 coordinates)."""
    side = 64
    image = Image.new("L", (side, side), 255)
    pen = ImageDraw.Draw(image)
    for stroke in strokes:
        box = [int(v * side) for v in stroke[:4]]
        if len(stroke) == 5:  # an ellipse
            pen.ellipse(box, outline=0, width=7)
        else:
            pen.line(box, fill=0, width=7)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    return path


ZERO = [(0.3, 0.15, 0.7, 0.85, 1)]
ONE = [(0.5, 0.15, 0.5, 0.85)]
SEVEN = [(0.25, 0.2, 0.75, 0.2), (0.75, 0.2, 0.4, 0.85)]
FOUR = [(0.6, 0.15, 0.25, 0.6), (0.25, 0.6, 0.8, 0.6), (0.6, 0.15, 0.6, 0.85)]


def make_images(root: Path) -> tuple[Path, list[Path]]:
    """A folder of four digit pictures (one in a subfolder) and three loose files."""
    folder = root / "digits_in"
    digit_picture(folder / "zero.png", ZERO)
    digit_picture(folder / "one.png", ONE)
    digit_picture(folder / "seven.png", SEVEN)
    digit_picture(folder / "sub" / "four.png", FOUR)
    (folder / "notes.txt").write_text("not an image")
    loose = [
        digit_picture(root / "loose" / "a.png", SEVEN),
        digit_picture(root / "loose" / "b.png", ONE),
        digit_picture(root / "loose" / "c.jpg", ZERO),
    ]
    return folder, loose


# ---------------------------------------------------------------- the checks


class Checks:
    """One line per check; a screenshot of the whole screen after each."""

    def __init__(self, shots: Path | None) -> None:
        self.results: list[tuple[str, bool]] = []
        self.shots = shots

    def __call__(self, name: str, ok: bool, detail: str = "") -> None:
        self.results.append((name, ok))
        said = f" ({detail})" if detail else ""
        print(f"{'PASS' if ok else 'FAIL'} {name}{said}", flush=True)
        if self.shots is not None:
            self.shots.mkdir(parents=True, exist_ok=True)
            screen = QApplication.primaryScreen().grabWindow(0)
            screen.save(str(self.shots / f"mouse_{len(self.results):02d}.png"))

    def snap(self, label: str) -> None:
        """A screenshot between checks (the next check's number, ``label``)."""
        if self.shots is not None:
            self.shots.mkdir(parents=True, exist_ok=True)
            screen = QApplication.primaryScreen().grabWindow(0)
            number = len(self.results) + 1
            screen.save(str(self.shots / f"mouse_{number:02d}_{label}.png"))

    def failed(self) -> list[str]:
        return [name for name, ok in self.results if not ok]


def field_value(field: QWidget) -> object:
    return field.currentIndex() if hasattr(field, "currentIndex") else field.value()


def check_wheel(window: QWidget, check: Checks) -> None:
    """Item 5: the wheel scrolls the column past unfocused fields, not them."""
    column = window.findChild(QScrollArea, "settingsScroll")
    bar = column.verticalScrollBar()
    check(
        "the settings column can scroll at 1024x700",
        bar.maximum() > 0,
        f"scroll range 0-{bar.maximum()}",
    )
    fields = [
        ("Batch size", window.loader_panel.batch_spin),
        ("Learning rate", window.training_panel.lr_spin),
        ("Optimizer", window.training_panel.optimizer_combo),
        ("Loader", window.loader_panel.loader_combo),
    ]
    for label, field in fields:
        column.ensureWidgetVisible(field, 0, 40)
        pump(SETTLE_S)
        point_at(field)
        pump(SETTLE_S)
        before, scrolled = field_value(field), bar.value()
        notch = 5 if scrolled < bar.maximum() else 4  # down if there is room
        xdotool("click", notch)
        wait_until(lambda s=scrolled: bar.value() != s, 2.0)
        pump(SETTLE_S)
        after = field_value(field)
        check(
            f"wheel over the unfocused {label} field scrolls the column, not it",
            after == before and bar.value() != scrolled and not field.hasFocus(),
            f"value {before} -> {after}, column {scrolled} -> {bar.value()}, "
            f"focus {field.hasFocus()}",
        )

    # A field clicked first takes the wheel, and the column stays.
    spin = window.loader_panel.batch_spin
    column.ensureWidgetVisible(spin, 0, 40)
    pump(SETTLE_S)
    point_at(spin, 0.25)  # the text, away from the arrows
    xdotool("click", 1)
    wait_until(spin.hasFocus, 2.0)
    before, scrolled = spin.value(), bar.value()
    xdotool("click", 5)
    wait_until(lambda: spin.value() != before, 2.0)
    pump(SETTLE_S)
    check(
        "after a click into Batch size the wheel changes it, not the column",
        spin.hasFocus() and spin.value() < before and bar.value() == scrolled,
        f"value {before} -> {spin.value()}, column {scrolled} -> {bar.value()}",
    )
    combo = window.training_panel.optimizer_combo
    column.ensureWidgetVisible(combo, 0, 40)
    pump(SETTLE_S)
    point_at(combo)
    xdotool("click", 1)  # opens the list; Escape closes it, the focus stays
    pump(SETTLE_S)
    xdotool("key", "Escape")
    wait_until(combo.hasFocus, 2.0)
    pump(SETTLE_S)
    before, scrolled = combo.currentIndex(), bar.value()
    notch = 5 if before < combo.count() - 1 else 4
    xdotool("click", notch)
    wait_until(lambda: combo.currentIndex() != before, 2.0)
    pump(SETTLE_S)
    check(
        "after a click on Optimizer the wheel changes it, not the column",
        combo.hasFocus() and combo.currentIndex() != before and bar.value() == scrolled,
        f"{combo.itemText(before)} -> {combo.currentText()}, "
        f"column {scrolled} -> {bar.value()}",
    )


def train_briefly(window: QWidget, check: Checks) -> None:
    """A few steps, started by a real click, so the tab reads with a run."""
    panel = window.training_panel
    wait_until(window.data_panel.is_loaded, 60)
    panel.epochs_spin.setValue(1)
    panel.max_steps_spin.setValue(40)
    column = window.findChild(QScrollArea, "settingsScroll")
    column.ensureWidgetVisible(panel.start_button)
    pump(SETTLE_S)
    point_at(panel.start_button)
    xdotool("click", 1)
    started = wait_until(lambda: window.state != "idle", 10)
    finished = started and wait_until(lambda: window.state == "idle", 120)
    run = window.current_run
    steps = 0 if run is None else run.global_step
    check(
        "a click on Start trains a short run", finished and steps > 0, f"{steps} steps"
    )


def read_line(process: subprocess.Popen[str], start: str, timeout: float) -> str:
    """The next line ``process`` prints that starts with ``start`` ("" if none)."""
    assert process.stdout is not None
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        QApplication.processEvents()
        if select.select([process.stdout], [], [], 0.05)[0]:
            line = process.stdout.readline()
            if not line:  # it ended
                return ""
            if line.startswith(start):
                return line.strip()
    return ""


def drag_and_drop(
    paths: list[Path], target: QWidget, where: QPoint, before_drop: Callable[[], None]
) -> str:
    """Drag ``paths`` from a drag-source process onto ``target`` at ``where``.

    ``before_drop()`` runs with the button still down over the target.

    Returns how the source says the drag ended (``CopyAction`` when dropped).
    """
    screen = QApplication.primaryScreen().geometry()
    window = target.window()
    x = window.frameGeometry().right() + 20
    y = 80
    if x + 220 > screen.width():  # no room beside: over the settings column
        x, y = 10, window.height() - 160
    source = subprocess.Popen(
        [sys.executable, __file__, "--drag-source", str(x), str(y)]
        + [str(path) for path in paths],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = read_line(source, "ready", 30)
    if not line:
        source.kill()
        return "no drag source"
    sx, sy = (int(v) for v in line.split()[1:])
    xdotool("mousemove", sx, sy)
    pump(SETTLE_S)
    xdotool("mousedown", 1)
    pump(SETTLE_S)
    for step in range(1, DRAG_STEPS + 1):
        xdotool(
            "mousemove",
            sx + (where.x() - sx) * step // DRAG_STEPS,
            sy + (where.y() - sy) * step // DRAG_STEPS,
        )
        pump(0.06)
    for wiggle in (3, 0):  # XDND: a position the target answers before the drop
        xdotool("mousemove", where.x() + wiggle, where.y() + wiggle)
        pump(0.15)
    before_drop()
    xdotool("mouseup", 1)
    said = read_line(source, "drag ended", 15)
    pump(2.0)  # the target fetches the URLs from the source
    source.terminate()
    source.wait(10)
    return said.removeprefix("drag ended: ") or "no answer"


def expected_row(panel: QWidget, path: Path) -> tuple[str, str]:
    """(class, confidence) as opening that one file on the tab reads it."""
    reading = panel.predictor.read_file(path)
    return reading.class_names[reading.label], f"{100 * reading.confidence:.1f}%"


def check_drop(
    window: QWidget,
    check: Checks,
    what: str,
    paths: list[Path],
    root: Path | None,
    source_text: str,
) -> None:
    """Item 33: real XDND of ``paths`` onto the Draw tab fills its table."""
    panel = window.draw_panel
    table = panel.predictions
    table.start("", 0)  # an earlier drop's rows gone: these must be new
    table.setVisible(False)
    pump(SETTLE_S)
    ended = drag_and_drop(
        paths, panel, centre(panel.canvas), lambda: check.snap("dragging")
    )
    shown = wait_until(
        lambda: table.isVisible() and not panel.batch.is_running(), 30
    ) and bool(table.shown_rows())
    pump(SETTLE_S)
    rows = table.shown_rows()
    names = {row[0] for row in rows}
    if root is None:
        wanted = {path.name for path in paths}
        files = {path.name: path for path in paths}
    else:
        files = {
            path.relative_to(root).as_posix(): path
            for path in root.rglob("*")
            if path.suffix in (".png", ".jpg")
        }
        wanted = set(files)
    check(
        f"{what} dragged from another program is accepted (the source: copy)",
        ended == "CopyAction",
        f"the drag ended: {ended}",
    )
    check(
        f"{what}: the table names what was opened",
        shown and table.source_label.text() == source_text,
        repr(table.source_label.text()),
    )
    check(
        f"{what}: one row per image (file, class, confidence)",
        shown and names == wanted and len(rows) == len(wanted),
        f"{len(rows)} rows: {sorted(names)}",
    )
    alike = shown and all(
        row[1:] == expected_row(panel, files[row[0]]) for row in rows if row[0] in files
    )
    check(
        f"{what}: each row reads as opening that file alone",
        alike,
        "; ".join(f"{row[0]} {row[1]} {row[2]}" for row in rows),
    )


def check_row_click(window: QWidget, check: Checks) -> None:
    """A real click on a row opens that file on the tab."""
    panel = window.draw_panel
    view = panel.predictions.view
    panel.clear_input()
    pump(SETTLE_S)
    name = "a click on a row opens that file on the tab"
    if view.model().rowCount() == 0:
        check(name, False, "no rows to click")
        return
    index = view.model().index(0, 0)
    rect = view.visualRect(index)
    where = view.viewport().mapToGlobal(rect.center())
    xdotool("mousemove", where.x(), where.y(), "click", 1)
    opened = wait_until(lambda: panel.reading is not None, 5)
    check(
        name,
        opened and not panel.canvas.is_empty(),
        f"row {index.data()!r}",
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shots", help="save a screenshot after each check here")
    ap.add_argument(
        "--break",
        dest="broken",
        choices=BREAKS,
        help="disable a feature in this process, to see its checks fail",
    )
    ap.add_argument("--drag-source", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not os.environ.get("DISPLAY") or shutil.which("xdotool") is None:
        print("needs an X display (xvfb-run) and xdotool", file=sys.stderr)
        return 2
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    if args.drag_source:
        x, y, *paths = args.drag_source
        return drag_source(int(x), int(y), paths)
    faulthandler.dump_traceback_later(400, exit=True)  # never hang
    if args.broken == "wheel":
        wheel_guard.install = lambda app: None
    elif args.broken == "wheel-focus":
        wheel_guard._take_no_wheel_focus = lambda widget: None
    elif args.broken == "drop":
        predict_folder.dropped_paths = lambda mime: []
    window_state.use_settings_file(Path(tempfile.mkdtemp()) / "settings.ini")
    app = QApplication([])
    from workbench.ui.main_window import MainWindow

    window = MainWindow()
    window.resize(1024, 700)  # small enough for the settings column to scroll
    window.show()
    pump(1.5)  # mapped and painted
    xdotool("windowfocus", "--sync", int(window.winId()))
    pump(SETTLE_S)
    check = Checks(Path(args.shots) if args.shots else None)
    images = Path(tempfile.mkdtemp(prefix="xvfb_mouse_"))
    folder, loose = make_images(images)

    check_wheel(window, check)
    train_briefly(window, check)
    window.tabs.setCurrentWidget(window.draw_page)
    pump(SETTLE_S)
    check_drop(
        window, check, "a folder", [folder], folder, "Folder digits_in: 4 image files"
    )
    check_row_click(window, check)
    check_drop(window, check, "three files", loose, None, "3 files")

    window.close()
    app.processEvents()
    shutil.rmtree(images, ignore_errors=True)
    failed = check.failed()
    print(f"{len(check.results) - len(failed)} of {len(check.results)} checks passed")
    return 1 if failed or not check.results else 0


if __name__ == "__main__":
    raise SystemExit(main())
