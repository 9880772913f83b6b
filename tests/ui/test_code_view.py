"""The Code tab: the window's settings as a plain PyTorch script, kept current."""

from __future__ import annotations

import errno
import os

from PySide6.QtGui import QAction, QFontMetrics, QGuiApplication, QTextCharFormat
from PySide6.QtWidgets import QScrollArea

from workbench.core import atomic_files as files
from workbench.ui import code_view, dialogs

from .helpers import FAST


def written(qtbot, view):
    """Wait until the view has written the script for the settings it was told of."""
    qtbot.waitUntil(lambda: not view.is_busy(), timeout=15_000)
    return view.text()


def columns_line_up(font) -> bool:
    """Whether every character is as wide as every other, as a user sees it.

    Some fixed-width fonts (Noto Sans Mono) report ``fixedPitch() == False``;
    the advance widths are what keeps the script's columns straight.
    """
    metrics = QFontMetrics(font)
    return len({metrics.horizontalAdvance(c) for c in "iW0 .m_|"}) == 1


def code_page(window):
    return window.tabs.findChild(QScrollArea, "codePage")


def show_code(qtbot, window):
    """Bring the Code tab up; the script once written."""
    window.tabs.setCurrentWidget(code_page(window))
    return written(qtbot, window.code_view)


def test_the_code_tab_shows_the_run_as_a_plain_script(qtbot, window):
    view = window.code_view
    assert window.tabs.tabText(window.tabs.indexOf(code_page(window))) == "Code"
    action = window.findChild(QAction, "showCodeAction")
    assert action.shortcut().toString() == "Ctrl+6"
    action.trigger()
    assert window.tabs.currentWidget() is code_page(window)
    text = written(qtbot, view)
    assert "optimizer.zero_grad(set_to_none=True)" in text
    assert "class MLP(nn.Module):" in text  # the model in the panels (FAST: mlp)
    assert "BATCH_SIZE = 64" in text
    assert "from the workbench window" in text
    assert "python run.py" in view.caption.text()
    assert view.editor.isReadOnly()
    assert columns_line_up(view.editor.font())
    assert view.copy_button.isEnabled()
    assert view.save_button.isEnabled()


def test_a_settings_change_rewrites_the_script(qtbot, window):
    view = window.code_view
    show_code(qtbot, window)
    window.loader_panel.batch_spin.setValue(32)  # as the user would
    text = written(qtbot, view)
    assert "BATCH_SIZE = 32" in text
    assert "BATCH_SIZE = 64" not in text
    combo = window.training_panel.optimizer_combo
    combo.setCurrentIndex(combo.findData("sgd"))
    assert "torch.optim.SGD(params, lr=LR" in written(qtbot, view)
    window.apply_config(FAST.replace(model="small-cnn", seed=7))
    text = written(qtbot, view)
    assert "class SmallCNN(nn.Module):" in text
    assert "SEED = 7" in text


def test_hidden_it_waits_and_quick_changes_write_it_once(qtbot, window, monkeypatch):
    view = window.code_view
    show_code(qtbot, window)
    calls = []

    def counting(cfg, *, source):
        calls.append(cfg.batch_size)
        return f"BATCH_SIZE = {cfg.batch_size}\n"

    monkeypatch.setattr(code_view, "write_script", counting)
    window.tabs.setCurrentIndex(0)
    window.loader_panel.batch_spin.setValue(48)
    qtbot.wait(2 * code_view.DEBOUNCE_MS)
    assert calls == []  # nobody looks at it: nothing written
    window.tabs.setCurrentWidget(code_page(window))
    assert written(qtbot, view) == "BATCH_SIZE = 48\n"
    assert calls == [48]
    for size in (1, 12, 128):  # typing 1, 2, 8 into the spin box
        window.loader_panel.batch_spin.setValue(size)
    assert written(qtbot, view) == "BATCH_SIZE = 128\n"
    assert calls == [48, 128]


def test_a_config_it_cannot_write_says_why(qtbot, window, tmp_path):
    view = window.code_view
    show_code(qtbot, window)
    folder = FAST.replace(dataset="folder", data_dir=str(tmp_path), loader="dataloader")
    window.apply_config(folder)
    assert written(qtbot, view) == ""
    assert "loader dataloader" in view.caption.text()
    assert "switch loader to fast" in view.caption.text()
    for widget in (view.editor, view.copy_button, view.save_button):
        assert not widget.isEnabled()
    window.apply_config(FAST)
    assert "BATCH_SIZE = 64" in written(qtbot, view)
    assert "python run.py" in view.caption.text()
    assert view.copy_button.isEnabled()
    assert view.save_button.isEnabled()


