"""File > Export model…: where the folder dialog opens, a new folder's name,
and a question before filling a folder that holds files (issue 34, item 30)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QFileDialog

from workbench.ui import dialogs
from workbench.ui.window import state as window_state

from .helpers import run_to_end


class FakeExec:
    """Stands in for the modal exec(): records what the dialog shows, then
    accepts ``typed`` (a name the user typed) or cancels."""

    def __init__(self, typed: Path | None = None) -> None:
        self.typed = typed
        self.shown: list[tuple[str, list[str], QFileDialog.AcceptMode]] = []

    def __call__(self, dialog: QFileDialog) -> int:
        self.shown.append(
            (
                dialog.directory().absolutePath(),
                dialog.selectedFiles(),
                dialog.acceptMode(),
            )
        )
        if self.typed is None:
            return 0
        dialog.selectFile(str(self.typed))
        return 1


def test_the_dialog_opens_in_documents_not_the_data_folder_and_takes_a_new_name(
    qtbot, window, tmp_path, monkeypatch
):
    settings = window_state.open_window_settings()
    data = tmp_path / "training-data"
    data.mkdir()
    window_state.set_last_folder(settings, "folder", data)  # the Data panel's Browse
    fake = FakeExec()
    monkeypatch.setattr(QFileDialog, "exec", lambda dialog: fake(dialog))
    assert dialogs.get_export_folder(window, "Export", "mlp-export") is None
    documents = Path(
        QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.DocumentsLocation
        )
    )
    ((where, selected, mode),) = fake.shown
    assert Path(where) == (documents if documents.is_dir() else Path.home())
    assert Path(where) != data
    assert [Path(p).name for p in selected] == ["mlp-export"]
    assert mode is QFileDialog.AcceptMode.AcceptSave  # a typed new name is taken

    new = tmp_path / "exports" / "my new export"
    (tmp_path / "exports").mkdir()
    fake = FakeExec(typed=new)
    monkeypatch.setattr(QFileDialog, "exec", lambda dialog: fake(dialog))
    assert dialogs.get_export_folder(window, "Export", "mlp-export") == new
    assert not new.exists()  # created by the export, not by the dialog
    # The next export opens where this one went.
    fake = FakeExec()
    monkeypatch.setattr(QFileDialog, "exec", lambda dialog: fake(dialog))
    dialogs.get_export_folder(window, "Export", "mlp-export")
    assert Path(fake.shown[0][0]) == tmp_path / "exports"


def _export_into(window, monkeypatch, out: Path, answer: bool):
    asked, exported = [], []
    monkeypatch.setattr(dialogs, "get_export_folder", lambda *a: out)
    monkeypatch.setattr(
        dialogs,
        "confirm",
        lambda _w, title, text: asked.append((title, text)) or answer,
    )
    monkeypatch.setattr(window.exporter, "export", exported.append)
    window.commands.export.trigger()
    return asked, exported


def test_a_folder_that_holds_files_is_asked_about_first(
    qtbot, window, tmp_path, monkeypatch
):
    run_to_end(qtbot, window)
    out = tmp_path / "photos"
    out.mkdir()
    (out / "holiday.jpg").write_bytes(b"mine")
    asked, exported = _export_into(window, monkeypatch, out, answer=False)
    ((title, text),) = asked
    assert title == "Export into a folder that is not empty?"
    assert f"{out} holds 1 files already (holiday.jpg)" in text
    assert exported == []  # No: nothing written
    assert (out / "holiday.jpg").read_bytes() == b"mine"
    asked, exported = _export_into(window, monkeypatch, out, answer=True)
    assert exported == [out]

    empty = tmp_path / "empty"
    empty.mkdir()
    asked, exported = _export_into(window, monkeypatch, empty, answer=False)
    assert asked == []  # nothing to replace: no question
    assert exported == [empty]
