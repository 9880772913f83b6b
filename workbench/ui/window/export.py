"""File > Export model…: the current run to TorchScript, torch.export and ONNX.

:class:`ExportActions` saves the current run (idle: nothing trains it) to a
temporary checkpoint, asks the :class:`RunController` to export and verify it
off the GUI thread (progress in the status line) and shows the outcome: one
line per format with its agreement with the trained model and the largest
difference, green when every format is proven equal, red when not.
"""

from __future__ import annotations

import html
import tempfile
from pathlib import Path

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QMessageBox

from workbench.core.checkpoints.io import CheckpointError, save_checkpoint
from workbench.core.export.formats import FAILED_MARKER, ExportResult, FormatResult
from workbench.ui import dialogs
from workbench.ui.run_controller import RunController, RunState
from workbench.ui.window.parts import ExportWindow

GREEN, RED = "#1b7f3b", "#c0392b"
TITLES = {"torchscript": "TorchScript", "exported": "torch.export", "onnx": "ONNX"}


def format_line(r: FormatResult) -> str:
    """``ONNX  model.onnx  agreement 100.00% (360/360), largest difference 2e-06``."""
    name = TITLES.get(r.format, r.format)
    v = r.verification
    if v is None:
        return f"{name}: not exported: {r.message}"
    verdict = "verified" if r.passed else r.message
    return (
        f"{name}  {r.file}  agreement {100 * v.agreement:.2f}% ({v.agreed}/"
        f"{v.total}), largest difference {v.max_diff:.1e}: {verdict}"
    )


def result_summary(result: ExportResult) -> str:
    """The verdict in one line (the card's headline, the status line)."""
    n = len(result.formats)
    if result.passed:
        return f"Exported {result.model}: all {n} formats verified equal"
    if result.verification_failed:
        return (
            f"Exported {result.model}: verification FAILED: files kept, marked "
            f"with {FAILED_MARKER}"
        )
    return f"Exported {result.model}: some formats could not be exported"


def result_html(result: ExportResult) -> str:
    """The card's text: the verdict, coloured, then one line per format."""
    colour = GREEN if result.passed else RED
    rows = "".join(
        f'<li style="color:{GREEN if r.passed else RED}">'
        f"{html.escape(format_line(r))}</li>"
        for r in result.formats
    )
    return (
        f'<p style="color:{colour}"><b>{html.escape(result_summary(result))}</b></p>'
        f"<ul>{rows}</ul><p>In {html.escape(str(result.out_dir))}, with "
        "preprocess.json, labels.json and MODEL_CARD.md.</p>"
    )


class ExportActions(QObject):
    """Export the current run; the last outcome stays on ``last_result``.

    ``window`` is the :class:`~workbench.ui.main_window.MainWindow`, seen
    through :class:`~workbench.ui.window.parts.ExportWindow`.
    """

    def __init__(self, window: ExportWindow, controller: RunController) -> None:
        super().__init__(window)
        self.window = window
        self.controller = controller
        self.last_result: ExportResult | None = None
        self.last_text = ""  # the card's text, or the error's message
        self.last_card: QMessageBox | None = None
        controller.exported.connect(self._on_controller_exported)
        controller.export_failed.connect(self._on_controller_export_failed)
        controller.task_progress.connect(self._on_controller_task_progress)

    @Slot()
    def export_dialog(self) -> None:
        """File > Export model…: ask for a folder, then export in the background."""
        w, c = self.window, self.controller
        if c.run is None:
            w.set_status("Train a run or open a checkpoint to export its model")
            return
        if c.state is not RunState.IDLE:
            w.set_status(
                "Stop the run to export it (Stop keeps it: Start continues after)"
                if c.state.training
                else "Wait for the current task to finish, then export"
            )
            return
        name = f"{c.run.config.model.replace(':', '-').replace('/', '-')}-export"
        out = dialogs.get_export_folder(w, "Export the model to a folder", name)
        if out is None or not self._may_fill(out):
            return
        self.export(out)

    def _may_fill(self, out: Path) -> bool:
        """Whether to export into ``out``: asked when it holds files already."""
        if not out.is_dir():
            return True  # new (export creates it), or a file export() refuses
        held = sorted(p.name for p in out.iterdir())
        if not held:
            return True
        shown = ", ".join(held[:5]) + (
            f" and {len(held) - 5} more" if len(held) > 5 else ""
        )
        return dialogs.confirm(
            self.window,
            "Export into a folder that is not empty?",
            f"{out} holds {len(held)} files already ({shown}). Files of the same "
            "names (model.pt2, model.onnx, labels.json...) are replaced; the "
            "others stay.",
        )

    def export(self, out_dir: str | Path) -> bool:
        """Save the current run to a temporary checkpoint and export it."""
        w, c, run = self.window, self.controller, self.controller.run
        if run is None or c.state is not RunState.IDLE:
            return False
        out = Path(out_dir).expanduser()
        if out.exists() and not out.is_dir():
            self._fail(f"{out} is a file, not a folder: choose a folder")
            return False
        try:
            folder = Path(tempfile.mkdtemp(prefix="workbench-export-"))
            checkpoint = save_checkpoint(folder / "checkpoint.pt", run)
        except (CheckpointError, OSError) as exc:
            self._fail(f"cannot save the run for export: {exc}")
            return False
        self.last_result, self.last_text = None, ""
        c.export(Path(checkpoint), out, temporary=True)
        w.set_status(f"Exporting {run.config.model} to {out}…")
        return True

    def _fail(self, message: str, details: str = "") -> None:
        self.last_result, self.last_text = None, message
        self.window.set_status(f"Could not export the model: {message}")
        dialogs.show_error(self.window, "Could not export the model", message, details)

    @Slot(object)
    def _on_controller_task_progress(self, text: object) -> None:
        if self.controller.state is RunState.EXPORTING and isinstance(text, str):
            self.window.set_status(f"Exporting: {text}…")

    @Slot(object)
    def _on_controller_exported(self, result: ExportResult) -> None:
        self.last_result = result
        self.last_text = "\n".join(
            [result_summary(result), *(format_line(r) for r in result.formats)]
        )
        self.window.set_status(f"{result_summary(result)} ({result.out_dir})")
        self.last_card = dialogs.show_report(
            self.window, "Export model", result_html(result), ok=result.passed
        )

    @Slot(str, str)
    def _on_controller_export_failed(self, message: str, details: str) -> None:
        self._fail(message, details)
