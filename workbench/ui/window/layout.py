"""The window's columns and tabs, sized for the window they are in.

Three columns side by side in ``mainSplitter``: the settings (a column that
scrolls), the model with its freeze tree, and the tabs (plots, Draw, ...). The
tabs have priority. Until the user drags a handle the columns follow the
window's width (:func:`column_sizes`): the tabs first get what the Draw tab
needs, the side columns share the rest down to their minimums, and on a window
too narrow for all three the model column folds away (its handle drags it back).

Nothing here changes width with the run state: the side columns' minimums are
fixed when they are built, and texts that change with the run wrap or keep
their space, so Start, Pause and the end of a run never move the plots.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QEvent, QObject, QSettings, QSize, Qt
from PySide6.QtWidgets import (
    QLabel,
    QScrollArea,
    QSplitter,
    QStatusBar,
    QStyle,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from PySide6.QtGui import QResizeEvent

DEFAULT_SIZE = QSize(1500, 920)
# Small enough for an 800x600 screen; the window's layout fits in it.
MINIMUM_SIZE = QSize(800, 560)
# Shares of the width the side columns take when there is room; the tabs get
# the rest (at 1500 px: about 420, 375 and 700 px).
SETTINGS_SHARE = 0.28
MODEL_SHARE = 0.25
# The tab widget's pane frame around a page, both sides together.
_TAB_FRAME = 8


def column_sizes(
    room: int, settings_min: int, model_min: int, tabs_need: int
) -> list[int]:
    """Widths of [settings, model, tabs] for ``room`` pixels (handles excluded).

    The tabs get at least ``tabs_need`` where the side columns can give it
    without going below their minimums; else the model column folds (0) and
    the settings column keeps its minimum.
    """
    settings = max(settings_min, round(room * SETTINGS_SHARE))
    model = max(model_min, round(room * MODEL_SHARE))
    if room - settings - model >= tabs_need:
        return [settings, model, room - settings - model]
    if room - settings_min - model_min >= tabs_need:
        # Narrow both sides, each no further than its minimum.
        excess = settings + model - (room - tabs_need)
        slack_s, slack_m = settings - settings_min, model - model_min
        take_s = min(slack_s, round(excess * slack_s / (slack_s + slack_m)))
        settings -= take_s
        model -= excess - take_s
        return [settings, model, room - settings - model]
    settings = min(settings, max(settings_min, room - tabs_need))
    return [settings, 0, room - settings]


def _min_width(widget: QWidget) -> int:
    # What a layout holds a widget to (Qt's qSmartMinSize, for the width).
    return max(widget.minimumWidth(), widget.minimumSizeHint().width())


class ColumnSplitter(QSplitter):
    """The three columns; their widths follow the window until a handle moves.

    ``follows_window`` turns off when the user drags a handle or code sets the
    sizes (a restored layout); the window then keeps those widths.
    """

    def __init__(self, tabs_need: Callable[[], int]) -> None:
        super().__init__(Qt.Orientation.Horizontal, objectName="mainSplitter")
        self._tabs_need = tabs_need
        self.follows_window = True
        self.splitterMoved.connect(self._on_splitter_moved)

    def fitted_sizes(self, width: int) -> list[int]:
        """The column widths for a splitter ``width`` pixels wide."""
        room = width - self.handleWidth() * (self.count() - 1)
        settings, model = (_min_width(self.widget(i)) for i in (0, 1))
        return column_sizes(room, settings, model, self._tabs_need())

    def fits(self, sizes: Sequence[int], width: int) -> bool:
        """True when columns of ``sizes`` fit a splitter ``width`` pixels wide."""
        handles = self.handleWidth() * (self.count() - 1)
        return sum(sizes) + handles <= width

    def setSizes(self, sizes: Sequence[int]) -> None:
        """Set the widths; from now on they no longer follow the window."""
        self.follows_window = False
        super().setSizes(sizes)

    def follow_window(self) -> None:
        """Size the columns for the window again, now and on every resize."""
        self.follows_window = True
        super().setSizes(self.fitted_sizes(self.width()))

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Refit the columns to the new width while they follow the window."""
        super().resizeEvent(event)
        if self.follows_window:
            super().setSizes(self.fitted_sizes(event.size().width()))

    def _on_splitter_moved(self, _pos: int, _index: int) -> None:
        self.follows_window = False

    def model_column_shown(self) -> bool:
        """False while the model and freeze tree column is folded away."""
        return self.sizes()[1] > 0

    def show_model_column(self, show: bool) -> None:
        """Unfold the model column (its minimum width, from the tabs) or fold it."""
        settings, model, tabs = self.sizes()
        if show == (model > 0):
            return
        if show:
            model = _min_width(self.widget(1))
            self.setSizes([settings, model, max(tabs - model, 0)])
        else:
            self.setSizes([settings, 0, tabs + model])


@dataclass(frozen=True)
class WindowLayout:
    """The widgets :func:`build_layout` made that the window keeps."""

    main_splitter: ColumnSplitter
    plot_splitter: QSplitter
    tabs: QTabWidget
    draw_page: QScrollArea
    settings_scroll: QScrollArea
    status_label: QLabel


