"""Views that skip their work while hidden and catch up when shown.

A run's epoch end feeds every tab: the confusion matrix, the gallery, the
weight histograms. Rebuilding a tab nobody sees blocks the GUI thread for
nothing (tens of milliseconds an epoch on a busy machine), so a view in a hidden
tab of a window on screen only keeps the data and marks itself stale; its
``showEvent`` draws the latest data. A view that is not in a shown window (a
panel on its own, a window not shown yet) updates at once, as before.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget


def hidden_in_shown_window(widget: QWidget) -> bool:
    """True when ``widget`` is off screen in a window that is on screen.

    That is a page of a tab widget that is not the current one (or a folded
    part of a shown window): nobody sees what it would draw now.
    """
    return not widget.isVisible() and widget.window().isVisible()
