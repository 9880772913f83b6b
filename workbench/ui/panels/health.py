"""Layer health: gradient and weight norms per layer, live, and weight histograms.

The engine measures them (``LayerHealth`` every 10 steps, after the step's
backward pass; ``WeightHistograms`` after every epoch); this panel only plots.
A frozen layer's gradient norm is exactly 0, which makes the freeze tree's
effect visible at a glance. The layers are named in a list beside the two norm
plots (it scrolls for a deep model), not in a legend over their curves, which
would cover them and drop the last layers (the head) off its bottom.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt, Slot
from PySide6.QtGui import QColor, QIcon, QPixmap, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSlider,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from workbench.core.events import LayerHealth, WeightHistograms
from workbench.ui.plots.live_plot import LivePlot, no_scale_factor
from workbench.ui.widgets.lazy_view import hidden_in_shown_window


def _colour(index: int, count: int) -> tuple[int, int, int]:
    color = pg.intColor(index, hues=max(count, 1), values=1, maxValue=200)
    return (color.red(), color.green(), color.blue())


class LayerHealthPanel(QWidget):
    """Live per-layer norms, and each layer's weight histogram per epoch."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("layerHealthPanel")
        self.grad_plot = LivePlot(
            "Gradient norm per layer (0: frozen)",
            "step",
            "‖grad‖",
            x_name="step",
            legend=False,  # the layer list names the curves
        )
        self.grad_plot.setObjectName("gradNormPlot")
        self.weight_plot = LivePlot(
            "Weight norm per layer",
            "step",
            "‖weight‖",
            x_name="step",
            legend=False,
        )
        self.weight_plot.setObjectName("weightNormPlot")
        self.histogram_plot = pg.PlotWidget(background="w")
        self.histogram_plot.setObjectName("weightHistogramPlot")
        item = self.histogram_plot.getPlotItem()
        item.setLabel("bottom", "weight value")
        item.setLabel("left", "count")
        item.showGrid(x=True, y=True, alpha=0.2)
        no_scale_factor(item)
        self._histogram_curve = self.histogram_plot.plot(
            [0.0, 1.0],
            [0.0],
            stepMode="center",
            fillLevel=0,
            brush=(70, 110, 170, 120),
            pen=pg.mkPen((40, 70, 140), width=1.5),
        )
        self.layer_combo = QComboBox(objectName="layerCombo")
        self.layer_combo.currentIndexChanged.connect(self._show_histogram)
        self.epoch_slider = QSlider(Qt.Orientation.Horizontal)
        self.epoch_slider.setObjectName("histogramEpochSlider")
        self.epoch_slider.valueChanged.connect(self._show_histogram)
        self.histogram_label = QLabel(objectName="histogramLabel")
        self.layer_legend = QListWidget(objectName="layerLegend")
        self.layer_legend.setToolTip("Each layer's colour in the two norm plots")
        self.layer_legend.setSelectionMode(QListWidget.SelectionMode.NoSelection)
        self.layer_legend.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.layer_legend.setIconSize(QSize(18, 4))
        self.layer_legend.setFixedWidth(110)
        self._layers: tuple[str, ...] = ()
        self._histograms: dict[int, WeightHistograms] = {}
        # A histogram arrived while the tab was hidden: the plot shows an older one.
        self.stale = False

        controls = QHBoxLayout()
        controls.addWidget(QLabel("Layer"))
        controls.addWidget(self.layer_combo, 1)
        controls.addWidget(QLabel("Epoch"))
        controls.addWidget(self.epoch_slider, 2)
        histogram = QWidget()
        column = QVBoxLayout(histogram)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(controls)
        column.addWidget(self.histogram_label)
        column.addWidget(self.histogram_plot, 1)
        norm_plots = QSplitter(Qt.Orientation.Vertical, objectName="normSplitter")
        for widget in (self.grad_plot, self.weight_plot):
            norm_plots.addWidget(widget)
        norms = QWidget()
        row = QHBoxLayout(norms)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(norm_plots, 1)
        row.addWidget(self.layer_legend)
        splitter = QSplitter(Qt.Orientation.Vertical, objectName="healthSplitter")
        for widget in (norms, histogram):
            splitter.addWidget(widget)
        splitter.setSizes([500, 250])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        self.clear()

    # ------------------------------------------------------------------ data

    def clear(self) -> None:
        """Forget everything shown (a new run)."""
        for plot in (self.grad_plot, self.weight_plot):
            plot.clear_data()
        self._histograms.clear()
        self.stale = False
        self.layer_combo.clear()
        self.epoch_slider.setRange(0, 0)
        self.epoch_slider.setEnabled(False)
        self._histogram_curve.setData([0.0, 1.0], [0.0])
        self.histogram_label.setText("Weight histograms appear after each epoch.")

    def _ensure_layers(self, layers: Sequence[str]) -> None:
        layers = tuple(layers)
        if layers == self._layers:
            return
        # Another model: its own curves, and no legend entries of the last one.
        for plot in (self.grad_plot, self.weight_plot):
            for name in self._layers:
                if name not in layers and plot.has_series(name):
                    plot.remove_series(name)
            for index, name in enumerate(layers):
                if not plot.has_series(name):
                    plot.add_series(name, _colour(index, len(layers)), width=1.5)
        self.layer_legend.clear()
        for index, name in enumerate(layers):
            swatch = QPixmap(self.layer_legend.iconSize())
            swatch.fill(QColor(*_colour(index, len(layers))))
            QListWidgetItem(QIcon(swatch), name, self.layer_legend)
        # As wide as the longest name (and a scroll bar), within limits.
        legend = self.layer_legend
        width = legend.sizeHintForColumn(0) + 2 * legend.frameWidth()
        width += legend.verticalScrollBar().sizeHint().width()
        legend.setFixedWidth(min(max(width, 110), 220))
        self._layers = layers

    def legend_names(self) -> list[str]:
        """The layers the list beside the norm plots names, in order."""
        legend = self.layer_legend
        return [legend.item(i).text() for i in range(legend.count())]

    @Slot(object)
    def add_health(self, ev: LayerHealth) -> None:
        """Append one sample of every layer's norms."""
        self._ensure_layers(ev.layers)
        for name, grad, weight in zip(
            ev.layers, ev.grad_norms, ev.weight_norms, strict=True
        ):
            self.grad_plot.append(name, ev.global_step, grad)
            self.weight_plot.append(name, ev.global_step, weight)

    def load_health(self, samples: Sequence[LayerHealth]) -> None:
        """Plot logged samples (``read_metrics(folder)["health"]``)."""
        for sample in samples:
            self.add_health(sample)
        for plot in (self.grad_plot, self.weight_plot):
            plot.refresh()

    @Slot(object)
    def add_histograms(self, ev: WeightHistograms) -> None:
        """Keep one epoch's histograms and show them (the slider moves there)."""
        self._histograms[ev.epoch] = ev
        if self.layer_combo.count() != len(ev.layers):
            current = self.layer_combo.currentText()
            self.layer_combo.blockSignals(True)
            self.layer_combo.clear()
            self.layer_combo.addItems(list(ev.layers))
            index = self.layer_combo.findText(current)
            self.layer_combo.setCurrentIndex(max(index, 0))
            self.layer_combo.blockSignals(False)
        epochs = sorted(self._histograms)
        self.epoch_slider.blockSignals(True)
        self.epoch_slider.setRange(epochs[0], epochs[-1])
        self.epoch_slider.setValue(ev.epoch)
        self.epoch_slider.blockSignals(False)
        self.epoch_slider.setEnabled(len(epochs) > 1)
        self._show_histogram()

    def load_histograms(self, histograms: Sequence[WeightHistograms]) -> None:
        """Keep logged histograms (``read_metrics(folder)["histograms"]``)."""
        for ev in histograms:
            self.add_histograms(ev)

    def shown_histogram(self) -> tuple[str, int, np.ndarray] | None:
        """(layer, epoch, counts) on show, for tests."""
        ev = self._histograms.get(self.epoch_slider.value())
        layer = self.layer_combo.currentText()
        if ev is None or layer not in ev.layers:
            return None
        return layer, ev.epoch, np.asarray(ev.counts[ev.layers.index(layer)])

    def showEvent(self, event: QShowEvent) -> None:
        """Draw the histogram that arrived while the tab was hidden."""
        super().showEvent(event)
        if self.stale:
            self._show_histogram()

    @Slot()
    def _show_histogram(self) -> None:
        if hidden_in_shown_window(self):
            self.stale = True  # drawn when shown (showEvent)
            return
        self.stale = False
        shown = self.shown_histogram()
        if shown is None:
            return
        layer, epoch, counts = shown
        ev = self._histograms[epoch]
        edges = np.asarray(ev.edges[ev.layers.index(layer)])
        self._histogram_curve.setData(edges, counts.astype(float))
        self.histogram_label.setText(
            f"{layer} after epoch {epoch + 1}: {int(counts.sum()):,} values from "
            f"{edges[0]:.3g} to {edges[-1]:.3g}"
        )