def test_copy_puts_the_whole_script_on_the_clipboard(qtbot, window):
    view = window.code_view
    text = show_code(qtbot, window)
    QGuiApplication.clipboard().setText("something else")
    view.copy_button.click()
    assert QGuiApplication.clipboard().text() == text
    assert "Copied" in view.note.text()


def test_save_writes_the_shown_script(qtbot, window, monkeypatch, tmp_path):
    view = window.code_view
    text = show_code(qtbot, window)
    asked = []

    def get_save_path(parent, title, name_filter, *, name=""):
        asked.append(name)
        return tmp_path / "scripts" / "run.py"

    monkeypatch.setattr(dialogs, "get_save_path", get_save_path)
    view.save_button.click()
    assert asked == ["run.py"]
    saved = tmp_path / "scripts" / "run.py"
    assert saved.read_text(encoding="utf-8") == text
    assert str(saved) in view.note.text()


def test_a_failed_save_says_so_once_and_writes_nothing(
    qtbot, window, monkeypatch, tmp_path, error_dialogs
):
    view = window.code_view
    show_code(qtbot, window)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder should be")
    target = blocker / "run.py"
    monkeypatch.setattr(dialogs, "get_save_path", lambda *args, **kwargs: target)
    view.save_button.click()
    assert [t for t, _, _ in error_dialogs.shown] == ["Could not save the script"]
    _, message, details = error_dialogs.shown[0]
    assert str(target) in message
    assert not details  # a disk problem, no traceback
    assert not target.exists()
    error_dialogs.shown.clear()

    # A full disk: the old file stays whole and no temp file is left behind.
    folder = tmp_path / "full"
    folder.mkdir()
    old = folder / "run.py"
    old.write_text("print('the old script')\n")
    monkeypatch.setattr(dialogs, "get_save_path", lambda *args, **kwargs: old)

    def no_space(_fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patch:  # fsync back before anything else syncs
        patch.setattr(files.os, "fsync", no_space)
        view.save_button.click()
    assert error_dialogs.titles() == ["Could not save the script"]
    assert "No space left on device" in error_dialogs.shown[0][1]
    error_dialogs.shown.clear()
    assert old.read_text() == "print('the old script')\n"
    assert [p.name for p in folder.iterdir()] == ["run.py"]


def _format_at(view, line_start: str, column_text: str):
    """The highlighter's format of ``column_text`` in the line starting so."""
    document = view.editor.document()
    block = document.begin()
    while block.isValid() and not block.text().lstrip().startswith(line_start):
        block = block.next()
    assert block.isValid(), line_start
    column = block.text().index(column_text)
    for fmt in block.layout().formats():
        if fmt.start <= column < fmt.start + fmt.length:
            return QTextCharFormat(fmt.format)  # a copy: the list owns the original
    raise AssertionError(f"no format at {column_text!r} in {block.text()!r}")


def test_keywords_comments_and_docstrings_are_coloured_apart(qtbot, window):
    view = window.code_view
    show_code(qtbot, window)
    highlighter = view.highlighter
    keyword = _format_at(view, "def main", "def")
    comment = _format_at(view, "# The standard loop", "#")
    name = _format_at(view, "def main", "main")
    number = _format_at(view, "BATCH_SIZE = ", "64")
    assert keyword.foreground() == highlighter.format_for("keyword").foreground()
    assert comment.foreground() == highlighter.format_for("comment").foreground()
    assert name.foreground() == highlighter.format_for("definition").foreground()
    assert number.foreground() == highlighter.format_for("number").foreground()
    colours = {f.foreground().color().name() for f in (keyword, comment, name, number)}
    assert len(colours) == 4
    assert comment.fontItalic()
    assert not keyword.fontItalic()
    # The docstring's second line is still inside the string: its "from" is text.
    inside = _format_at(view, "Written by ptcore-workbench", "from")
    assert inside.foreground() == highlighter.format_for("string").foreground()
