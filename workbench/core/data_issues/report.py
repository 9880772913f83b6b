"""What a data-issues pass found, over every image, and its rows for a file.

Five lists: likely label errors (confident learning, ranked), top losses,
most-confused class pairs, duplicate pairs across classes or across the
training and validation splits (exact duplicates anywhere), and stubborn
errors (images every finished run on the same data got wrong; the score is
how many runs).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from workbench.core.data_issues.duplicates import DuplicatePair, find_duplicates
from workbench.core.data_issues.images import NamedImages
from workbench.core.data_issues.label_errors import LabelIssues, find_label_issues
from workbench.core.data_issues.rankings import (
    ConfusedPair,
    confusion,
    losses,
    most_confused,
    top_losses,
)
from workbench.core.data_issues.stubborn import Stubborn

CSV_FIELDS = ("file", "split", "list", "given", "suggested", "score")


@dataclass(frozen=True, slots=True)
class Flagged:
    """One image on one list: a row of the CSV file."""

    file: str
    split: str
    list: str
    given: str
    suggested: str
    score: float


@dataclass(frozen=True)
class DataIssues:
    """Every image (training then validation) and the lists over them."""

    class_names: tuple[str, ...]
    names: list[str]
    splits: np.ndarray  # "train" or "val" per image
    labels: np.ndarray
    probabilities: np.ndarray
    losses: np.ndarray
    label_issues: LabelIssues
    confusion: np.ndarray
    confused: list[ConfusedPair]
    duplicates: list[DuplicatePair]
    # Images every finished run on the same data got wrong (None: not looked for)
    stubborn: Stubborn | None = None

    def top_losses(self, count: int) -> np.ndarray:
        """The ``count`` images of highest loss, highest first."""
        return top_losses(self.losses)[:count]

    def rows(self, top: int) -> list[Flagged]:
        """Each label issue, the ``top`` losses and each duplicate, as rows."""
        names = self.class_names
        rows = [
            Flagged(
                self.names[i],
                str(self.splits[i]),
                "label issue",
                names[given],
                names[suggested],
                float(score),
            )
            for i, given, suggested, score in zip(
                self.label_issues.index,
                self.label_issues.given,
                self.label_issues.suggested,
                self.label_issues.score,
                strict=True,
            )
        ]
        for i in self.top_losses(top):
            predicted = int(self.probabilities[i].argmax())
            rows.append(
                Flagged(
                    self.names[i],
                    str(self.splits[i]),
                    "top loss",
                    names[self.labels[i]],
                    names[predicted],
                    float(self.losses[i]),
                )
            )
        if self.stubborn is not None:
            for i in self.stubborn.rows:
                predicted = int(self.probabilities[i].argmax())
                rows.append(
                    Flagged(
                        self.names[i],
                        str(self.splits[i]),
                        "stubborn error",
                        names[self.labels[i]],
                        names[predicted],
                        float(len(self.stubborn.runs)),
                    )
                )
        for pair in self.duplicates:
            kind = "exact duplicate" if pair.exact else "near duplicate"
            for me, other in ((pair.first, pair.second), (pair.second, pair.first)):
                rows.append(
                    Flagged(
                        self.names[me],
                        str(self.splits[me]),
                        f"{kind} of {self.names[other]}",
                        names[self.labels[me]],
                        names[self.labels[other]],
                        pair.similarity,
                    )
                )
        return rows

    def csv_text(self, top: int) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(CSV_FIELDS)
        for row in self.rows(top):
            writer.writerow(
                [
                    row.file,
                    row.split,
                    row.list,
                    row.given,
                    row.suggested,
                    f"{row.score:.6g}",
                ]
            )
        return buffer.getvalue()

    def json_text(self, top: int) -> str:
        document: dict[str, Any] = {
            "images": len(self.names),
            "flagged": [_row(row) for row in self.rows(top)],
            "confused_pairs": [
                {
                    "given": self.class_names[p.given],
                    "predicted": self.class_names[p.predicted],
                    "count": p.count,
                }
                for p in self.confused
            ],
        }
        return json.dumps(document, indent=1) + "\n"


def _row(row: Flagged) -> dict[str, Any]:
    return {field: getattr(row, field) for field in CSV_FIELDS}


def find_data_issues(
    images: NamedImages,
    train_probabilities: np.ndarray,
    val_probabilities: np.ndarray,
    class_names: tuple[str, ...],
    rank_by: str = "self_confidence",
    stubborn: Stubborn | None = None,
) -> DataIssues:
    """Every list over ``images``, from out-of-sample probabilities of each image."""
    arrays = images.arrays
    labels = np.concatenate(
        [arrays.train_labels.numpy(), arrays.test_labels.numpy()]
    ).astype(np.int64)
    probabilities = np.concatenate([train_probabilities, val_probabilities])
    splits = np.array(
        ["train"] * len(arrays.train_labels) + ["val"] * len(arrays.test_labels)
    )
    matrix = confusion(probabilities, labels)
    everything = torch.cat([arrays.train_images, arrays.test_images])
    duplicates = [
        pair
        for pair in find_duplicates(everything)
        if pair.exact
        or labels[pair.first] != labels[pair.second]
        or splits[pair.first] != splits[pair.second]
    ]
    return DataIssues(
        class_names=class_names,
        names=[*images.train_names, *images.val_names],
        splits=splits,
        labels=labels,
        probabilities=probabilities,
        losses=losses(probabilities, labels),
        label_issues=find_label_issues(probabilities, labels, rank_by),
        confusion=matrix,
        confused=most_confused(matrix),
        duplicates=duplicates,
        stubborn=stubborn,
    )
