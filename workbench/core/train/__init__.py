"""Training: the engine and what it measures, freezes and runs on.

engine          prepare a run, then iterate it as a generator of events (iter_fit)
probes          validation, layer health and weight histograms between steps
feature_cache   train only the head on kept features of a frozen backbone
freezing        the freeze tree, the mask, and an optimizer that agrees with it
precision       precision "auto": bf16 where the machine computes it natively
determinism     what a CUDA run needs to repeat exactly
devices         which devices can train here, and why the others cannot
"""

__all__ = [
    "determinism",
    "devices",
    "engine",
    "feature_cache",
    "freezing",
    "precision",
    "probes",
]
