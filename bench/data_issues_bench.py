"""Does ``data-issues`` find labels flipped on purpose, and does leaving them out help?

For ``digits`` (and, with ``../shared/data/mnist``, a seeded 10,000-image subset
of MNIST's training images, validated on its 10,000 test images), 5% of the
training labels are flipped to another class at random (seeded). The images
are written as an image folder with ``train/`` and ``val/`` (the validation
labels stay right), and the command runs on it as a user would:
``data-issues --dataset folder --data-dir ROOT --image-size 28 --csv FILE``.

Printed: the likely label errors' precision and recall against the flipped
set; the precision of the top 1% of training images by held-out loss; and the
validation accuracy of three runs of the same recipe and seed: the clean
labels, the flipped ones, and the flipped ones with the flagged images' fixes
made as a user would (``fixes NAME --from-csv``, no file moved): left out, or
relabelled to the suggestion (``train --fixes NAME``).

Targets (issue: where the data is wrong): precision and recall at least 0.5
each; top-1% precision at least 0.6; leaving the flagged images out (or
relabelling them) recovers at least half of the accuracy the noise cost.

Run: ``.venv/bin/python bench/data_issues_bench.py [--datasets digits mnist]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.cli.commands import main as workbench  # noqa: E402
from workbench.core.crossval.group import FoldGroup  # noqa: E402
from workbench.core.data.registry import ImageArrays  # noqa: E402
from workbench.core.data.sources import load_arrays  # noqa: E402

MNIST = ROOT.parent / "shared" / "data" / "mnist"
NOISE = 0.05
SUBSET = 10_000
SEED = 0


def noisy_labels(labels: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``labels`` with :data:`NOISE` of them moved to another class; the rows moved."""
    rng = np.random.default_rng(seed)
    flipped = rng.choice(len(labels), size=round(NOISE * len(labels)), replace=False)
    noisy = labels.copy()
    noisy[flipped] = (noisy[flipped] + rng.integers(1, 10, len(flipped))) % 10
    return noisy, np.sort(flipped)


def write_folder(root: Path, arrays: ImageArrays, train_labels: np.ndarray) -> None:
    """``root/train/<label>/<i>.png`` and ``root/val/<label>/<i>.png``."""
    for split, images, labels in (
        ("train", arrays.train_images, train_labels),
        ("val", arrays.test_images, arrays.test_labels.numpy()),
    ):
        for i, (image, label) in enumerate(zip(images.numpy(), labels, strict=True)):
            folder = root / split / str(int(label))
            folder.mkdir(parents=True, exist_ok=True)
            Image.fromarray(image).save(folder / f"{i:05d}.png")


def val_accuracy(root: Path, runs: Path, *flags: str) -> float:
    """The last validation accuracy of one default-recipe run on ``root``."""
    metrics = runs.parent / f"{root.name}-metrics.json"
    code = workbench(
        [
            "train", "--dataset", "folder", "--data-dir", str(root),
            "--image-size", "28", "--seed", str(SEED), "--quiet",
            "--metrics-json", str(metrics), *flags,
        ]
    )  # fmt: skip
    assert code == 0, code
    return json.loads(metrics.read_text())["final"]["val_accuracy"]


def bench(name: str, arrays: ImageArrays, scratch: Path) -> None:
    import contextlib
    import io
    import os

    runs = scratch / "runs"
    os.environ["PTCORE_RUNS_DIR"] = str(runs)
    labels = arrays.train_labels.numpy()
    noisy, flipped = noisy_labels(labels, SEED)
    root = scratch / f"{name}-noisy"
    write_folder(root, arrays, noisy)
    table = scratch / "issues.csv"
    started = time.perf_counter()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = workbench(
            [
                "data-issues", "--dataset", "folder", "--data-dir", str(root),
                "--image-size", "28", "--seed", str(SEED), "--quiet",
                "--csv", str(table),
            ]
        )  # fmt: skip
    seconds = time.perf_counter() - started
    assert code == 0, out.getvalue()
    with table.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    flagged = {
        int(Path(r["file"]).stem)
        for r in rows
        if r["list"] == "label issue" and r["split"] == "train"
    }
    truth = set(flipped.tolist())
    hits = len(flagged & truth)
    precision = hits / max(1, len(flagged))
    recall = hits / len(truth)
    # The group's held-out predictions, in training order: the folder lists
    # train/<label>/<i>.png class by class, so its order is by (label, i).
    group_path = re.search(r"^group: (\S+)", out.getvalue(), re.MULTILINE)
    assert group_path is not None, out.getvalue()
    group = FoldGroup(Path(group_path.group(1)))
    order = np.lexsort((np.arange(len(noisy)), noisy))  # folder order -> index
    predictions = group.predictions()
    picked = predictions.probabilities[torch.arange(len(order)), predictions.label]
    loss = -torch.log(picked.clamp_min(1e-12)).numpy()
    top = order[np.argsort(-loss, kind="stable")[: round(0.01 * len(order))]]
    top_precision = len(set(top.tolist()) & truth) / len(top)
    print(
        f"{name}: {len(labels):,} training images, {len(truth)} flipped; pass "
        f"{seconds:.1f} s; {len(flagged)} flagged: precision {precision:.2f}, "
        f"recall {recall:.2f} (target 0.5 each); top 1% by loss: precision "
        f"{top_precision:.2f} (target 0.6)"
    )
    clean = scratch / f"{name}-clean"
    write_folder(clean, arrays, labels)
    # The flagged images' fixes, as a user makes them: an overlay, no file moved.
    folder = ["--dataset", "folder", "--data-dir", str(root)]
    with contextlib.redirect_stdout(io.StringIO()):
        for overlay, how in (("left-out", ["--exclude-listed"]), ("relabelled", [])):
            code = workbench(
                ["fixes", overlay, *folder, "--from-csv", str(table), *how]
            )
            assert code == 0, code
        accuracies = {
            "clean": val_accuracy(clean, runs),
            "noisy": val_accuracy(root, runs),
            "flagged left out": val_accuracy(root, runs, "--fixes", "left-out"),
            "flagged relabelled": val_accuracy(root, runs, "--fixes", "relabelled"),
        }
    cost = accuracies["clean"] - accuracies["noisy"]
    print(
        "  validation accuracy: "
        + ", ".join(f"{k} {100 * v:.2f}%" for k, v in accuracies.items())
        + f"; the noise cost {100 * cost:.2f} points"
    )
    for fix in ("flagged left out", "flagged relabelled"):
        recovered = accuracies[fix] - accuracies["noisy"]
        share = recovered / cost if cost > 0 else float("nan")
        print(
            f"  {fix}: recovered {100 * recovered:.2f} points ({share:.0%} of the "
            "cost; target 50%)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["digits", "mnist"])
    args = parser.parse_args()
    for name in args.datasets:
        if name == "digits":
            arrays = load_arrays("digits", None, download=False)
        elif not MNIST.is_dir():
            print(f"mnist: skipped, {MNIST} is missing")
            continue
        else:
            full = load_arrays("mnist", str(MNIST), download=False)
            rows = torch.randperm(
                len(full.train_labels), generator=torch.Generator().manual_seed(SEED)
            )[:SUBSET]
            arrays = ImageArrays(
                full.train_images[rows],
                full.train_labels[rows],
                full.test_images,
                full.test_labels,
            )
        with tempfile.TemporaryDirectory() as scratch:
            bench(name, arrays, Path(scratch))


if __name__ == "__main__":
    main()
