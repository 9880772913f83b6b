"""The Layer health tab: every layer named, no legend over the curves, plain axes."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRect
from PySide6.QtWidgets import QListWidget

from workbench.core.events import LayerHealth
from workbench.ui.panels.health import LayerHealthPanel, _colour

from .test_curves import rgb

pytestmark = pytest.mark.gui

# The small CNN's layers: a fine-tune trains only the last one, the head.
LAYERS = (
    "block1.0",
    "block1.2",
    "block2.0",
    "block2.1",
    "block3.0",
    "block3.2",
    "block4.0",
    "block4.2",
    "head",
)


@pytest.fixture
def panel(qtbot):
    widget = LayerHealthPanel()
    qtbot.addWidget(widget)
    widget.resize(700, 500)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def fine_tune(panel: LayerHealthPanel) -> None:
    """The body frozen (gradient 0), the head learning with the largest norm."""
    rng = np.random.default_rng(0)
    for step in range(0, 400, 10):
        grads = (0.0,) * 8 + (0.5 + 0.1 * float(rng.random()),)
        weights = tuple(3.0 + i + 0.01 * step for i in range(len(LAYERS)))
        panel.add_health(LayerHealth(step, LAYERS, grads, weights))
    for plot in (panel.grad_plot, panel.weight_plot):
        plot.refresh()


def rect_in(panel, widget, rect) -> QRect:
    return QRect(widget.mapTo(panel, rect.topLeft()), rect.size())


def test_every_layer_is_named_and_no_legend_covers_the_head(panel):
    fine_tune(panel)
    legend = panel.findChild(QListWidget, "layerLegend")
    assert panel.legend_names() == list(LAYERS)  # the head too, last
    assert legend.isVisible()
    head = legend.item(len(LAYERS) - 1)
    assert head.icon().pixmap(18, 4).toImage().pixelColor(9, 2).getRgb()[:3] == (
        _colour(len(LAYERS) - 1, len(LAYERS))
    )
    legend.scrollToItem(head)  # a deep model's list scrolls to it
    assert legend.viewport().rect().contains(legend.visualItemRect(head))
    for plot in (panel.grad_plot, panel.weight_plot):
        item = plot.getPlotItem()
        # No legend box over the data: it named only the layers it had room for.
        assert item.legend is None or not item.legend.items
        assert plot.legend_text() == ""  # nor a line of names above it
        # The list is beside the plots, not over them.
        view = item.getViewBox()
        view_rect = plot.mapFromScene(view.sceneBoundingRect()).boundingRect()
        assert not rect_in(panel, legend, legend.rect()).intersects(
            rect_in(panel, plot, view_rect)
        )
    # The head's gradient curve shows over its last quarter (steps 290 to 390),
    # at the right edge where a legend used to sit.
    plot = panel.grad_plot
    view = plot.getPlotItem().getViewBox()
    box = plot.mapFromScene(view.sceneBoundingRect()).boundingRect()
    left, right = (
        plot.mapFromScene(view.mapViewToScene(QPointF(step, 0.0))).x()
        for step in (290, 390)
    )
    pixels = rgb(plot.grab().toImage())[box.top() : box.bottom(), left:right]
    colour = np.array(_colour(len(LAYERS) - 1, len(LAYERS)))
    assert (np.abs(pixels - colour).max(axis=2) < 30).any(axis=0).all()


def test_health_axes_show_no_scale_factor(panel):
    """Tiny norms and an empty histogram: no "(x0.001)" in any axis label."""
    rng = np.random.default_rng(1)
    for step in range(0, 50, 10):
        grads = tuple(0.0004 * float(rng.random()) for _ in LAYERS)
        weights = tuple(0.0002 + 0.00001 * i for i in range(len(LAYERS)))
        panel.add_health(LayerHealth(step, LAYERS, grads, weights))
    for plot in (panel.grad_plot, panel.weight_plot, panel.histogram_plot):
        if hasattr(plot, "refresh"):
            plot.refresh()
        for name in ("left", "bottom"):
            axis = plot.getPlotItem().getAxis(name)
            assert "(x" not in axis.labelString(), (plot.objectName(), name)
