"""Training: the engine and what it measures, freezes and runs on.

engine          prepare a run, then iterate it as a generator of events (iter_fit)
probes          validation, layer health and weight histograms between steps
best_epoch      which epoch was best, and when to stop early, from the history
class_weights   the loss's class weights (rare classes), and the loss of a step
class_scores    each class's precision, recall, F1 and their averages
feature_cache   train only the head on kept features of a frozen backbone
freezing        the freeze tree, the mask, and an optimizer that agrees with it
precision       precision "auto": bf16 where the machine computes it natively
determinism     what a CUDA run needs to repeat exactly
devices         which devices can train here, and why the others cannot
"""

__all__ = [
    "best_epoch",
    "class_scores",
    "class_weights",
    "determinism",
    "devices",
    "engine",
    "feature_cache",
    "freezing",
    "precision",
    "probes",
]
