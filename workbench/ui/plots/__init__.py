"""Plots and painted charts: what draws numbers as pictures.

live_plot         live plots that stay smooth for millions of points, one
                  shared paint budget for all of them
curves            the three training plots: loss, accuracy per epoch, speed
overlay           past runs drawn over the live plots
stepped_view      a view box whose automatic range moves in steps
view_grid         a live plot's grid lines, painted straight onto its view
confusion_matrix  the Evaluation tab's confusion-matrix heat map
class_accuracy    the Evaluation tab's per-class accuracy bars
probability_bars  the Draw tab's probability bars
"""

__all__ = [
    "class_accuracy",
    "confusion_matrix",
    "curves",
    "live_plot",
    "overlay",
    "probability_bars",
    "stepped_view",
    "view_grid",
]
