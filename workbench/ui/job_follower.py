"""Following a run that other processes train, through its run folder.

A ``train --nproc N`` job writes its run folder from its rank 0 alone; the
window reads what it appends to ``metrics.jsonl`` (complete lines only) and
emits the events those lines hold, the same events an in-process run yields.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from workbench.core.runs.folder import METRICS_FILE
from workbench.core.runs.tail import AppendedLines, ledger_events


class JobFollower(QObject):
    """Emits ``event`` for each event a run folder's ledger gains (on :meth:`poll`)."""

    event = Signal(object)  # StepMetrics, EpochMetrics, LayerHealth, WeightHistograms

    def __init__(self, folder: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.folder = Path(folder)
        self._metrics = AppendedLines(self.folder / METRICS_FILE)

    def poll(self) -> int:
        """Read what was appended since the last poll; the number of events emitted."""
        events = ledger_events(self._metrics.read())
        for event in events:
            self.event.emit(event)
        return len(events)
