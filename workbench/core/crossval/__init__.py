"""k-fold cross-validation: K fold runs, one group, scores with their spread.

folds      K stratified, seeded, disjoint folds of the training split
held_out   a fold model's predictions on the fold it never trained on
group      the group's folder: its runs, scores and out-of-fold predictions
campaign   the folds run one after another: what both front-ends drive
stats      a score's mean over the folds and its 95% Student's t interval
report     those figures in words
ensemble   the fold models as one averaging model, for export
shared_features  one frozen backbone's features, computed once for all folds
"""

__all__ = [
    "campaign",
    "ensemble",
    "folds",
    "group",
    "held_out",
    "report",
    "shared_features",
    "stats",
]
