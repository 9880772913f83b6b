"""Finding what is wrong in the data, from predictions no model made on its own
training images.

images        the images a pass looks at, each named as the user can find it
held_out      out-of-sample probabilities: the folds' and their ensemble's
label_errors  likely label errors by confident learning (written from the paper)
rankings      top losses and the most-confused class pairs
duplicates    exact and near-duplicate images
stubborn      images every finished run on the same data got wrong
report        the lists over every image, and their CSV and JSON rows
"""

__all__ = [
    "duplicates",
    "held_out",
    "images",
    "label_errors",
    "rankings",
    "report",
    "stubborn",
]
