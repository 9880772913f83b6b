"""The widgets of the "Draw a digit" tab, in one import.

Each lives in a module of its own: the canvas in :mod:`workbench.ui.digit_canvas`,
the bars in :mod:`workbench.ui.probability_bars`, the model-input preview in
:mod:`workbench.ui.input_preview`. They only draw and show numpy arrays; turning
the canvas into a model input and predicting is someone else's job
(``core/predict.py``).
"""

from __future__ import annotations

from workbench.ui.digit_canvas import CANVAS_SIDE, DigitCanvas
from workbench.ui.input_preview import InputPreview
from workbench.ui.probability_bars import ProbabilityBars

__all__ = ["CANVAS_SIDE", "DigitCanvas", "InputPreview", "ProbabilityBars"]
