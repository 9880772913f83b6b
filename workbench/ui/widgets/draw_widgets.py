"""The widgets of the "Draw a digit" tab, in one import.

Each lives in a module of its own: the canvas in
:mod:`workbench.ui.widgets.digit_canvas`, the bars in
:mod:`workbench.ui.plots.probability_bars`, the model-input preview in
:mod:`workbench.ui.widgets.input_preview`. They only draw and show numpy arrays;
turning the canvas into a model input and predicting is someone else's job
(``core/predict.py``). :class:`WrappingLabel` is the tab's wrapped text.
"""

from __future__ import annotations

from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel

from workbench.ui.plots.probability_bars import ProbabilityBars
from workbench.ui.widgets.digit_canvas import CANVAS_SIDE, DigitCanvas
from workbench.ui.widgets.input_preview import InputPreview

__all__ = [
    "CANVAS_SIDE",
    "DigitCanvas",
    "InputPreview",
    "ProbabilityBars",
    "WrappingLabel",
]


class WrappingLabel(QLabel):
    """A word-wrapped label that does not ask for height-for-width layout.

    In a scroll area, one height-for-width child makes the whole page as tall
    as its preferred size (a scroll bar for nothing); the page has room to wrap.
    """

    def __init__(self, name: str) -> None:
        super().__init__(objectName=name)
        self.setWordWrap(True)

    def hasHeightForWidth(self) -> bool:
        """Never: see the class docstring."""
        return False

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Ask for the height the text needs at this width, so no line is cut."""
        super().resizeEvent(event)
        self._fit_height()

    def setText(self, text: str) -> None:
        """Show ``text``, as tall as it wraps at the current width."""
        super().setText(text)
        self._fit_height()

    def _fit_height(self) -> None:
        needed = self.heightForWidth(self.width()) if self.text() else 0
        if needed > 0 and needed != self.minimumHeight():
            self.setMinimumHeight(needed)