def _scrolling(widget: QWidget, name: str) -> QScrollArea:
    area = QScrollArea(objectName=name)
    area.setWidget(widget)
    area.setWidgetResizable(True)
    return area


def _scrollbar_width(area: QScrollArea) -> int:
    return area.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, area)


class FollowContentWidth(QObject):
    """Keeps a vertical scroll area at least as wide as its content's minimum."""

    def __init__(self, area: QScrollArea) -> None:
        super().__init__(area)
        self.area = area
        area.widget().installEventFilter(self)
        self.fit()

    def fit(self) -> None:
        area = self.area
        need = (
            area.widget().minimumSizeHint().width()
            + _scrollbar_width(area)
            + 2 * area.frameWidth()
        )
        if area.minimumWidth() != need:
            area.setMinimumWidth(need)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.fit()
        return False


class CurvesPage(Protocol):
    """:class:`~workbench.ui.plots.curves.TrainingCurves` as the layout places it."""

    plot_splitter: QSplitter

    def build_page(self, settings: QSettings | None = None) -> QWidget: ...


class LayoutWindow(Protocol):
    """What :func:`build_layout` uses of the window: its panels, as widgets.

    Here rather than in :mod:`workbench.ui.window.parts`, which imports the
    panels: they import this module (through ``window.state``).
    """

    training_panel: QWidget
    data_panel: QWidget
    device_panel: QWidget
    loader_panel: QWidget
    speed_panel: QWidget
    model_panel: QWidget
    freeze_panel: QWidget
    draw_panel: QWidget
    evaluation_panel: QWidget
    health_panel: QWidget
    runs_panel: QWidget
    code_view: QWidget
    curves: CurvesPage

    def setCentralWidget(self, widget: QWidget) -> None: ...
    def statusBar(self) -> QStatusBar: ...


def build_layout(window: LayoutWindow, stored: QSettings | None = None) -> WindowLayout:
    """Put the window's panels and plots into columns and tabs; set the centre.

    ``window`` is the ``MainWindow``, with its panels and ``curves`` already
    built; ``stored`` (the window's QSettings) keeps the curves' smoothing.
    """
    settings_column = QWidget()
    column = QVBoxLayout(settings_column)
    for panel in (
        window.training_panel,
        window.data_panel,
        window.device_panel,
        window.loader_panel,
        window.speed_panel,
    ):
        column.addWidget(panel)
    column.addStretch(1)
    settings = _scrolling(settings_column, "settingsScroll")
    settings.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    # Never narrower than its content, as rows come and go (an image folder's):
    # the panels would be cut at the right, or scrolled sideways.
    FollowContentWidth(settings)

    model_column = QWidget(objectName="modelColumn")
    layout = QVBoxLayout(model_column)
    layout.addWidget(window.model_panel)
    layout.addWidget(window.freeze_panel, 1)

    curves_page = window.curves.build_page(stored)  # smoothing above the plots

    tabs = QTabWidget(objectName="mainTabs")
    tabs.addTab(curves_page, "Training curves")
    # Pages scroll rather than force their minimum size on the whole window.
    draw_page = _scrolling(window.draw_panel, "drawPage")
    tabs.addTab(draw_page, "Draw a digit")
    tabs.addTab(_scrolling(window.evaluation_panel, "evaluationPage"), "Evaluation")
    tabs.addTab(_scrolling(window.health_panel, "healthPage"), "Layer health")
    tabs.addTab(_scrolling(window.runs_panel, "runsPage"), "Runs")
    tabs.addTab(_scrolling(window.code_view, "codePage"), "Code")

    def tabs_need() -> int:
        # The Draw tab whole, beside the scroll bar its page may need for height.
        return (
            _min_width(window.draw_panel)
            + _scrollbar_width(draw_page)
            + 2 * draw_page.frameWidth()
            + _TAB_FRAME
        )

    splitter = ColumnSplitter(tabs_need)
    splitter.addWidget(settings)
    splitter.addWidget(model_column)
    splitter.addWidget(tabs)
    for i, (stretch, collapsible) in enumerate(((0, False), (0, True), (1, False))):
        splitter.setStretchFactor(i, stretch)
        splitter.setCollapsible(i, collapsible)
    splitter.handle(2).setToolTip("Drag to show or hide the model and freeze tree")
    window.setCentralWidget(splitter)

    status_label = QLabel(objectName="statusLabel")
    window.statusBar().addWidget(status_label, 1)
    return WindowLayout(
        main_splitter=splitter,
        plot_splitter=window.curves.plot_splitter,
        tabs=tabs,
        draw_page=draw_page,
        settings_scroll=settings,
        status_label=status_label,
    )


def fit_window(window: QWidget, size: QSize) -> None:
    """Resize ``window`` to ``size``, no smaller than its minimum, within its screen."""
    screen = window.screen()
    available = screen.availableGeometry().size() if screen is not None else size
    window.resize(size.boundedTo(available).expandedTo(window.minimumSize()))
