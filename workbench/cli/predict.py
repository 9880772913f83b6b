"""``predict``: each image's class and top probabilities, from a checkpoint.

An argument may be a folder: its image files are read (subfolders too, sorted).
``--csv`` writes the table (file, class, confidence, the next classes, error)
instead of a line per image. A file that cannot be read is one line on stderr
and is skipped; the exit code is then 1.

Predict reads no labels (a subfolder is only a place to look for images), so a
fixes overlay could change nothing it says: ``--fixes`` is refused, saying so.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from torch import nn
from tqdm import tqdm

from workbench.cli.console import say
from workbench.cli.run_outputs import OutputFile
from workbench.core import config as C
from workbench.core.checkpoints.io import (
    config_of,
    eval_model,
    info_of,
    load_checkpoint,
)
from workbench.core.data.registry import DatasetInfo
from workbench.core.models.source import SHA_KEY, model_file_change
from workbench.core.predict import (
    PHOTO_DATASETS,
    Prediction,
    load_image,
    photo_input,
    predict,
    preprocess,
)
from workbench.core.predict_batch import (
    FileResult,
    gather_files,
    read_files,
    write_csv,
)
from workbench.core.runs.best_or_latest import (
    pick_checkpoint,
    run_folder_of,
    which_weights,
)

# A progress bar (on a terminal) from this many files on.
PROGRESS_FROM = 20
NO_LABELS = (
    "--fixes: predict classifies images and reads no labels, so a fixes overlay "
    "changes nothing it says; give the fixes to train or check-data"
)


def add_predict_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of ``predict`` beyond the checkpoint and the images."""
    parser.add_argument(
        "--csv",
        metavar="PATH",
        help="write a table of every file (file, class, confidence, the next "
        "classes, error) instead of a line per image",
    )
    # Taken only to say why it is refused (not listed: it never works).
    parser.add_argument("--fixes", metavar="NAME", help=argparse.SUPPRESS)


class CsvFile(OutputFile):
    """Where ``--csv`` writes the table; a folder is refused before reading."""

    example_name = "predictions.csv"

    def __init__(self, path: str | Path) -> None:
        super().__init__("--csv", path, _write_table)
        parent = self.path.parent
        if parent.exists() and not parent.is_dir():
            raise C.ConfigError(f"--csv {self.path}: {parent} is a file, not a folder")


class CheckpointReader:
    """Reads one image file as the checkpoint's run made its data."""

    def __init__(self, model: nn.Module, cfg: C.TrainConfig, info: DatasetInfo) -> None:
        self.model = model
        self.cfg = cfg
        self.info = info
        self.class_names = tuple(info.class_names)

    def read_file(self, path: Path) -> Prediction:
        """The model's probabilities for ``path``; ``PredictError`` if unreadable."""
        cfg = self.cfg
        if cfg.dataset in PHOTO_DATASETS:
            batch = photo_input(path, self.info)
        else:
            image = load_image(path)
            batch = preprocess(image, cfg.style_dataset, cfg.model, cfg.weights)
        return predict(self.model, batch, self.class_names)[0]


def cmd_predict(args: argparse.Namespace) -> int:
    """Print each image's predicted class and top probabilities (or a CSV)."""
    if args.fixes is not None:
        raise C.ConfigError(NO_LABELS)
    table = None if args.csv is None else CsvFile(args.csv)
    checkpoint = pick_checkpoint(args.checkpoint, args.best)
    payload = load_checkpoint(checkpoint)
    if run_folder_of(checkpoint) is not None:  # a run's latest or best: say which
        which = which_weights(checkpoint, payload.get("epoch"))
        sys.stderr.write(f"weights: {checkpoint}, {which}\n")
    cfg = config_of(payload)
    info = info_of(payload)
    changed = model_file_change(cfg.model, payload.get(SHA_KEY), checkpoint)
    if changed is not None:
        sys.stderr.write(f"warning: {changed}\n")
    reader = CheckpointReader(eval_model(payload), cfg, info)
    files, empty = gather_files(args.images)
    for folder in empty:
        sys.stderr.write(f"{folder}: no image files in this folder\n")
    results = _read_all(files, reader, args.top, lines=table is None)
    skipped = sum(result.skipped for result in results)
    if table is not None:
        failed = table.write_at_end((results, args.top))
        if failed is not None:
            sys.stderr.write(failed + "\n")
            return 1
        say(f"{table.path}: {len(results) - skipped} images read, {skipped} skipped")
    return 1 if skipped or empty else 0


def _read_all(
    files: list[Path], reader: CheckpointReader, top: int, *, lines: bool
) -> list[FileResult]:
    """Read every file: a line each on stdout if ``lines``, each skip on stderr."""
    show_bar = len(files) >= PROGRESS_FROM and sys.stderr.isatty()
    bar = tqdm(total=len(files), unit="image", disable=not show_bar, leave=False)

    def progress(done: int, _total: int) -> None:
        bar.update(done - bar.n)

    results = []
    try:
        for result in read_files(files, reader, top=top, progress=progress):
            results.append(result)
            if result.skipped:
                tqdm.write(f"{result.path}: {result.error}", file=sys.stderr)
            elif lines:
                ranked = "  ".join(f"{name} {100 * p:.1f}%" for name, p in result.top)
                say(f"{result.path}: {result.class_name}   ({ranked})")
    finally:
        bar.close()
    return results


def _write_table(path: Path, value: tuple[list[FileResult], int]) -> None:
    results, top = value
    write_csv(path, results, top=top)
