"""Run ▸ Find learning rate…: the range test's curve, its suggestions checked.

The dialog runs :func:`~workbench.core.tuning.lr_probe.find_rate` through the
run controller (a background task, with progress and Cancel) on the run Start
would train, then shows the loss against the rate on a log axis, both
suggestions (and the band between them when they disagree by over 3x), the
probe runs' measurements, and "Use this rate" for the one that measured best.
The run is left exactly as it was.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from workbench.core.config import TrainConfig
from workbench.core.tuning.lr_probe import RateFound
from workbench.ui.formatting import percent
from workbench.ui.panels.training import TrainingPanel
from workbench.ui.plots.live_plot import no_scale_factor
from workbench.ui.run_controller import FindProgress, RunController, RunState
from workbench.ui.window.idle_config import config_when_idle

VALLEY_COLOUR = (30, 150, 60)
STEEPEST_COLOUR = (200, 90, 20)
COLUMNS = ("Rate", "Train loss", "Val loss", "Val accuracy")


class LrFinderWindow(Protocol):
    """What :func:`open_lr_finder` uses of the window."""

    controller: RunController
    training_panel: TrainingPanel
    lr_finder: QDialog | None

    def current_config(self) -> TrainConfig: ...
    def set_status(self, text: str) -> None: ...


def _rate(value: float) -> str:
    return f"{value:.2e}"


def _loss(value: float) -> str:
    return f"{value:.4f}" if math.isfinite(value) else "diverged"


class LrFinderDialog(QDialog):
    """Progress, then the curve, the probes and "Use this rate"."""

    def __init__(self, window: LrFinderWindow, parent: QWidget) -> None:
        super().__init__(parent, objectName="lrFinderDialog")
        self.setWindowTitle("Find a learning rate")
        self.window_ = window
        self.found: RateFound | None = None
        self.status_label = QLabel(objectName="lrFinderStatus")
        self.status_label.setWordWrap(True)
        # Room for the summary's three lines: the plot takes what is left.
        self.status_label.setMinimumHeight(
            3 * self.status_label.fontMetrics().lineSpacing()
        )
        self.progress_bar = QProgressBar(objectName="lrFinderProgress")
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("lrFinderPlot")
        self.plot.setLogMode(x=True, y=False)
        self.plot.setLabel("bottom", "learning rate")
        self.plot.setLabel("left", "loss")
        self.plot.setMenuEnabled(False)
        # Rates as they are: an SI factor ("x0.001") would relabel every tick.
        no_scale_factor(self.plot.getPlotItem())
        self.table = QTableWidget(0, len(COLUMNS), objectName="lrFinderProbes")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setMinimumHeight(200)  # six or seven probes without scrolling
        self.cancel_button = QPushButton("Cancel", objectName="lrFinderCancel")
        self.use_button = QPushButton("Use this rate", objectName="lrFinderUse")
        self.use_button.setEnabled(False)
        self.close_button = QPushButton("Close", objectName="lrFinderClose")
        self.cancel_button.clicked.connect(window.controller.cancel_task)
        self.use_button.clicked.connect(self.use_rate)
        self.close_button.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        buttons.addWidget(self.use_button)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status_label)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.table)
        layout.addLayout(buttons)
        self.resize(760, 620)
        controller = window.controller
        controller.task_progress.connect(self._on_task_progress)
        controller.rate_found.connect(self._on_rate_found)
        controller.find_failed.connect(self._on_find_failed)

    def start(self, cfg: TrainConfig) -> None:
        """Find a rate for ``cfg`` (the controller must be idle)."""
        self.status_label.setText("Preparing the run…")
        self.progress_bar.setRange(0, 0)  # busy until the first step
        self.window_.controller.find_rate(cfg)

    @Slot(object)
    def _on_task_progress(self, p: Any) -> None:
        if not isinstance(p, FindProgress):
            return
        self.progress_bar.setRange(0, p.total)
        self.progress_bar.setValue(p.done)
        what = "Range test: step" if p.stage == "range test" else "Probe run"
        self.status_label.setText(f"{what} {p.done:,} of {p.total:,}…")

    @Slot(object)
    def _on_rate_found(self, found: RateFound) -> None:
        self.found = found
        self.cancel_button.setEnabled(False)
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(1)
        self.progress_bar.setFormat("done" if found.offered else "stopped")
        self._draw(found)
        self._fill_table(found)
        offered = found.offered
        self.use_button.setEnabled(offered is not None)
        self.status_label.setText(_summary(found))

    @Slot(str, str)
    def _on_find_failed(self, message: str, _details: str) -> None:
        self.cancel_button.setEnabled(False)
        self.progress_bar.setRange(0, 1)
        self.status_label.setText(f"Failed: {message}")

    def _draw(self, found: RateFound) -> None:
        curve, plot = found.curve, self.plot
        plot.clear()
        if not curve.rates:
            return
        rates = np.array(curve.rates)
        plot.addLegend(offset=(10, 10))
        plot.plot(rates, curve.losses, pen=pg.mkPen((160, 180, 220)), name="loss")
        plot.plot(
            rates, curve.smoothed, pen=pg.mkPen((20, 70, 160), width=2), name="smoothed"
        )
        # The smoothed curve sets the view: the raw loss's last spikes would
        # flatten it to a line.
        low, high = min(curve.smoothed), max(curve.smoothed)
        pad = 0.05 * (high - low or 1.0)
        plot.setYRange(low - pad, high + pad, padding=0)
        guess = curve.suggestions
        if guess is None:
            return
        if guess.disagree:
            low, high = guess.band
            band = pg.LinearRegionItem(
                (math.log10(low), math.log10(high)),
                movable=False,
                brush=pg.mkBrush(240, 200, 80, 50),
            )
            plot.addItem(band)
        # Labels at two heights: the lines may stand close together.
        for rate, colour, name, height in (
            (guess.valley, VALLEY_COLOUR, "valley", 0.92),
            (guess.steepest, STEEPEST_COLOUR, "steepest", 0.8),
        ):
            line = pg.InfiniteLine(
                math.log10(rate),
                pen=pg.mkPen(colour, width=2, style=Qt.PenStyle.DashLine),
                label=f"{name} {_rate(rate)}",
                labelOpts={"position": height, "color": colour},
            )
            plot.addItem(line)

    def _fill_table(self, found: RateFound) -> None:
        self.table.setRowCount(len(found.probes))
        for row, probe in enumerate(found.probes):
            mark = "  ← best" if probe is found.offered else ""
            cells = (
                _rate(probe.rate) + mark,
                _loss(probe.train_loss),
                _loss(probe.val_loss),
                percent(probe.val_accuracy),
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight)
                self.table.setItem(row, column, item)
        self.table.resizeColumnsToContents()

    @Slot()
    def use_rate(self) -> None:
        """Set the Training panel's learning rate to the offered rate."""
        if self.found is None or self.found.offered is None:
            return
        rate = float(f"{self.found.offered.rate:.2e}")
        self.window_.training_panel.lr_spin.setValue(rate)
        self.window_.set_status(f"Learning rate set to {rate:g} (the finder's probes)")
        self.close()

    def closeEvent(self, event: Any) -> None:
        if self.window_.controller.state is RunState.FINDING:
            self.window_.controller.cancel_task()  # nothing runs on unseen
        super().closeEvent(event)


def _summary(found: RateFound) -> str:
    curve, offered = found.curve, found.offered
    notes = "".join(f" Note: {n}." for n in curve.notes)
    if offered is None:
        if curve.suggestions is None:
            return f"No rate to suggest ({curve.stopped_because}).{notes}"
        return f"Stopped before the probes ended: no rate offered.{notes}"
    return (
        f"Offered {_rate(offered.rate)}: of {len(found.probes)} probe runs "
        f"({found.probe_steps} steps each, rates 3x apart from a third of the "
        f"valley), it measured best (val accuracy {percent(offered.val_accuracy)}). "
        f"The range test {curve.stopped_because}.{notes}"
    )


def open_lr_finder(window: LrFinderWindow) -> LrFinderDialog | None:
    """Open the finder on the panels' settings; None (said) when it cannot run."""
    cfg = config_when_idle(window, "the finder needs the model", "find a learning rate")
    if cfg is None:
        return None
    parent = window if isinstance(window, QWidget) else None
    if window.lr_finder is not None:  # the last one's figures: replaced
        window.lr_finder.close()
        window.lr_finder.deleteLater()
    dialog = LrFinderDialog(window, parent)
    window.lr_finder = dialog
    dialog.show()
    dialog.start(cfg)
    return dialog
